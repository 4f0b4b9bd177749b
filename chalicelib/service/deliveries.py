"""Use cases of deliveries once placed: read, list, respond (supplier), cancel and receive (customer), the CSV,
and the integration state the supplier's ERP sets (decisions §14).

Every change is an UpdateItem (or a transaction with its event) conditional on the version read. When another
change wins the race we re-read and evaluate the transition again, so concurrent changes serialise: none is
lost and none skips the state machine.
"""
import random
import time
from typing import Callable

from ..domain import delivery
from ..domain import integration as integration_state
from ..domain.common import parse
from ..domain.delivery import CustomerActionBody
from ..domain.errors import Busy, NotFound, invalid
from ..domain.event_policy import EventType
from ..domain.identifiers import parse_delivery_id
from ..domain.order_file import order_file as build_order_file
from ..domain.timestamps import iso
from ..store import deliveries, events
from ..store.paging import Page
from .paging import paged
from . import clock
from .idempotency import IdempotencyClaim

MAX_ATTEMPTS = 30  # each lost race means another change won, so 30 concurrent changers all get through


def _number(delivery_id: str) -> int:
    """The delivery id of a URL as its number; a malformed one names no delivery."""
    number = parse_delivery_id(delivery_id)
    if number is None:
        raise NotFound(f"delivery {delivery_id} does not exist")
    return number


def _read(account: str, delivery_id: str, customer_id: str | None = None, consistent: bool = False) -> deliveries.StoredDelivery:
    """The delivery in full; a customer sees only their own (another's reads as missing)."""
    stored = deliveries.get(account, _number(delivery_id), consistent=consistent)
    if stored is None or (customer_id is not None and stored.delivery["request"].get("customer_id") != customer_id):
        raise NotFound(f"delivery {delivery_id} does not exist")
    return stored


def _supplier_view(stored: deliveries.StoredDelivery) -> dict:
    """What supplier reads show: the delivery and its integration state (customers never see the state)."""
    return integration_state.supplier_view(stored.delivery, stored.integration)


def _customer_view(stored: deliveries.StoredDelivery) -> dict:
    return stored.delivery


def get_delivery(account: str, delivery_id: str, customer_id: str | None = None) -> dict:
    """The delivery in full; a customer's own as customers see it when `customer_id` is given."""
    stored = _read(account, delivery_id, customer_id)
    return _customer_view(stored) if customer_id is not None else _supplier_view(stored)


@paged
def list_deliveries(
    account: str, limit: int, cursor: str | None, status: str | None, integration: str | None = None
) -> Page:
    """Newest first (optionally of one status), or the worklist of one integration state, oldest first."""
    if integration is not None:
        page = deliveries.list_integration_page(account, integration, limit, cursor)
    else:
        page = deliveries.list_page(account, limit, cursor, status)
    return Page([_supplier_view(stored) for stored in page.items], page.cursor)


