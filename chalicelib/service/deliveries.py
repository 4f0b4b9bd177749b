"""Use cases of deliveries once placed: read, list, respond (supplier), cancel and receive (customer), the CSV,
and the integration state the supplier's ERP sets (decisions §14).

Every change is one unit of work (service/write_units.commit: with its feed entry, which makes its event)
conditional on the version read. When another change wins the race we re-read and evaluate the transition again
(service/contention.retried), so concurrent changes serialise: none is lost and none skips the state machine.
"""

from dataclasses import dataclass
from typing import Callable

from ..domain import delivery, deposit_orders, deposits
from ..domain import deposit_statement as statement
from ..domain import deposit_types as deposit_shapes
from ..domain import integration as integration_state
from ..domain.common import ValidationFailed, dump, parse
from ..domain.delivery import CustomerActionBody
from ..domain.errors import Busy, NotFound, PreconditionFailed
from ..domain.feed import CUSTOMER_BY, RESPONSE_CHANGE, Change, ChangeType, delivery_change
from ..domain.limits import CONTENTION_SECONDS
from ..domain.order_file import order_file as build_order_file
from ..domain.rendering import json_text
from ..domain.timestamps import iso
from ..store import deliveries, delivery_writes, outcomes
from ..store import deposit_statement as statement_store
from ..store import deposits as deposit_store
from . import clock, contention, delivery_reads, write_units
from .deposits import empties_refused
from .idempotency import IdempotencyClaim

MAX_ATTEMPTS = 30  # each lost race means another change won, so 30 concurrent changers all get through


# Reads live in service/delivery_reads.py (no pydantic on a cold GET); their names stay usable from here.
_number, _read = delivery_reads.number, delivery_reads.read
_supplier_view, _customer_view = delivery_reads.supplier_view, delivery_reads.customer_view
get_delivery = delivery_reads.get_delivery
list_deliveries, list_customer_deliveries = delivery_reads.list_deliveries, delivery_reads.list_customer_deliveries
integration_overview = delivery_reads.integration_overview


STALE_ETAG = "the delivery was changed since the ETag given in If-Match; read it again"


def require_version(stored: deliveries.StoredDelivery, if_match: str | None) -> None:
    """412 when If-Match names another version than the one read (decisions §16); nothing is written."""
    if if_match is not None and if_match != delivery_reads.revision(stored):
        raise PreconditionFailed(STALE_ETAG)


def _repended(stored: deliveries.StoredDelivery, now) -> deliveries.IntegrationWrite:
    """A customer's change makes the delivery PENDING again, at the end of the worklist (decisions §14)."""
    before = stored.integration["status"] if stored.integration is not None else None
    state = integration_state.repended(stored.integration, now)
    return deliveries.IntegrationWrite(state, iso(now), integration_state.count_changes(before, state["status"]))


@dataclass(frozen=True)
class Written:
    """What one attempt of a change writes: the delivery, its deposit basis (stored again when it changes), more
    operations of the same write (a note's record beside the items, a substitute's product pinned as read, a claim's
    items), and attributes the summary's update sets too (`summary`: which version wrote the items item, the
    claims)."""

    delivery: dict
    basis: dict | None
    also: tuple = ()
    summary: dict | None = None


def _change(
    account: str,
    stored: deliveries.StoredDelivery,
    change: Callable[[deliveries.StoredDelivery, object], Written],
    change_type: ChangeType,
    idempotency: IdempotencyClaim | None = None,
    view: Callable[[deliveries.StoredDelivery], dict] = _customer_view,
    by_customer: bool = False,
    if_match: str | None = None,
    guards: list = (),
    empties=None,
    by: str | None = None,
    read_again: Callable[[], None] | None = None,
    entries: Callable[[dict], list[Change]] | None = None,
) -> dict:
    """Apply `change(stored, now)` (which raises when the state machine forbids it) until it is written; the
    answer is `view` of the written delivery. A customer's change also makes the integration state PENDING, in
    the same write. With `if_match`, only the version it names is changed: a lost race re-reads and answers 412.
    `by`: who made the change, as the feed entry says (decisions §18); `read_again`: what to read again when a
    product the change was pinned to changed meanwhile (outcomes.Changed); `entries`: the feed changes of the
    written delivery, when they are not its one `change_type` entry (a claim's, decisions §18)."""

    def attempt() -> dict | outcomes.Refusal:
        nonlocal stored
        require_version(stored, if_match)
        now = clock.now()
        step = change(stored, now)
        changed = deposits.with_deposits(step.delivery, step.basis)
        integration = _repended(stored, now) if by_customer else None
        written = deliveries.StoredDelivery(
            changed,
            stored.version + 1,
            integration.state if integration is not None else stored.integration,
            integration.since if integration is not None else stored.integration_since,
            deposit_basis=step.basis,
        )
        claim = idempotency.completion(view(written)) if idempotency is not None else None
        # One entry for the whole change, a re-pended integration state included (decisions §13).
        recorded = entries(changed) if entries is not None else [delivery_change(change_type, changed, by=by)]
        extra = _summary_attributes(step, stored)
        operations = delivery_writes.updating(account, changed["id"], stored.version, changed, integration, extra)
        also = _balances_moved(account, stored.delivery, changed, now) + list(guards) + list(step.also)
        outcome = write_units.commit(account, now, operations + also, recorded, claim)
        if outcome is None:
            return view(written)
        if isinstance(outcome, deposit_store.Unusable):
            raise empties_refused(account, empties)
        if isinstance(outcome, outcomes.Changed):
            if read_again is None:  # pinned to nothing it could read again: a fault
                contention.raise_for(outcome)
            read_again()
        elif isinstance(outcome, contention.lost_races()):
            stored = fresh(account, stored)
        return outcome

    return answered(
        contention.retried(attempt, again=AGAIN, minimum=MAX_ATTEMPTS, seconds=CONTENTION_SECONDS, busy=KEPT_CHANGING)
    )


