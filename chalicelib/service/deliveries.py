"""Use cases of deliveries once placed: read, list, respond (supplier), cancel and receive (customer), the CSV.

Every change is an UpdateItem (or a transaction with its event) conditional on the version read. When another
change wins the race we re-read and evaluate the transition again, so concurrent changes serialise: none is
lost and none skips the state machine.
"""
import random
import time
from typing import Callable

from ..domain import delivery as rules
from ..domain.common import parse
from ..domain.delivery import CustomerActionBody
from ..domain.delivery_status import STATUSES
from ..domain.errors import Busy, NotFound, invalid
from ..domain.identifiers import parse_delivery_id
from ..domain.order_file import order_file as build_order_file
from ..store import deliveries as store
from ..store import events
from ..store.paging import Page
from . import clock
from .idempotency import Claim

MAX_ATTEMPTS = 30  # each lost race means another change won, so 30 concurrent changers all get through
CANCEL_DELIVERY, RECEIVE_DELIVERY = "cancel-delivery", "receive-delivery"
ENCODINGS = {"utf-8": "utf-8", "utf8": "utf-8", "latin1": "latin1", "latin-1": "latin1", "iso-8859-1": "latin1"}


def _delivery_id(text: str) -> int:
    delivery_id = parse_delivery_id(text)
    if delivery_id is None:
        raise NotFound(f"delivery {text} does not exist")
    return delivery_id


def _read(account: str, text: str, customer_id: str | None = None, consistent: bool = False) -> store.StoredDelivery:
    """The delivery in full; a customer sees only their own (another's reads as missing)."""
    stored = store.get(account, _delivery_id(text), consistent=consistent)
    if stored is None or (customer_id is not None and stored.delivery["request"].get("customer_id") != customer_id):
        raise NotFound(f"delivery {text} does not exist")
    return stored


def get_delivery(account: str, text: str, customer_id: str | None = None) -> dict:
    return _read(account, text, customer_id).delivery


def list_deliveries(account: str, limit: int, cursor: str | None, status: str | None) -> Page:
    if status is not None and status not in STATUSES:
        raise invalid("status", f"must be one of {', '.join(STATUSES)}")
    return store.list_page(account, limit, cursor, status)


def list_customer_deliveries(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    return store.list_customer_page(account, customer_id, limit, cursor)


LOST_CLAIM = "another request with this Idempotency-Key took over; retry to get its answer"
TOO_LARGE = "the delivery has reached the storage limit of one delivery"


def raise_for(outcome: store.LostClaim | store.TooLarge) -> None:
    """The error of a write that cannot succeed by trying again now."""
    if isinstance(outcome, store.LostClaim):
        raise Busy(LOST_CLAIM)
    raise invalid("body", TOO_LARGE)


def _change(
    account: str,
    stored: store.StoredDelivery,
    change: Callable[[dict, object], dict],
    event: str | None = None,
    idempotency: Claim | None = None,
) -> dict:
    """Apply `change(delivery, now)` (which raises when the state machine forbids it) until it is written."""
    for attempt in range(MAX_ATTEMPTS):
        now = clock.now()
        changed = change(stored.delivery, now)
        outbox = events.outbox_operation(account, event, changed, now) if event is not None else None
        claim = idempotency.completion(changed) if idempotency is not None else None
        outcome = store.change(account, changed, stored.version, outbox, claim)
        if isinstance(outcome, store.StoredDelivery):
            return changed
        if not isinstance(outcome, store.Stale):
            raise_for(outcome)
        time.sleep(random.uniform(0, min(0.005 * 2**attempt, 0.2)))
        stored = store.refresh(account, stored)
        if stored is None:
            raise NotFound(f"delivery {changed['id']} does not exist")
    raise Busy("the delivery is being changed by many requests at once; try again")


def respond(account: str, text: str, data, idempotency: Claim | None = None) -> dict:
    """Append a supplier response and move the status per decisions §8; the delivery in full."""
    body = rules.parse_response(data)
    stored = _read(account, text, consistent=True)
    items = rules.response_items(body, stored.delivery["request"]["items"])
    return _change(
        account,
        stored,
        lambda delivery, now: rules.respond(delivery, rules.build_response(body, items, now)),
        idempotency=idempotency,
    )


def _customer_action(field: str, next_status: Callable[[str], str]):
    def change(delivery: dict, now, body: CustomerActionBody) -> dict:
        status = next_status(delivery["status"])
        action = rules.customer_action(now, body, delivery["customer"].get("contact"))
        return rules.close(delivery, field, status, action)

    return change


_cancel = _customer_action("cancelled", rules.status_after_cancel)
_receive = _customer_action("received", rules.status_after_receive)


def cancel(account: str, customer_id: str, text: str, data, idempotency: Claim | None = None) -> dict:
    body = parse(CustomerActionBody, data)
    stored = _read(account, text, customer_id, consistent=True)
    return _change(account, stored, lambda d, now: _cancel(d, now, body), CANCEL_DELIVERY, idempotency)


def receive(account: str, customer_id: str, text: str, data, idempotency: Claim | None = None) -> dict:
    body = parse(CustomerActionBody, data)
    stored = _read(account, text, customer_id, consistent=True)
    return _change(account, stored, lambda d, now: _receive(d, now, body), RECEIVE_DELIVERY, idempotency)


def order_file(account: str, text: str, encoding: str | None) -> tuple[int, str, bytes]:
    """(delivery id, encoding, file bytes) of the CSV order file."""
    name = ENCODINGS.get((encoding or "utf-8").lower())
    if name is None:
        raise invalid("encoding", "must be utf-8 or latin1")
    delivery = _read(account, text).delivery
    return delivery["id"], name, build_order_file(delivery, name)
