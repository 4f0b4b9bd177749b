"""Use case: a customer places an order (decisions §8). At most four requests to DynamoDB:
one BatchGetItem for everything the order is checked against, one UpdateItem for the delivery ids, and one
TransactWriteItems creating the deliveries, their feed entries (which make their events, store/feed.py), their
integration counts and the products' "used" flags together; the feed adds one GetItem of the account's feed head.
"""

from dataclasses import dataclass
from typing import Callable

from ..domain import integration, limits
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


@dataclass(frozen=True)
class Placing:
    """What a standing order's placing brings to its order (decisions §17): the {id, date} its delivery is marked
    with, what the placer read the order against (its first plan uses it), and `also(delivery ids)`: the operations
    its write holds too (the standing order still as read, the date's outcome recorded)."""

    standing_order: dict
    context: object = None
    also: Callable[[list[int]], list] = lambda ids: []


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


def _written(account: str, customer_id: str, body: OrderBody, idempotency, placing: Placing | None, consistent: bool):
    """Read, plan and write the order once: (the store's outcome, the answer, the products the write was conditional
    on as read: those whose packaging charges deposits, pinned to their revision, and those read as used)."""
    now = clock.now()
    if placing is not None and placing.context is not None and not consistent:
        context = placing.context
    else:
        context = load_context(account, customer_id, [item.id for item in body.items], consistent)
    order = plan_order(body, customer_id, context, now, split=placing is None)  # §17: one delivery per date
    if placing is not None:
        for delivery in order.deliveries:
            delivery["standing_order"] = placing.standing_order
    bases = [delivery.pop(BASIS, None) for delivery in order.deliveries]
    ids = deliveries.allocate_ids(account, len(order.deliveries))
    placed = [{"id": delivery_id, **delivery} for delivery_id, delivery in zip(ids, order.deliveries)]
    answer = [with_deposits(delivery, basis) for delivery, basis in zip(placed, bases)]
    claim = idempotency.completion({"deliveries": answer}) if idempotency is not None else None
    # Each new delivery is PENDING (decisions §14), counted in the same transaction.
    counts = {name: n * len(placed) for name, n in integration.count_changes(None, integration.PENDING).items()}
    changes = [delivery_change(ChangeType.DELIVERY_REQUESTED, delivery) for delivery in placed]
    guards = deposit_store.usable_check(account, [empty.id for empty in body.empties or []])  # against a DELETE
    guards += placing.also([delivery["id"] for delivery in placed]) if placing is not None else []
    pinned = pinned_products(context, order.product_ids)
    moments = iter([now])  # the worklist's `since` is the time of the attempt that commits (decisions §14)

    def attempt() -> outcomes.Refusal | None:
        requested = deliveries.IntegrationWrite(
            dict(integration.REQUESTED_STATE), iso(next(moments, None) or clock.now()), counts
        )
        operations = delivery_writes.placing(
            account, placed, order.product_ids, requested, bases=bases, pinned=pinned, used_already=context.used
        )
        outcome = write_units.commit(account, now, operations + list(guards), changes, claim)
        if isinstance(outcome, deposit_store.Unusable):
            raise deposit_service.empties_refused(account, body.empties)
        return outcome

    busy = "many orders and changes of this account are being written at once; try again"
    outcome = contention.retried(attempt, again=(outcomes.Contended,), minimum=CONTENDED_ATTEMPTS, seconds=0, busy=busy)
    return outcome, answer, set(pinned) | (set(context.used) & set(order.product_ids))


class _PlanAgain:
    """A plan that lost to a catalogue change it was pinned to: made again (not an outcome of the store's)."""


def with_item_problems(account: str, customer_id: str, data, failed: ValidationFailed, split: bool):
    """`failed` with what its well-formed items get wrong against the catalogue (decisions §3: every problem at
    once), read only once the body is refused anyway."""
    from ..domain.common import well_formed_items
    from ..domain.delivery import OrderItem
    from ..domain.ordering import item_problems

    given = well_formed_items(data, OrderItem, limits.ORDER_ITEMS) if "items" not in failed.named() else []
    if not given:
        return failed
    context = load_context(account, customer_id, list(dict.fromkeys(item.id for _, item in given)))
    return failed.joined(item_problems(given, context, clock.now(), split))


def place_order(
    account: str, customer_id: str, data, idempotency: IdempotencyClaim | None = None, placing: Placing | None = None
) -> list[dict]:
    """The deliveries created, in full; ValidationFailed with one error per problem. `placing`: a standing order's
    (decisions §17): it places one delivery, never a second one "as soon as possible" for OUT_OF_STOCK items
    (refused naming them)."""
    try:
        body = parse(OrderBody, data)
    except ValidationFailed as failed:
        raise with_item_problems(account, customer_id, data, failed, placing is None) from None
    plans = iter([False])  # the first plan reads as a GET would; those after it, consistently

    def plan() -> tuple | _PlanAgain:
        outcome, answer, pinned = _written(account, customer_id, body, idempotency, placing, next(plans, True))
        # A product whose packaging charges deposits changed between the read and the write (it may no longer name
        # a type being deleted, decisions §15), or one read as used was made again: plan again from a consistent read.
        if isinstance(outcome, outcomes.ProductsGone) and outcome.product_ids & pinned:
            return _PlanAgain()
        return outcome, answer, pinned

    busy = "the catalogue changed while the order was written; try again"
    outcome, answer, pinned = contention.retried(plan, again=(_PlanAgain,), minimum=PLAN_ATTEMPTS, seconds=0, busy=busy)
    if outcome is None:
        return answer
    if isinstance(outcome, outcomes.ProductsGone):  # deleted between our read and our write
        message = "is not a product of this supplier"
        paths = [f"items[{i}].id" for i, item in enumerate(body.items) if item.id in outcome.product_ids]
        raise ValidationFailed([FieldError(path, message) for path in paths])
    if isinstance(outcome, outcomes.Stale):  # the ids were just allocated to us: only a broken counter gets here
        raise Busy("the new delivery ids were taken; try again")
    if isinstance(outcome, (outcomes.Changed, outcomes.Taken)):  # a placing's: its standing order changed, or the
        raise Busy("the standing order's date changed while it was placed; its next turn decides")  # date recorded
    contention.raise_for(outcome)
