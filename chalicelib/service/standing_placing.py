"""Use case: place the dates of standing orders whose placing moment has come (decisions §17).

Each date is placed as the customer would place it (service/ordering.place_order: the same checks, the prices
of the moment), as one delivery: the lines that cannot go that day (their product INACTIVE, deleted, OUT_OF_STOCK,
or not delivered that day) are left out and listed on the date, and a date with nothing left FAILS. It is placed
under an Idempotency-Key of its own per customer, standing order id and date, claimed before placing; the order's
own transaction holds the key's answer, the date's PLACED outcome and a check that the standing order is as the
turn read it, so whatever runs at once, crashes, restarts or is deleted and written again, a date is placed at most
once. A FAILED date is recorded after its key's answer, with its `standing-order.failed` entry (a placer that finds
the answer left by one that crashed records it from there); a failed date is never moved to another day.
"""

import datetime as dt
import json
import logging
from dataclasses import dataclass

from ..domain import standing_calendar as calendar_rules
from ..domain import standing_orders as rules
from ..domain.common import dump
from ..domain.errors import Busy, FieldError, ValidationFailed
from ..domain.feed import Change, ChangeType
from ..domain.rendering import json_text
from ..domain.timestamps import iso, local_iso
from ..domain.values import ProductStatus
from ..store import outcomes
from ..store import standing_orders as store
from ..store.unit_of_work import unit_of_work
from . import clock, idempotency, ordering
from .standing_orders import calendar_of, horizon

log = logging.getLogger("supplier-ordering.standing-orders")

SCOPE = rules.PLACING_SCOPE
PER_TURN = 3  # dates of one standing order placed in one turn; the rest wait for its next turn
PLACED, FAILED = rules.OccurrenceStatus.PLACED.value, rules.OccurrenceStatus.FAILED.value
NOTHING_LEFT = FieldError("items", "none of its lines can go on this date")
Reason = rules.LeftOutReason


@dataclass(frozen=True)
class Turn:
    placed: int = 0
    failed: int = 0
    busy: int = 0


def due(limit: int) -> list[store.Due]:
    return store.due(clock.now(), limit)


def take_turn(item: store.Due) -> Turn:
    """One turn of a queue entry: a standing order's, or an account's look again after its rules changed."""
    return recheck(item) if item.recheck else place_due(item)


def recheck(item: store.Due) -> Turn:
    """The account's delivery rules changed: every queued standing order of it comes to the front of the queue,
    where its turn computes its moments from the rules as they now stand (decisions §17: within a minute). The
    entry goes when done, unless the rules changed again meanwhile."""
    token = store.recheck_token(item.account)
    if token is None:
        return Turn()
    now = clock.now()
    for customer_id, standing_id, _ in store.queued(item.account):
        store.look_now(item.account, customer_id, standing_id, now)
    store.rechecked(item.account, token)
    return Turn()


def place_due(item: store.Due) -> Turn:
    """One turn of one standing order: place its due dates (at most PER_TURN), then put it back in the queue
    at its next placing moment."""
    stored = store.get(item.account, item.customer_id, item.standing_id)
    now = clock.now()
    if stored is None or stored.due is None or stored.due > iso(now):
        return Turn()  # deleted, paused or moved on by another placer or a write since the queue was read
    context = _context(item, stored)
    calendar = calendar_of(item.account, item.customer_id, stored.data, stored.first_day, context)
    recorded = store.records(item.account, item.customer_id, item.standing_id, *horizon(calendar, now))
    skips = set(stored.skips)
    counts = {PLACED: 0, FAILED: 0, "busy": 0}
    if not stored.data["paused"]:
        for date in calendar_rules.due_dates(calendar.open_dates(now, recorded, skips), now)[:PER_TURN]:
            outcome = place_date(item, stored, date, context, calendar)
            if outcome is None:
                counts["busy"] += 1
                continue
            recorded[date.isoformat()] = outcome
            counts[outcome["status"]] += 1
    now = clock.now()
    next_moment = calendar_rules.next_due(
        calendar.open_dates(now, recorded, skips), stored.data["paused"], stored.data["ends_on"], now
    )
    if counts["busy"] and next_moment is not None:
        next_moment = max(next_moment, now + dt.timedelta(seconds=5))  # another placer holds the date: look again soon
    store.update(
        item.account,
        item.customer_id,
        item.standing_id,
        stored,
        stored.skips,
        iso(next_moment) if next_moment else None,
    )
    return Turn(counts[PLACED], counts[FAILED], counts["busy"])


def _context(item: store.Due, stored: store.Stored):
    """What the dates are placed against, read once for the turn (its orders are planned with it)."""
    return ordering.load_context(item.account, item.customer_id, [line["id"] for line in stored.data["items"]])


def _key(item: store.Due, date: dt.date) -> str:
    """Per customer, standing order id and date: not per creation (decisions §17)."""
    return rules.placing_key(item.customer_id, item.standing_id, date.isoformat())


def place_date(item: store.Due, stored: store.Stored, date: dt.date, context, calendar) -> dict | None:
    """Place one date and record its outcome; None when another placer holds it right now, or the standing order
    changed since the turn read it (a skip, pause or replacement: the next turn decides)."""
    key = _key(item, date)
    try:
        claim = idempotency.begin(item.account, SCOPE, key, key)
    except Busy:
        return None
    if isinstance(claim, idempotency.Replay):
        outcome = _replayed(claim)
    else:
        outcome = _placed(item, stored, date, context, calendar, claim)
        if outcome is None or outcome["status"] == PLACED:
            return outcome  # a placed date's outcome is recorded in the order's own write
    return _recorded(item, stored, date, calendar, outcome)


