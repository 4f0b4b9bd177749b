"""Use cases of deliveries once placed: read, list, respond (supplier), cancel and receive (customer), the CSV.

Every change is an UpdateItem (or a transaction with its event) conditional on the version read. When another
change wins the race we re-read and evaluate the transition again, so concurrent changes serialise: none is
lost and none skips the state machine.
"""
import random
import time
from typing import Callable

from ..domain import delivery
from ..domain.common import parse
from ..domain.delivery import CustomerActionBody
from ..domain.errors import Busy, NotFound, invalid
from ..domain.feed import RESPONSE_CHANGE, ChangeType, delivery_change
from ..domain.order_file import order_file as build_order_file
from ..store import deliveries
from . import clock, delivery_reads
from .idempotency import IdempotencyClaim

MAX_ATTEMPTS = 30  # each lost race means another change won, so 30 concurrent changers all get through


# Reads live in service/delivery_reads.py (no pydantic on a cold GET); their names stay usable from here.
_number, _read = delivery_reads.number, delivery_reads.read
get_delivery = delivery_reads.get_delivery
list_deliveries, list_customer_deliveries = delivery_reads.list_deliveries, delivery_reads.list_customer_deliveries


LOST_CLAIM = "another request with this Idempotency-Key took over; retry to get its answer"
TOO_LARGE = "the delivery has reached the storage limit of one delivery"


def raise_for(outcome: deliveries.LostClaim | deliveries.TooLarge) -> None:
    """The error of a write that cannot succeed by trying again now."""
    if isinstance(outcome, deliveries.LostClaim):
        raise Busy(LOST_CLAIM)
    raise invalid("body", TOO_LARGE)


def _change(
    account: str,
    stored: deliveries.StoredDelivery,
    change: Callable[[dict, object], dict],
    change_type: Callable[[dict], ChangeType],
    idempotency: IdempotencyClaim | None = None,
) -> dict:
    """Apply `change(delivery, now)` (which raises when the state machine forbids it) until it is written."""
    for attempt in range(MAX_ATTEMPTS):
        now = clock.now()
        changed = change(stored.delivery, now)
        claim = idempotency.completion(changed) if idempotency is not None else None
        entry = delivery_change(change_type(changed), changed)
        outcome = deliveries.change(account, changed, stored.version, None, claim, change=entry, now=now)
        if isinstance(outcome, deliveries.StoredDelivery):
            return changed
        if not isinstance(outcome, deliveries.Stale):
            raise_for(outcome)
        time.sleep(random.uniform(0, min(0.005 * 2**attempt, 0.2)))
        stored = deliveries.refresh(account, stored)
        if stored is None:
            raise NotFound(f"delivery {changed['id']} does not exist")
    raise Busy("the delivery is being changed by many requests at once; try again")


def respond(account: str, delivery_id: str, data, idempotency: IdempotencyClaim | None = None) -> dict:
    """Append a supplier response and move the status per decisions §8; the delivery in full."""
    body = delivery.parse_response(data)
    stored = _read(account, delivery_id, consistent=True)
    items = delivery.response_items(body, stored.delivery["request"]["items"])
    return _change(
        account,
        stored,
        lambda current, now: delivery.respond(current, delivery.build_response(body, items, now)),
        lambda changed: RESPONSE_CHANGE[body.type],
        idempotency=idempotency,
    )


def _customer_action(field: str, next_status: Callable[[str], str]):
    def change(current: dict, now, body: CustomerActionBody) -> dict:
        status = next_status(current["status"])
        action = delivery.customer_action(now, body, current["customer"].get("contact"))
        return delivery.close(current, field, status, action)

    return change


_cancel = _customer_action("cancelled", delivery.status_after_cancel)
_receive = _customer_action("received", delivery.status_after_receive)


def cancel(account: str, customer_id: str, delivery_id: str, data, idempotency: IdempotencyClaim | None = None) -> dict:
    body = parse(CustomerActionBody, data)
    stored = _read(account, delivery_id, customer_id, consistent=True)
    cancelled = lambda changed: ChangeType.DELIVERY_CANCELLED  # noqa: E731
    return _change(account, stored, lambda d, now: _cancel(d, now, body), cancelled, idempotency)


def receive(account: str, customer_id: str, delivery_id: str, data, idempotency: IdempotencyClaim | None = None) -> dict:
    body = parse(CustomerActionBody, data)
    stored = _read(account, delivery_id, customer_id, consistent=True)
    delivered = lambda changed: ChangeType.DELIVERY_DELIVERED  # noqa: E731
    return _change(account, stored, lambda d, now: _receive(d, now, body), delivered, idempotency)


def order_file(account: str, delivery_id: str, encoding: str) -> tuple[int, bytes]:
    """(delivery id, file bytes) of the CSV order file in `encoding` (utf-8 or latin1)."""
    found = _read(account, delivery_id).delivery
    return found["id"], build_order_file(found, encoding)
