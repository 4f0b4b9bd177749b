"""Use case: a customer places an order (decisions §8). At most four requests to DynamoDB:
one BatchGetItem for everything the order is checked against, one UpdateItem for the delivery ids, and one
TransactWriteItems creating the deliveries, their feed entries (which make their events, store/feed.py) and the
products' "used" flags together; the feed adds one GetItem of the account's feed head.
"""
from ..domain.common import FieldError, ValidationFailed, parse
from ..domain.delivery import OrderBody
from ..domain.errors import Busy
from ..domain.feed import ChangeType, delivery_change
from ..domain.ordering import plan_order
from ..store import deliveries, order_context
from . import clock
from .deliveries import raise_for
from .idempotency import IdempotencyClaim


def place_order(account: str, customer_id: str, data, idempotency: IdempotencyClaim | None = None) -> list[dict]:
    """The deliveries created, in full; ValidationFailed with one error per problem."""
    body = parse(OrderBody, data)
    now = clock.now()
    context = order_context.load(account, customer_id, [item.id for item in body.items])
    order = plan_order(body, customer_id, context, now)
    ids = deliveries.allocate_ids(account, len(order.deliveries))
    placed = [{"id": delivery_id, **delivery} for delivery_id, delivery in zip(ids, order.deliveries)]
    claim = idempotency.completion({"deliveries": placed}) if idempotency is not None else None
    changes = [delivery_change(ChangeType.DELIVERY_REQUESTED, delivery) for delivery in placed]
    outcome = deliveries.place(account, placed, [], order.product_ids, claim, changes=changes, now=now)
    if outcome is None:
        return placed
    if isinstance(outcome, deliveries.ProductsGone):  # deleted between our read and our write
        message = "is not a product of this supplier"
        paths = [f"items[{i}].id" for i, item in enumerate(body.items) if item.id in outcome.product_ids]
        raise ValidationFailed([FieldError(path, message) for path in paths])
    if isinstance(outcome, deliveries.Stale):  # the ids were just allocated to us: only a broken counter gets here
        raise Busy("the new delivery ids were taken; try again")
    raise_for(outcome)