def _recorded(item: store.Due, stored: store.Stored, date: dt.date, calendar, outcome: dict) -> dict | None:
    """Record a failed date (with its `standing-order.failed` entry), or one an earlier placer left in its key's
    answer; None when the write was contended or the standing order changed since the turn read it (a replacement
    may have made the date open again: the next turn decides)."""
    changes, shown, day = [], None, date.isoformat()
    if outcome["status"] == FAILED:
        changes = [Change(ChangeType.STANDING_ORDER_FAILED, item.standing_id, customer_id=item.customer_id, date=day)]
        place_at = local_iso(calendar.place_at(date), calendar.zone)
        shown = rules.occurrence(date, rules.OccurrenceStatus.FAILED, place_at, outcome)
    now = clock.now()
    with unit_of_work(item.account, now) as uow:
        pinned = stored.content_version
        uow.add(*store.recording(item.account, item.customer_id, item.standing_id, day, outcome, now, shown, pinned))
        uow.record(*changes)
        refused = uow.commit()  # Taken: another placer recorded the date first; Changed: written or deleted meanwhile
    return None if isinstance(refused, (outcomes.Contended, outcomes.Changed)) else outcome


def _replayed(replay: idempotency.Replay) -> dict:
    """The outcome an earlier placer's answer holds (it placed, or failed, and crashed before recording)."""
    body = json.loads(replay.body)
    if replay.status == 200:
        outcome = {"status": PLACED, "delivery_ids": [delivery["id"] for delivery in body["deliveries"]]}
    else:
        outcome = {"status": FAILED, "errors": body.get("errors", [])}
    return _with_left_out(outcome, body.get("left_out") or [])


def _lines(standing: dict, context, date: dt.date, calendar) -> tuple[dict, list[int], list[dict]]:
    """The order of the date without the lines that cannot go on it, the standing order's index of each line
    kept, and each line left out with its reason (decisions §17)."""
    kept, positions, left_out = [], [], []
    for index, line in enumerate(standing["items"]):
        product = context.products.get(line["id"])
        if product is None:
            reason = Reason.DELETED
        elif product.get("status") != ProductStatus.ACTIVE:
            reason = Reason.INACTIVE if product.get("status") == ProductStatus.INACTIVE else Reason.OUT_OF_STOCK
        elif not calendar.delivers(date, product):
            reason = Reason.NOT_DELIVERABLE
        else:
            kept.append(line)
            positions.append(index)
            continue
        left_out.append({"id": line["id"], "reason": str(reason)})
    return {**standing, "items": kept}, positions, left_out


def _renumbered(error: FieldError, positions: list[int]) -> FieldError:
    """An error of the placed order in the standing order's words: its items by their index in it, and the date
    (the order's `scheduled.date`) as `scheduled`, as decisions §17 names an undeliverable date."""
    if error.path.startswith("scheduled"):
        return FieldError("scheduled", error.message)
    if error.path.startswith("items["):
        index, rest = error.path[len("items[") :].split("]", 1)
        if index.isdigit() and int(index) < len(positions):
            return FieldError(f"items[{positions[int(index)]}]{rest}", error.message)
    return error


def _with_left_out(outcome: dict, left_out: list[dict]) -> dict:
    return {**outcome, "left_out": left_out} if left_out else outcome


def _failed(claim, errors: list[FieldError], left_out: list[dict]) -> dict:
    """A FAILED date, kept in the key's answer too (a placer that crashes before recording finds it there)."""
    shown = _with_left_out({"errors": [{"path": e.path, "message": e.message} for e in errors]}, left_out)
    idempotency.finish(claim, 400, {"Content-Type": "application/json"}, json_text(shown), work_failed=True)
    return {"status": FAILED, **shown}


def _placed(item: store.Due, stored: store.Stored, date: dt.date, context, calendar, claim) -> dict | None:
    """Place the date's one delivery with the lines that can go; re-read once when a line changed under it (a
    product gone or out of stock between the turn's read and the order's own)."""
    for attempt in range(2):
        standing, positions, left_out = _lines(stored.data, context, date, calendar)
        if not standing["items"] and not (standing.get("empties") and standing["type"] == "RETURN"):
            return _failed(claim, [NOTHING_LEFT], left_out)
        body = dump(rules.order_body(standing, date))
        day = date.isoformat()

        def also(ids: list[int]) -> list:
            """The standing order still as the turn read it, and the date's outcome, in the order's own write."""
            placed = _with_left_out({"status": PLACED, "delivery_ids": ids}, left_out)
            unchanged = store.unchanged_check(item.account, item.customer_id, item.standing_id, stored)
            return [
                unchanged,
                *store.recording(item.account, item.customer_id, item.standing_id, day, placed, clock.now()),
            ]

        placing = ordering.Placing({"id": item.standing_id, "date": day}, context, also)
        try:
            placed = ordering.place_order(item.account, item.customer_id, body, claim, placing)
        except ValidationFailed as failed:
            lines_changed = all(error.path.endswith("].id") for error in failed.errors)
            if lines_changed and attempt == 0:
                context = _context(item, stored)
                continue
            return _failed(claim, [_renumbered(error, positions) for error in failed.errors], left_out)
        except Exception:  # noqa: BLE001 - busy or a store fault: the date waits for the next turn
            idempotency.abandon(claim)
            log.exception(
                "placing %s of standing order %s of %s failed; tried again", date, item.standing_id, item.account
            )
            return None
        return _with_left_out({"status": PLACED, "delivery_ids": [delivery["id"] for delivery in placed]}, left_out)
    return None
