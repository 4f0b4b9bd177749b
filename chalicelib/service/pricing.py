"""Use cases of customer pricing and price groups (decisions §6).

Both are validated by the one scaled-pricing validator against the product's `order_by`, and written only
while the product still has that `order_by`; a product changed in between is read again.
"""

from ..domain.errors import Conflict, NotFound, invalid
from ..domain.feed import Change, ChangeType
from ..domain.identifiers import is_identifier
from ..domain.scaled_pricing import validate_price_groups, validate_price_level
from ..domain.values import order_by_of
from ..store import outcomes, pricing
from ..store.products import StoredProduct
from ..store.unit_of_work import unit_of_work
from . import clock, contention

WRITE_ATTEMPTS = 3


def _order_by(product: StoredProduct) -> str:
    return order_by_of(product.data)


def _product_not_found(product_id: str) -> NotFound:
    return NotFound(f"product {product_id} does not exist")


def _read_customer_pricing(account: str, product_id: str, customer_id: str) -> pricing.Read:
    if not is_identifier(product_id):
        raise _product_not_found(product_id)
    if not is_identifier(customer_id):
        raise NotFound(f"customer {customer_id} does not exist")
    read = pricing.read_customer_pricing(account, product_id, customer_id)
    if read.product is None:
        raise _product_not_found(product_id)
    return read


def get_customer_pricing(account: str, product_id: str, customer_id: str) -> dict:
    read = _read_customer_pricing(account, product_id, customer_id)
    if read.data is None:
        raise NotFound(f"customer {customer_id} has no pricing for product {product_id}")
    return read.data


def _written(account: str, read: pricing.Read, data: dict, operations: list, change: Change) -> dict | outcomes.Refusal:
    """Write the pricing with its feed entry: `data` when written (or when it is what was read: nothing to write),
    else the refusal (Stale: the product or customer changed meanwhile, read again)."""
    if pricing.unchanged(read, data):
        return data
    if pricing.too_large(data):
        raise invalid("body", "is too large to store; use fewer groups, price points or date overrides")
    with unit_of_work(account, clock.now()) as uow:
        uow.add(*operations)
        uow.record(change)
        refused = uow.commit()
    if isinstance(refused, outcomes.TooLarge):
        raise invalid("body", "is too large to store; use fewer groups, price points or date overrides")
    return refused or data


def put_customer_pricing(account: str, product_id: str, customer_id: str, body) -> dict:
    """Replace the customer's pricing of the product (a property left out is removed); returns what was stored."""

    def attempt() -> dict | outcomes.Refusal:
        read = _read_customer_pricing(account, product_id, customer_id)
        if read.customer is None:
            raise NotFound(f"customer {customer_id} does not exist")
        order_by = _order_by(read.product)
        stored = validate_price_level(body, order_by)
        operations = pricing.putting_customer_pricing(account, product_id, customer_id, stored, order_by, read)
        change = Change(ChangeType.CUSTOMER_PRICING_UPDATED, product_id, customer_id=customer_id)
        return _written(account, read, stored, operations, change)

    busy = "the product kept changing while its customer pricing was written; try again"
    return _answered(contention.retried(attempt, minimum=WRITE_ATTEMPTS, seconds=0, busy=busy))


def delete_customer_pricing(account: str, product_id: str, customer_id: str) -> None:
    found = is_identifier(product_id) and is_identifier(customer_id)
    read = pricing.read_customer_pricing(account, product_id, customer_id) if found else None
    if read is None or read.data is None:  # an earlier product's pricing counts as none
        raise NotFound(f"customer {customer_id} has no pricing for product {product_id}")
    with unit_of_work(account, clock.now()) as uow:
        uow.add(pricing.deleting_customer_pricing(account, product_id, customer_id, read))
        uow.record(Change(ChangeType.CUSTOMER_PRICING_DELETED, product_id, customer_id=customer_id))
        refused = uow.commit()
    if isinstance(refused, outcomes.Gone):
        raise NotFound(f"customer {customer_id} has no pricing for product {product_id}")
    if refused is not None:
        raise Conflict("the customer pricing was being changed by another request; try again")


def _read_price_groups(account: str, product_id: str) -> pricing.Read:
    read = pricing.read_price_groups(account, product_id) if is_identifier(product_id) else None
    if read is None or read.product is None:
        raise _product_not_found(product_id)
    return read


def get_price_groups(account: str, product_id: str) -> dict:
    return _read_price_groups(account, product_id).data or {}


def put_price_groups(account: str, product_id: str, body) -> dict:
    """Replace the product's whole price-group map; each group is checked like customer pricing."""

    def attempt() -> dict | outcomes.Refusal:
        read = _read_price_groups(account, product_id)
        order_by = _order_by(read.product)
        stored = validate_price_groups(body, order_by)
        operations = pricing.putting_price_groups(account, product_id, stored, order_by, read)
        return _written(account, read, stored, operations, Change(ChangeType.PRICE_GROUPS_UPDATED, product_id))

    busy = "the product kept changing while its price groups were written; try again"
    return _answered(contention.retried(attempt, minimum=WRITE_ATTEMPTS, seconds=0, busy=busy))


def _answered(written: dict | outcomes.Refusal) -> dict:
    if isinstance(written, outcomes.Refusal):
        contention.raise_for(written)
    return written
