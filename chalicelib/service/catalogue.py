"""Use cases of the catalogue: products and categories."""

import json
from typing import NamedTuple

from ..domain.errors import Conflict, NotFound, PreconditionFailed, ValidationFailed, invalid
from ..domain.identifiers import ID_RULE, is_identifier
from ..domain.values import order_by_of
from ..store import products
from ..store.paging import Page
from . import clock, contention
from .paging import paged
from .standing_rules import standing_rules_changed

# Validation (pydantic) and the category and pricing stores are imported where they are used: a cold GET of a
# product loads none of them.
WRITE_ATTEMPTS = 30  # each lost race means another write won, so many concurrent writers all get through
STALE_ETAG = "the product was changed since the ETag given in If-Match"


def _product_gone(product_id: str) -> NotFound:
    return NotFound(f"product {product_id} does not exist")


class ProductView(NamedTuple):  # not a dataclass: its class is built on every cold start, a tenth of the cost
    """A product as the API answers it: `body` is the document, or its JSON text when read (as stored)."""

    body: dict | str
    revision: str

    @property
    def data(self) -> dict:
        """The document as the API answers it."""
        return self.body if isinstance(self.body, dict) else json.loads(self.body)


def get_product(account: str, product_id: str) -> ProductView:
    stored = products.get(account, product_id) if is_identifier(product_id) else None
    if stored is None:
        raise _product_gone(product_id)
    return ProductView(stored.text, stored.revision)


@paged
def list_products(account: str, limit: int, cursor: str | None) -> Page:
    return products.list_page(account, limit, cursor)


def _write(account: str, product_id: str, build, if_match: str | None, create_only: bool = False) -> ProductView:
    """Read the product (and the deposit types, in the same request), build the new document from it, and save it
    conditional on what was read, with its feed entry; a concurrent change makes us read again, for as long as
    any write retries contention (decisions §8): only a stale If-Match is 412 (§11).

    `build(current data or None)` returns the document to store. The image is queued for download in the same
    write; the image job downloads it (jobs/images.py, service/images.py)."""
    from ..domain import feed as changes
    from ..domain import product as product_rules
    from ..store import outcomes
    from ..store.unit_of_work import unit_of_work

    def attempt() -> ProductView | outcomes.Refusal:
        current, deposit_types = products.get_for_write(account, product_id)
        if current is not None and create_only:
            raise Conflict(f"product {product_id} already exists; use PUT to replace it")
        if if_match is not None and (current is None or if_match != current.revision):
            raise PreconditionFailed(STALE_ETAG)
        data = build(current)
        try:
            product_rules.check_deposits(data, deposit_types)
        except ValidationFailed as failed:
            raise with_references(account, data, failed) from None
        if current is not None and current.same_as(data):
            return ProductView(current.data, current.revision)
        if current is not None and order_by_of(current.data) != order_by_of(data):
            unfit = levels_unfit(account, product_id, current.born, order_by_of(data))
            if unfit is not None:
                raise invalid("order_by", unfit)
        now = clock.now()
        before = frozenset(product_rules.deposits_named(current.data)) if current is not None else frozenset()
        saving = products.saving(
            account,
            data,
            create_only=current is None,
            expected_revision=current.revision if current is not None else None,
            image_due=now,
        )
        with unit_of_work(account, now) as uow:
            uow.add(saving.operation, *products.checks(account, data, before))
            uow.add(*standing_rules_changed(account, current.data if current is not None else None, data))
            uow.record(changes.product_change("updated" if current is not None else "created", product_id))
            saved = uow.commit()
        if isinstance(saved, outcomes.NoCategory):
            raise invalid("category", product_rules.NO_CATEGORY)
        if isinstance(saved, outcomes.Taken) and create_only:
            raise Conflict(f"product {product_id} already exists; use PUT to replace it")
        if saved is None:
            return ProductView(data, saving.revision)
        if if_match is not None:
            raise PreconditionFailed(STALE_ETAG)
        return saved  # created, changed or held meanwhile: read again

    return contention.retried(attempt, again=(outcomes.Refusal,), minimum=WRITE_ATTEMPTS, busy=PRODUCT_BUSY)


PRODUCT_BUSY = "the product is being changed by many requests at once; try again"


