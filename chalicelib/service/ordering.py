"""Use case: a customer places an order (decisions §8). At most three requests to DynamoDB:
one BatchGetItem for everything the order is checked against, one UpdateItem for the delivery ids, and one
TransactWriteItems creating the deliveries, their events and the products' "used" flags together.
"""
from ..domain.common import FieldError, ValidationFailed, parse
from ..domain.delivery import OrderBody
from ..domain.ordering import Catalogue, plan_order
from ..store import deliveries, events, order_context, products
from . import clock
from .deliveries import raise_for_lost_claim
from .idempotency import Claim

REQUEST_DELIVERY = "request-delivery"
CONDITION_FAILED = "ConditionalCheckFailed"


def place_order(account: str, customer_id: str, data, idempotency: Claim | None = None) -> list[dict]:
    """The deliveries created, in full; ValidationFailed with one error per problem."""
    body = parse(OrderBody, data)
    now = clock.now()
    context = order_context.load(account, customer_id, [item.id for item in body.items])
    catalogue = Catalogue(
        context.settings, context.customer, context.products, context.customer_pricing, context.price_groups
    )
    order = plan_order(body, customer_id, catalogue, now)
    ids = deliveries.allocate_ids(account, len(order.deliveries))
    placed = [{"id": delivery_id, **delivery} for delivery_id, delivery in zip(ids, order.deliveries)]
    operations = []
    for delivery in placed:
        operations += deliveries.create_operations(account, delivery)
        operations.append(events.outbox_operation(account, REQUEST_DELIVERY, delivery, now))
    first_product = len(operations)
    operations += [products.mark_used_operation(account, product_id) for product_id in order.product_ids]
    if idempotency is not None:
        operations.append(idempotency.completion({"deliveries": placed}))
    codes = deliveries.transact(operations)
    if codes is None:
        return placed
    products_codes = codes[first_product : first_product + len(order.product_ids)]
    gone = {pid for pid, code in zip(order.product_ids, products_codes) if code == CONDITION_FAILED}
    if gone:  # deleted between our read and our write
        message = "is not a product of this supplier"
        paths = [f"items[{i}].id" for i, item in enumerate(body.items) if item.id in gone]
        raise ValidationFailed([FieldError(path, message) for path in paths])
    raise_for_lost_claim(codes, idempotency)
    raise RuntimeError(f"placing the order failed: {codes}")