@paged
def list_customer_deliveries(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    page = deliveries.list_customer_page(account, customer_id, limit, cursor)
    return Page([_customer_view(stored) for stored in page.items], page.cursor)


LOST_CLAIM = "another request with this Idempotency-Key took over; retry to get its answer"
TOO_LARGE = "the delivery has reached the storage limit of one delivery"


def raise_for(outcome: deliveries.LostClaim | deliveries.TooLarge) -> None:
    """The error of a write that cannot succeed by trying again now."""
    if isinstance(outcome, deliveries.LostClaim):
        raise Busy(LOST_CLAIM)
    raise invalid("body", TOO_LARGE)


def _repended(stored: deliveries.StoredDelivery, now) -> deliveries.IntegrationWrite:
    """A customer's change makes the delivery PENDING again, at the end of the worklist (decisions §14)."""
    before = stored.integration["status"] if stored.integration is not None else None
    state = integration_state.repended(stored.integration, now)
    return deliveries.IntegrationWrite(state, iso(now), integration_state.count_changes(before, state["status"]))


def _change(
    account: str,
    stored: deliveries.StoredDelivery,
    change: Callable[[dict, object], dict],
    event: str | None = None,
    idempotency: IdempotencyClaim | None = None,
    view: Callable[[deliveries.StoredDelivery], dict] = _customer_view,
    by_customer: bool = False,
) -> dict:
    """Apply `change(delivery, now)` (which raises when the state machine forbids it) until it is written; the
    answer is `view` of the written delivery. A customer's change also makes the integration state PENDING, in
    the same write."""
    for attempt in range(MAX_ATTEMPTS):
        now = clock.now()
        changed = change(stored.delivery, now)
        integration = _repended(stored, now) if by_customer else None
        written = deliveries.StoredDelivery(
            changed,
            stored.version + 1,
            integration.state if integration is not None else stored.integration,
            integration.since if integration is not None else stored.integration_since,
        )
        outbox = events.outbox_operation(account, event, changed, now) if event is not None else None
        claim = idempotency.completion(view(written)) if idempotency is not None else None
        outcome = deliveries.change(account, changed, stored.version, outbox, claim, integration)
        if isinstance(outcome, deliveries.StoredDelivery):
            return view(written)
        if not isinstance(outcome, deliveries.Stale):
            raise_for(outcome)
        _back_off(attempt)
        stored = deliveries.refresh(account, stored)
        if stored is None:
            raise NotFound(f"delivery {changed['id']} does not exist")
    raise Busy("the delivery is being changed by many requests at once; try again")


def _back_off(attempt: int) -> None:
    time.sleep(random.uniform(0, min(0.005 * 2**attempt, 0.2)))


def respond(account: str, delivery_id: str, data, idempotency: IdempotencyClaim | None = None) -> dict:
    """Append a supplier response and move the status per decisions §8; the delivery in full."""
    body = delivery.parse_response(data)
    stored = _read(account, delivery_id, consistent=True)
    items = delivery.response_items(body, stored.delivery["request"]["items"])
    return _change(
        account,
        stored,
        lambda current, now: delivery.respond(current, delivery.build_response(body, items, now)),
        idempotency=idempotency,
        view=_supplier_view,
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
    return _change(account, stored, lambda d, now: _cancel(d, now, body), EventType.CANCEL_DELIVERY, idempotency, by_customer=True)


def receive(account: str, customer_id: str, delivery_id: str, data, idempotency: IdempotencyClaim | None = None) -> dict:
    body = parse(CustomerActionBody, data)
    stored = _read(account, delivery_id, customer_id, consistent=True)
    return _change(account, stored, lambda d, now: _receive(d, now, body), EventType.RECEIVE_DELIVERY, idempotency, by_customer=True)


CHANGED_BY_CUSTOMER = (
    "the customer changed the delivery while this integration state was being written, so it was not; read the "
    "delivery again and acknowledge what it holds now"
)


def set_integration(account: str, delivery_id: str, data) -> dict:
    """PUT /deliveries/:id/integration (decisions §14): the new state, or the same answer when nothing changes.

    Conditional on the delivery's version. Losing to a supplier response or another PUT, it is evaluated again;
    losing to a customer's cancel or receive, an IMPORTED or FAILED is refused (Busy): the ERP acknowledged a
    delivery it has not seen since, which must stay PENDING.
    """
    body = integration_state.parse_body(data)
    read = stored = _read(account, delivery_id, consistent=True)
    for attempt in range(MAX_ATTEMPTS):
        current = integration_state.state_of(stored.integration)
        now = clock.now()
        state = integration_state.acknowledged(current, body, now)
        if state is None:
            return current
        before = stored.integration["status"] if stored.integration is not None else None
        entered = before != state["status"] or stored.integration_since is None
        write = deliveries.IntegrationWrite(
            state,
            iso(now) if entered else stored.integration_since,
            integration_state.count_changes(before, state["status"]),
        )
        outcome = deliveries.set_integration(account, stored, write, _feed_entries(account, stored, state, now))
        if isinstance(outcome, deliveries.StoredDelivery):
            return state
        if not isinstance(outcome, deliveries.Stale):
            raise_for(outcome)
        _back_off(attempt)
        stored = deliveries.refresh(account, stored)
        if stored is None:
            raise NotFound(f"delivery {delivery_id} does not exist")
        if body.status != integration_state.PENDING and integration_state.changed_by_customer(read.delivery, stored.delivery):
            raise Busy(CHANGED_BY_CUSTOMER)
    raise Busy("the delivery is being changed by many requests at once; try again")


def _feed_entries(account: str, stored: deliveries.StoredDelivery, state: dict, now) -> list[dict]:
    """Transaction items written with a change of the integration state by PUT. Issue 18 (the change feed,
    decisions §13): the `delivery.integration` entry joins the transaction here; until then there is none."""
    return []


def integration_overview(account: str) -> dict:
    """GET /account/integration: the exact counts and the first delivery of the PENDING worklist."""
    counts = deliveries.integration_counts(account, integration_state.PENDING)
    oldest = counts.oldest_pending
    return {
        "pending": counts.pending,
        "failed": counts.failed,
        "oldest_pending": {"id": oldest[0], "since": oldest[1]} if oldest is not None else None,
    }


def order_file(account: str, delivery_id: str, encoding: str) -> tuple[int, bytes]:
    """(delivery id, file bytes) of the CSV order file in `encoding` (utf-8 or latin1)."""
    found = _read(account, delivery_id).delivery
    return found["id"], build_order_file(found, encoding)