def _summary_attributes(step: Written, stored: deliveries.StoredDelivery) -> dict | None:
    basis = {deliveries.DEPOSIT_BASIS: json_text(step.basis)} if step.basis != stored.deposit_basis else {}
    return {**basis, **(step.summary or {})} or None


def _as_it_was(change: Callable[[dict, object], dict]) -> Callable[[deliveries.StoredDelivery, object], Written]:
    """A change of the delivery alone: its deposit basis stays."""
    return lambda stored, now: Written(change(stored.delivery, now), stored.deposit_basis)


KEPT_CHANGING = "the delivery is being changed by many requests at once; try again"


AGAIN = (*contention.lost_races(), outcomes.Changed)  # a change of a delivery lost a race: apply it again


def fresh(account: str, stored: deliveries.StoredDelivery) -> deliveries.StoredDelivery:
    """The delivery as it is now, after another write won: what the change is applied to again."""
    found = deliveries.refresh(account, stored)
    if found is None:
        raise NotFound(f"delivery {stored.delivery['id']} does not exist")
    return found


def answered(written: dict | outcomes.Refusal) -> dict:
    """The answer of a change, or the error of the refusal that ended it (contention.raise_for)."""
    if isinstance(written, outcomes.Refusal):
        contention.raise_for(written)
    return written


def _balances_moved(account: str, before: dict, changed: dict, now) -> list:
    """A delivery that becomes DELIVERED moves its customer's deposit balances, and records the move in the
    customer's statement, in the same write (decisions §15); a claim on a delivered one moves none (§18)."""
    customer_id = changed["request"].get("customer_id")
    if changed["status"] != delivery.DELIVERED or before["status"] == delivery.DELIVERED or customer_id is None:
        return []
    moves = statement.receive_moves(changed.get("deposits"))
    if not moves:
        return []
    moved = deposit_store.moving_balances(account, customer_id, statement.counts(moves))
    record = statement_store.record_operation(account, customer_id, now, moves, delivery_id=int(changed["id"]))
    return [moved, record] if moved is not None else [record]


def respond(
    account: str, delivery_id: str, data, idempotency: IdempotencyClaim | None = None, if_match: str | None = None
) -> dict:
    """Append a supplier response and move the status per decisions §8; the delivery in full. Its items and empties
    are checked against the delivery as it stands when the response is written: after a lost race (an amendment
    that changed the lines), against what won."""
    try:
        body = delivery.parse_response(data)
    except ValidationFailed:
        _forbidden_response(account, delivery_id, data)
        raise
    stored = _read(account, delivery_id, consistent=True)
    require_version(stored, if_match)
    delivery.check_response_allowed(stored.delivery["status"], data)
    checked: dict[int, tuple] = {}

    def checked_against(current: deliveries.StoredDelivery) -> tuple:
        if current.version not in checked:
            checked[current.version] = _response_checked(account, body, current)
        return checked[current.version]

    checked_against(stored)  # every field problem at once before anything else (decisions §3)
    from . import substitutes as substitute_reads

    substitutes = substitute_reads.read(account, stored.delivery, body.substitutions)
    scheduled = dump(body.scheduled) if body.scheduled is not None else None

    def step(current: deliveries.StoredDelivery, now) -> Written:
        # Items, empties and substitutes are checked against the delivery as it is now: another change may have
        # won the race (§16).
        items, empties, guards = checked_against(current)
        substituted = substitutes.shown(current.delivery, current.deposit_basis, scheduled)
        response = delivery.build_response(body, items, now, empties, substituted)
        basis = substitutes.basis(current.deposit_basis)
        return Written(delivery.respond(current.delivery, response), basis, (*guards, *substitutes.checks()))

    return _change(
        account,
        stored,
        step,
        RESPONSE_CHANGE[body.type],
        idempotency=idempotency,
        view=_supplier_view,
        if_match=if_match,
        empties=body.empties,
        read_again=substitutes.read_again,
    )


