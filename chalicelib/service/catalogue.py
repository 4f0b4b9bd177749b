"""Use cases of the catalogue: products and categories."""
import datetime as dt
from dataclasses import dataclass

from ..domain.errors import Conflict, NotFound, PreconditionFailed, invalid
from ..domain.identifiers import ID_RULE, is_identifier
from ..lazy import lazy
from ..store import categories, pricing, product_images, products, table
from ..store.paging import Page

# Validation needs pydantic; reads do not, so a cold GET never imports it.
rules = lazy("chalicelib.domain.product")
shapes = lazy("chalicelib.domain.common")
category_shapes = lazy("chalicelib.domain.category")

PATCH_ATTEMPTS = 3


@dataclass(frozen=True)
class ProductView:
    data: dict
    revision: str


def get_product(account: str, product_id: str) -> ProductView:
    stored = products.get(account, product_id) if is_identifier(product_id) else None
    if stored is None:
        raise NotFound(f"product {product_id} does not exist")
    return ProductView(stored.data, stored.revision)


def list_products(account: str, limit: int, cursor: str | None) -> Page:
    return products.list_page(account, limit, cursor)


def _save(account: str, data: dict, **condition) -> str:
    """Save the product and, in the same write, queue its image for download (chalicelib/jobs/images.py)."""
    extra_set, extra_remove = product_images.marking(account, data, dt.datetime.now(dt.timezone.utc))
    return products.save(account, data, extra_set=extra_set, extra_remove=extra_remove, **condition)


def create_product(account: str, body) -> ProductView:
    data = rules.validate_product(body)
    revision = _save(account, data, create_only=True)
    return ProductView(data, revision)


def put_product(account: str, product_id: str, body, if_match: str | None) -> ProductView:
    if not is_identifier(product_id):
        raise invalid("id", ID_RULE)
    data = rules.validate_product(body, product_id)
    return ProductView(data, _save(account, data, expected_revision=if_match))


def patch_product(account: str, product_id: str, patch, if_match: str | None) -> ProductView:
    """Merge and save, conditional on the revision read; a concurrent change makes us read and merge again."""
    for _ in range(PATCH_ATTEMPTS):
        current = products.get(account, product_id, consistent=True) if is_identifier(product_id) else None
        if current is None:
            raise NotFound(f"product {product_id} does not exist")
        if if_match is not None and if_match != current.revision:
            raise PreconditionFailed("the product was changed since the ETag given in If-Match")
        data = rules.validate_product(rules.merge_patch(table.json_numbers(current.data), patch), product_id)
        try:
            return ProductView(data, _save(account, data, expected_revision=current.revision))
        except PreconditionFailed:
            if if_match is not None:
                raise
    raise PreconditionFailed("the product kept changing while it was being patched; try again")


def delete_product(account: str, product_id: str, if_match: str | None) -> None:
    if not is_identifier(product_id):
        raise NotFound(f"product {product_id} does not exist")
    products.delete(account, product_id, if_match)
    pricing.delete_all_of_product(account, product_id)


def put_category(account: str, category_id: str, body) -> dict:
    if not is_identifier(category_id):
        raise invalid("id", ID_RULE)
    category = shapes.parse(category_shapes.CategoryBody, body)
    if category.id is not None and category.id != category_id:
        raise invalid("id", "must equal the id in the URL")
    return categories.put(account, category_id, category.name)


def create_category(account: str, body) -> dict:
    """POST /categories, as barmate catalogue-sync clients send it: the id is in the body (decisions §5)."""
    category = shapes.parse(category_shapes.NewCategory, body)
    created = categories.create(account, category.id, category.name)
    if created is categories.TAKEN:
        raise Conflict(f"category {category.id} already exists; use PUT to replace it")
    return created


def get_category(account: str, category_id: str) -> dict:
    category = categories.get(account, category_id) if is_identifier(category_id) else None
    if category is None:
        raise NotFound(f"category {category_id} does not exist")
    return category


def list_categories(account: str, limit: int, cursor: str | None) -> Page:
    return categories.list_page(account, limit, cursor)


def delete_category(account: str, category_id: str) -> None:
    get_category(account, category_id)
    if products.any_in_category(account, category_id):
        raise Conflict(f"category {category_id} is used by products and cannot be deleted")
    categories.delete(account, category_id)
