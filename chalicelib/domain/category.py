"""The category shapes (decisions §5): an id by the product id rule and a name of 1 to 64 characters."""

from typing import Annotated

from pydantic import AfterValidator, Strict

from .common import Identifier, Shape


def _category_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= 64 or any(c in name for c in "\n\r\t"):
        raise ValueError("must be 1 to 64 characters without newlines or tabs")
    return name


class CategoryBody(Shape):
    id: Identifier | None = None
    name: Annotated[str, Strict(), AfterValidator(_category_name)]


class NewCategory(CategoryBody):
    """POST /categories: the id is required in the body."""

    id: Identifier


class Category(Shape):
    id: Identifier
    name: str


class CategoryList(Shape):
    categories: list[Category]
    cursor: str | None = None