def levels_unfit(account: str, product_id: str, born: str | None, order_by: str) -> str | None:
    """Why the product's customer pricing or price groups forbid switching it to `order_by` (§6's rules, a
    fractional `from` or INCREMENTAL by kg: they were validated against the old one), or None when they allow it.
    A product write (API or import) that switches order_by reads them; no other write does."""
    from ..domain.scaled_pricing import levels_broken_by
    from ..store import pricing

    broken = levels_broken_by(pricing.levels_of(account, product_id, born), order_by)
    if not broken:
        return None
    shown = ", ".join(broken[:5]) + (f" and {len(broken) - 5} more" if len(broken) > 5 else "")
    return f"the pricing of {shown} does not fit order_by {order_by}: change or remove it first"


def with_references(account: str, body, failed: ValidationFailed) -> ValidationFailed:
    """`failed` with what the body's references get wrong too, read only once the body is refused anyway: every
    field problem at once (decisions §3), a missing category and unknown deposit types beside the shape's."""
    from ..domain import product as product_rules
    from ..store import categories, deposits

    category, named = product_rules.named_references(body)
    known = failed.named()
    category = category if category is not None and "category" not in known and is_identifier(category) else None
    named = {path: deposit_id for path, deposit_id in named.items() if path not in known}
    exists = category is None or categories.get(account, category) is not None
    types = deposits.read_types(account, consistent=True) if named else {}
    return failed.joined(product_rules.reference_errors(category, exists, named, types))


def _validated(account: str, body, product_id: str | None = None) -> dict:
    from ..domain import product as product_rules

    try:
        return product_rules.validate_product(body, product_id)
    except ValidationFailed as failed:
        raise with_references(account, body, failed) from None


def create_product(account: str, body) -> ProductView:
    data = _validated(account, body)
    return _write(account, data["id"], lambda current: data, None, create_only=True)


def put_product(account: str, product_id: str, body, if_match: str | None) -> ProductView:
    if not is_identifier(product_id):
        raise invalid("id", ID_RULE)
    data = _validated(account, body, product_id)
    return _write(account, product_id, lambda current: data, if_match)


def patch_product(account: str, product_id: str, patch, if_match: str | None) -> ProductView:
    """Merge into the product as read and save conditional on it; a concurrent change makes us merge again."""
    if not is_identifier(product_id):
        raise _product_gone(product_id)

    def merged(current: products.StoredProduct | None) -> dict:
        from ..domain import product as product_rules

        if current is None:
            raise _product_gone(product_id)
        return _validated(account, product_rules.merge_patch(current.document(), patch), product_id)

    return _write(account, product_id, merged, if_match)


def delete_product(account: str, product_id: str, if_match: str | None) -> None:
    from ..store import outcomes

    if not is_identifier(product_id):
        raise _product_gone(product_id)
    refused = remove_product(account, product_id, if_match)
    if isinstance(refused, outcomes.Gone):
        raise _product_gone(product_id)
    if isinstance(refused, outcomes.InUse):
        raise Conflict(f"product {product_id} is used by a delivery and cannot be deleted")
    if isinstance(refused, outcomes.Stale):
        raise PreconditionFailed(STALE_ETAG)
    if refused is not None:
        contention.raise_for(refused)


CATEGORY_ATTEMPTS = 5  # a category's write lost to others this many times in a row: Busy


DELETE_ATTEMPTS = 5


def remove_product(account: str, product_id: str, expected_revision: str | None = None):
    """Delete an unused product with its feed entry; None when deleted, else why not (Gone, InUse, Stale). A product
    whose packaging names deposit types gives their references back in the same transaction. The delete is
    conditional on the revision read (a change meanwhile makes us read again, unless the caller named the revision),
    so its pricing is retired afterwards as that very product's, never a product's created again since."""
    from ..domain import feed as changes
    from ..domain import product as product_rules
    from ..store import outcomes, pricing
    from ..store.unit_of_work import unit_of_work

    def attempt():
        current = products.get(account, product_id, consistent=True)
        if current is None:
            return outcomes.Gone()
        named = product_rules.deposits_named(current.data)
        with unit_of_work(account, clock.now()) as uow:
            uow.add(*products.deleting(account, product_id, expected_revision or current.revision, named))
            uow.record(changes.product_change("deleted", product_id))
            refused = uow.commit()
        if refused is None:
            for retiring in pricing.retiring_all_of_product(
                account, product_id, current.born, int(clock.now().timestamp())
            ):
                with unit_of_work(account, clock.now()) as uow:
                    uow.add(retiring)
                    uow.commit()  # refused: it belongs to the product created again
        return refused

    # A lost race is tried again, a changed revision too unless the caller named the one it deletes.
    again = (outcomes.Contended,) if expected_revision is not None else contention.lost_races()
    return contention.retried(attempt, again=again, minimum=DELETE_ATTEMPTS, seconds=0, busy=PRODUCT_BUSY)