def _forbidden_response(account: str, delivery_id: str, data) -> None:
    """A response the state machine forbids is answered as that (400 invalid-transition) before its field problems."""
    try:
        stored = _read(account, delivery_id, consistent=True)
    except NotFound:
        return  # the field problems answer
    delivery.check_response_allowed(stored.delivery["status"], data)


def _response_checked(account: str, body, stored: deliveries.StoredDelivery) -> tuple[list | None, list | None, list]:
    """A response's items and empties as the delivery `stored` takes them, and the guard its new empties need in the
    write; ValidationFailed naming every problem."""
    items, empties, errors = None, None, []
    try:
        items = delivery.response_items(body, stored.delivery["request"]["items"])
    except ValidationFailed as failed:
        errors += failed.errors
    packagings = ((stored.deposit_basis or {}).get("packaging")) or {}
    for i, item in enumerate(items or ()):  # (items: the response's, in its order)
        errors += deposit_orders.fraction_errors(packagings.get(item["id"]), item["vessel_count"], f"items[{i}].bundle")
    # The types this response's own items charge are named before its empties (one price per type, §15).
    answered = {**stored.delivery, "responses": [*stored.delivery.get("responses", []), {"items": items}]}
    try:
        empties = collected(account, body, deposits.known_types(answered, stored.deposit_basis))
    except ValidationFailed as failed:
        errors += failed.errors
    if errors:  # every field problem at once (decisions §3)
        raise ValidationFailed(errors)
    from .deposits import new_empties_check

    return items, empties, new_empties_check(account, body.empties, stored.delivery, stored.deposit_basis)


def collected(account: str, body, known: dict, usable: dict | None = None) -> list[dict] | None:
    """A response's empties, each type with the name and price the delivery first named it with, or as it is now
    when this response names it first (decisions §15); the types are read only when it has some (`usable`: the
    account's types that may be named, when the caller read them already)."""
    if body.empties is None:
        return None
    if usable is None:
        usable = deposit_store.read_types(account, usable_only=True) if body.empties else {}
    types = usable
    errors = deposit_shapes.empties_errors(body.empties, types, "empties", 0)
    if errors:
        raise ValidationFailed(errors)
    entries = deposit_shapes.empties_entries(body.empties, {**types, **known})
    errors = deposit_shapes.empties_size_errors(entries, "empties")
    if errors:
        raise ValidationFailed(errors)
    return entries


def _customer_action(field: str, next_status: Callable[[str], str], change_type: ChangeType):
    """A customer's cancel or receive (decisions §8): the same read, check and write; only the step differs."""

    def step(current: dict, now, body: CustomerActionBody) -> dict:
        status = next_status(current["status"])
        action = delivery.customer_action(now, body, current["customer"].get("contact"))
        return delivery.close(current, field, status, action)

    def act(
        account: str,
        customer_id: str,
        delivery_id: str,
        data,
        idempotency: IdempotencyClaim | None = None,
        if_match: str | None = None,
    ) -> dict:
        body = parse(CustomerActionBody, data)
        stored = _read(account, delivery_id, customer_id, consistent=True)
        return _change(
            account,
            stored,
            _as_it_was(lambda d, now: step(d, now, body)),
            change_type,
            idempotency,
            by_customer=True,
            if_match=if_match,
            by=CUSTOMER_BY if change_type == ChangeType.DELIVERY_DELIVERED else None,
        )

    return act


cancel = _customer_action("cancelled", delivery.status_after_cancel, ChangeType.DELIVERY_CANCELLED)
receive = _customer_action("received", delivery.status_after_receive, ChangeType.DELIVERY_DELIVERED)


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
    read = stored = _read(account, delivery_id, consistent=True)  # the PUT is that read and one transaction

    def attempt() -> dict | outcomes.Refusal:
        nonlocal stored
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
        entry = Change(
            ChangeType.DELIVERY_INTEGRATION,
            str(stored.delivery["id"]),
            stored.delivery["status"],
            integration=state["status"],
        )
        operations = delivery_writes.updating(account, stored.delivery["id"], stored.version, None, write)
        outcome = write_units.commit(account, now, operations, [entry])
        if outcome is None:
            return state
        if isinstance(outcome, contention.lost_races()):
            stored = fresh(account, stored)
            if body.status != integration_state.PENDING and integration_state.changed_by_customer(
                read.delivery, stored.delivery
            ):
                raise Busy(CHANGED_BY_CUSTOMER)
        return outcome

    return answered(contention.retried(attempt, minimum=MAX_ATTEMPTS, seconds=CONTENTION_SECONDS, busy=KEPT_CHANGING))


def order_file(account: str, delivery_id: str, encoding: str) -> tuple[int, bytes]:
    """(delivery id, file bytes) of the CSV order file in `encoding` (utf-8 or latin1)."""
    found = _read(account, delivery_id).delivery
    return found["id"], build_order_file(found, encoding)
