"""Use case: a customer places an order (decisions §8). At most four requests to DynamoDB:
one BatchGetItem for everything the order is checked against, one UpdateItem for the delivery ids, and one
TransactWriteItems creating the deliveries, their feed entries (which make their events, store/feed.py), their
integration counts and the products' "used" flags together; the feed adds one GetItem of the account's feed head.
"""

from ..domain import integration
from ..domain.common import FieldError, ValidationFailed, parse
from ..domain.delivery import OrderBody
from ..domain.deposit_orders import BASIS
from ..domain.deposits import deposit_packaging, with_deposits
from ..domain.errors import Busy
from ..domain.feed import ChangeType, delivery_change
from ..domain.ordering import plan_order
from ..domain.product import deposits_named
from ..domain.timestamps import iso
from ..store import deliveries, delivery_writes, order_context, outcomes
from ..store import deposits as deposit_store
from . import clock, contention, write_units
from . import deposits as deposit_service
from .idempotency import IdempotencyClaim

CONTENDED_ATTEMPTS = 30  # another transaction held the account's integration counts: each wait is short


def load_context(
    account: str, customer_id: str, product_ids: list[str], consistent: bool = False
) -> order_context.OrderContext:
    """What an order (an amendment, a standing order) is checked against, read once; again consistently when the
    first read was stale: a product naming a deposit type the read of the types did not show yet."""
    context = order_context.load(account, customer_id, product_ids, read_deposits=True, consistent=consistent)
    if names_unknown_deposits(context):
        context = order_context.load(account, customer_id, product_ids, read_deposits=True, consistent=True)
        if names_unknown_deposits(context):  # a product read before its type's delete: the catalogue moved
            raise Busy("the catalogue changed while the order was read; try again")
    return context


def pinned_products(context: order_context.OrderContext, product_ids) -> dict[str, str]:
    """The products (id -> revision as read) whose packaging charges deposits: a write that charges them is
    conditional on them being as read, so a type they stop naming cannot be deleted under it (decisions §15)."""
    return {
        pid: context.revisions[pid]
        for pid in product_ids
        if pid in context.revisions and deposit_packaging(context.products[pid])
    }


def names_unknown_deposits(context: order_context.OrderContext) -> bool:
    """Whether a product read names a deposit type the (eventually consistent) read of the types lacks."""
    return any(
        deposit not in context.deposit_types
        for product in context.products.values()
        for deposit in deposits_named(product)
    )


PLAN_ATTEMPTS = 3


def _written(account: str, customer_id: str, body: OrderBody, idempotency, standing_order, consistent: bool):
    """Read, plan and write the order once: (the store's outcome, the answer, the products pinned to their
    revision as read: those whose packaging charges deposits)."""
    now = clock.now()
    context = load_context(account, customer_id, [item.id for item in body.items], consistent)
    order = plan_order(body, customer_id, context, now)
    if standing_order is not None:
        for delivery in order.deliveries:
            delivery["standing_order"] = standing_order
    bases = [delivery.pop(BASIS, None) for delivery in order.deliveries]
    ids = deliveries.allocate_ids(account, len(order.deliveries))
    placed = [{"id": delivery_id, **delivery} for delivery_id, delivery in zip(ids, order.deliveries)]
    answer = [with_deposits(delivery, basis) for delivery, basis in zip(placed, bases)]
    claim = idempotency.completion({"deliveries": answer}) if idempotency is not None else None
    # Each new delivery is PENDING (decisions §14), counted in the same transaction.
    counts = {name: n * len(placed) for name, n in integration.count_changes(None, integration.PENDING).items()}
    changes = [delivery_change(ChangeType.DELIVERY_REQUESTED, delivery) for delivery in placed]
    guards = deposit_store.usable_check(account, [empty.id for empty in body.empties or []])  # against a DELETE
    pinned = pinned_products(context, order.product_ids)
    moments = iter([now])  # the worklist's `since` is the time of the attempt that commits (decisions §14)

    def attempt() -> outcomes.Refusal | None:
        requested = deliveries.IntegrationWrite(
            dict(integration.REQUESTED_STATE), iso(next(moments, None) or clock.now()), counts
        )
        operations = delivery_writes.placing(account, placed, order.product_ids, requested, bases=bases, pinned=pinned)
        outcome = write_units.commit(account, now, operations + list(guards), changes, claim)
        if isinstance(outcome, deposit_store.Unusable):
            raise deposit_service.empties_refused(account, body.empties)
        return outcome

    busy = "many orders and changes of this account are being written at once; try again"
    outcome = contention.retried(attempt, again=(outcomes.Contended,), minimum=CONTENDED_ATTEMPTS, seconds=0, busy=busy)
    return outcome, answer, set(pinned)


def place_order(
    account: str,
    customer_id: str,
    data,
    idempotency: IdempotencyClaim | None = None,
    standing_order: dict | None = None,
) -> list[dict]:
    """The deliveries created, in full; ValidationFailed with one error per problem. `standing_order`: the
    {id, date} a standing order's placing marks its deliveries with (decisions §17)."""
    body = parse(OrderBody, data)
    plans = iter([False])  # the first plan reads as a GET would; those after it, consistently

    def plan() -> tuple | outcomes.Changed:
        outcome, answer, pinned = _written(account, customer_id, body, idempotency, standing_order, next(plans, True))
        # A product whose packaging charges deposits changed between the read and the write (it may no longer name
        # a type being deleted, decisions §15): plan the order again from a consistent read.
        if isinstance(outcome, outcomes.ProductsGone) and outcome.product_ids & pinned:
            return outcomes.Changed()
        return outcome, answer, pinned

    busy = "the catalogue changed while the order was written; try again"
    outcome, answer, pinned = contention.retried(
        plan, again=(outcomes.Changed,), minimum=PLAN_ATTEMPTS, seconds=0, busy=busy
    )
    if outcome is None:
        return answer
    if isinstance(outcome, outcomes.ProductsGone):  # deleted between our read and our write
        message = "is not a product of this supplier"
        paths = [f"items[{i}].id" for i, item in enumerate(body.items) if item.id in outcome.product_ids]
        raise ValidationFailed([FieldError(path, message) for path in paths])
    if isinstance(outcome, outcomes.Stale):  # the ids were just allocated to us: only a broken counter gets here
        raise Busy("the new delivery ids were taken; try again")
    contention.raise_for(outcome)