def put_category(account: str, category_id: str, body) -> dict:
    from ..domain import category as category_shapes
    from ..domain import common as shapes
    from ..domain.feed import Change, ChangeType
    from ..store import categories, outcomes
    from ..store.unit_of_work import unit_of_work

    if not is_identifier(category_id):
        raise invalid("id", ID_RULE)
    category = shapes.parse(category_shapes.CategoryBody, body)
    if category.id is not None and category.id != category_id:
        raise invalid("id", "must equal the id in the URL")

    def attempt() -> dict | outcomes.Refusal:
        current = categories.read_for_write(account, category_id)
        if current is not None and current["name"] == category.name:
            return current  # the same name again writes nothing (and appends no feed entry)
        with unit_of_work(account, clock.now()) as uow:
            if current is None:
                uow.add(categories.creating(account, category_id, category.name), categories.counting(account, 1))
                uow.record(Change(ChangeType.CATEGORY_CREATED, category_id))
            else:
                uow.add(categories.renaming(account, category_id, category.name))
                uow.record(Change(ChangeType.CATEGORY_UPDATED, category_id))
            refused = uow.commit()
        _counted(account, refused)
        return refused or {"id": category_id, "name": category.name}

    # Others kept changing it between our read and our write: Busy.
    return contention.retried(attempt, again=(outcomes.Refusal,), minimum=CATEGORY_ATTEMPTS, seconds=0)


def _counted(account: str, refused) -> None:
    """A creation or delete of a category refused for the account's count of them (decisions §4): 400 naming `id`
    when it is full; when it lost the race or the account keeps no count yet, one is kept and the caller writes
    again."""
    from ..domain.limits import CATEGORIES
    from ..store import categories, outcomes

    if isinstance(refused, outcomes.Full):
        raise invalid("id", f"an account holds at most {CATEGORIES:,} categories; delete one first")
    if isinstance(refused, outcomes.Stale):
        categories.held(account)


def create_category(account: str, body) -> dict:
    """POST /categories, as barmate catalogue-sync clients send it: the id is in the body (decisions §5)."""
    from ..domain import category as category_shapes
    from ..domain import common as shapes
    from ..domain.feed import Change, ChangeType
    from ..store import categories, outcomes
    from ..store.unit_of_work import unit_of_work

    category = shapes.parse(category_shapes.NewCategory, body)

    def attempt() -> dict | outcomes.Refusal:
        if categories.read_for_write(account, category.id) is not None:
            raise _category_exists(category.id)  # before the count: a sync client's second run POSTs what exists
        with unit_of_work(account, clock.now()) as uow:
            uow.add(categories.creating(account, category.id, category.name), categories.counting(account, 1))
            uow.record(Change(ChangeType.CATEGORY_CREATED, category.id))
            refused = uow.commit()
        if isinstance(refused, outcomes.Taken):
            raise _category_exists(category.id)
        _counted(account, refused)
        return refused or {"id": category.id, "name": category.name}

    return contention.retried(attempt, minimum=CATEGORY_ATTEMPTS, seconds=0)


def _category_exists(category_id: str) -> Conflict:
    return Conflict(f"category {category_id} already exists; use PUT to replace it")


def _category_gone(category_id: str) -> NotFound:
    return NotFound(f"category {category_id} does not exist")


def get_category(account: str, category_id: str) -> dict:
    from ..store import categories

    category = categories.get(account, category_id) if is_identifier(category_id) else None
    if category is None:
        raise _category_gone(category_id)
    return category


@paged
def list_categories(account: str, limit: int, cursor: str | None) -> Page:
    from ..store import categories

    return categories.list_page(account, limit, cursor)


def delete_category(account: str, category_id: str) -> None:
    from ..domain.feed import Change, ChangeType
    from ..store import categories, outcomes
    from ..store.unit_of_work import unit_of_work

    get_category(account, category_id)
    if products.any_in_category(account, category_id):
        raise Conflict(f"category {category_id} is used by products and cannot be deleted")

    def attempt() -> outcomes.Refusal | None:
        with unit_of_work(account, clock.now()) as uow:
            uow.add(categories.deleting(account, category_id), categories.counting(account, -1))
            uow.record(Change(ChangeType.CATEGORY_DELETED, category_id))
            refused = uow.commit()
        if not isinstance(refused, outcomes.Gone):
            _counted(account, refused)
        return refused

    refused = contention.retried(attempt, minimum=CATEGORY_ATTEMPTS, seconds=0)
    if isinstance(refused, outcomes.Gone):
        raise _category_gone(category_id)
    if refused is not None:
        contention.raise_for(refused)
