"""Use cases of the catalogue: products and categories."""
from dataclasses import dataclass

from ..domain.errors import Conflict, NotFound, PreconditionFailed, invalid
from ..domain.identifiers import ID_RULE, is_identifier
from ..lazy import lazy
from ..store import products, rendered, table
from ..store.paging import Page
from .paging import paged
from . import clock

# Validation needs pydantic; reads do not, so a cold GET never imports it. Nor does a product read need the
# category and pricing stores.
categories = lazy("chalicelib.store.categories")
pricing = lazy("chalicelib.store.pricing")
product_rules = lazy("chalicelib.domain.product")
shapes = lazy("chalicelib.domain.common")
category_shapes = lazy("chalicelib.domain.category")

PATCH_ATTEMPTS = 3
STALE_ETAG = "the product was changed since the ETag given in If-Match"


def _product_gone(product_id: str) -> NotFound:
    return NotFound(f"product {product_id} does not exist")


@dataclass(frozen=True)
class ProductView:
    """A product as the API answers it: `body` is the document, or its JSON text when read (as stored)."""

    body: dict | str
    revision: str

    @property
    def data(self) -> dict:
        return self.body if isinstance(self.body, dict) else rendered.parse(self.body)


def get_product(account: str, product_id: str) -> ProductView:
    stored = products.get(account, product_id) if is_identifier(product_id) else None
    if stored is None:
        raise _product_gone(product_id)
    return ProductView(stored.text, stored.revision)


@paged
def list_products(account: str, limit: int, cursor: str | None) -> Page:
    return products.list_page(account, limit, cursor)


def _save(account: str, data: dict, **condition) -> str | None:
    """Save the product and, in the same write, queue its image for download (chalicelib/jobs/images.py).

    The new revision, or None when the stored revision is no longer the one expected.
    """
    saved = products.save(account, data, image_due=clock.now(), **condition)
    if saved is products.NO_CATEGORY:
        raise invalid("category", "does not name an existing category")
    if saved is products.TAKEN:
        raise Conflict(f"product {data['id']} already exists; use PUT to replace it")
    return None if saved is products.STALE else saved


def create_product(account: str, body) -> ProductView:
    data = product_rules.validate_product(body)
    return ProductView(data, _save(account, data, create_only=True))


def put_product(account: str, product_id: str, body, if_match: str | None) -> ProductView:
    if not is_identifier(product_id):
        raise invalid("id", ID_RULE)
    data = product_rules.validate_product(body, product_id)
    revision = _save(account, data, expected_revision=if_match)
    if revision is None:
        raise PreconditionFailed(STALE_ETAG)
    return ProductView(data, revision)


def patch_product(account: str, product_id: str, patch, if_match: str | None) -> ProductView:
    """Merge and save, conditional on the revision read; a concurrent change makes us read and merge again."""
    for _ in range(PATCH_ATTEMPTS):
        current = products.get(account, product_id, consistent=True) if is_identifier(product_id) else None
        if current is None:
            raise _product_gone(product_id)
        if if_match is not None and if_match != current.revision:
            raise PreconditionFailed(STALE_ETAG)
        data = product_rules.validate_product(product_rules.merge_patch(table.json_numbers(current.data), patch), product_id)
        revision = _save(account, data, expected_revision=current.revision)
        if revision is not None:
            return ProductView(data, revision)
        if if_match is not None:
            raise PreconditionFailed(STALE_ETAG)
    raise PreconditionFailed("the product kept changing while it was being patched; try again")


def delete_product(account: str, product_id: str, if_match: str | None) -> None:
    if not is_identifier(product_id):
        raise _product_gone(product_id)
    refused = products.delete(account, product_id, if_match)
    if refused is products.GONE:
        raise _product_gone(product_id)
    if refused is products.IN_USE:
        raise Conflict(f"product {product_id} is used by a delivery and cannot be deleted")
    if refused is products.STALE:
        raise PreconditionFailed(STALE_ETAG)
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


def _category_gone(category_id: str) -> NotFound:
    return NotFound(f"category {category_id} does not exist")


def get_category(account: str, category_id: str) -> dict:
    category = categories.get(account, category_id) if is_identifier(category_id) else None
    if category is None:
        raise _category_gone(category_id)
    return category


@paged
def list_categories(account: str, limit: int, cursor: str | None) -> Page:
    return categories.list_page(account, limit, cursor)


def delete_category(account: str, category_id: str) -> None:
    get_category(account, category_id)
    if products.any_in_category(account, category_id):
        raise Conflict(f"category {category_id} is used by products and cannot be deleted")
    if categories.delete(account, category_id) is categories.GONE:
        raise _category_gone(category_id)
