"""The category shapes (decisions §5): an id by the product id rule and a name of 1 to 64 characters."""

from typing import Annotated

from pydantic import AfterValidator, Strict

from .common import Identifier, Shape, one_line_name


def _category_name(name: str) -> str:
    return one_line_name(name, 1, 64, "must be 1 to 64 characters without newlines or tabs")


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
