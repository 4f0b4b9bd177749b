"""Use cases of standing orders (decisions §17): write, read, pause and delete them, list their dates, skip one.

The order a standing order places is checked as an order is (domain/ordering.plan_order) when it is written;
placing its dates is service/standing_placing.py.
"""

import datetime as dt
from typing import Callable

from ..domain import schedule
from ..domain import standing_calendar as calendar_rules
from ..domain import standing_orders as rules
from ..domain.common import FieldError, dump, parse
from ..domain.errors import InvalidTransition, NotFound, ValidationFailed, invalid
from ..domain.feed import Change, ChangeType
from ..domain.identifiers import ID_RULE, is_identifier
from ..domain.timestamps import iso, local_iso
from ..domain.values import ProductStatus
from ..store import customers, order_context, outcomes
from ..store import standing_orders as store
from ..store.paging import Page
from ..store.unit_of_work import unit_of_work
from . import clock, contention
from .paging import paged

WRITE_ATTEMPTS = 10  # another write of the same standing order came between our read and our write
BUSY = "this standing order is being changed by another request; try again"


def not_found(standing_id: str) -> NotFound:
    return NotFound(f"standing order {standing_id} does not exist")


def _customer_not_found(customer_id: str) -> NotFound:
    return NotFound(f"customer {customer_id} does not exist")


def calendar_of(
    account: str, customer_id: str, standing: dict, first_day: str, context=None
) -> calendar_rules.Calendar:
    """The dates against the rules of now. Only ACTIVE items have dates to keep (the others are left out of what it
    places), so they alone decide the cutoff."""
    if context is None:
        ids = [item["id"] for item in standing["items"]]
        context = order_context.load(account, customer_id, ids, read_pricing=False)
    products = [context.products.get(item["id"]) for item in standing["items"]]
    active = [p for p in products if p is not None and p.get("status") == ProductStatus.ACTIVE]
    return calendar_rules.Calendar(
        standing, dt.date.fromisoformat(first_day), active, context.customer, context.settings
    )


def horizon(calendar: calendar_rules.Calendar, now: dt.datetime) -> tuple[str, str]:
    today = calendar.today(now)
    return today.isoformat(), (today + dt.timedelta(days=calendar_rules.LOOK_AHEAD_DAYS)).isoformat()


def _found(account: str, customer_id: str, standing_id: str) -> store.Stored:
    stored = store.get(account, customer_id, standing_id) if is_identifier(standing_id) else None
    if stored is None:
        raise not_found(standing_id)
    return stored


def _check_customer(account: str, customer_id: str) -> None:
    if not is_identifier(customer_id) or customers.get(account, customer_id) is None:
        raise _customer_not_found(customer_id)


def _write(
    account: str,
    customer_id: str,
    standing_id: str,
    written: Callable[[store.Stored | None, dt.datetime], tuple[dict, object] | None],
    replacing: bool = False,
) -> dict:
    """Create or replace the standing order with `written(previous, now)`: (its document, the context it was
    checked against), or None when nothing changes. Placed dates stay placed (and so do those a standing order
    deleted under the id placed), skips of dates that still count are kept, and its place in the queue follows.
    `replacing` (a PUT): FAILED dates whose cutoff has not passed were not placed, so they count again (`_reopened`)
    and the replacement places them."""

    def attempt() -> dict | outcomes.Refusal:
        previous = store.get(account, customer_id, standing_id)
        now = clock.now()
        made = written(previous, now)
        if made is None:
            return previous.data
        document, context = made
        first_day = previous.first_day if previous else schedule.account_today(now, context.settings).isoformat()
        calendar = calendar_of(account, customer_id, document, first_day, context)
        today = calendar.today(now)
        skips = []
        if previous is not None:
            kept = rules.kept_skips(previous.skips, today)
            skips = [
                day for day in kept if calendar_rules.counts(document, dt.date.fromisoformat(day), calendar.first_day)
            ]
        recorded = store.records(account, customer_id, standing_id, *horizon(calendar, now))
        reopened = _reopened(calendar, recorded, now) if replacing else []
        for day in reopened:
            del recorded[day]
        due = calendar_rules.next_due(
            calendar.open_dates(now, recorded, set(skips)), document["paused"], document["ends_on"], now
        )
        version = previous.version + 1 if previous else 1
        stored = store.Stored(document, first_day, skips, version, iso(due) if due else None)
        kind = ChangeType.STANDING_ORDER_CREATED if previous is None else ChangeType.STANDING_ORDER_UPDATED
        with unit_of_work(account, now) as uow:
            uow.add(*store.putting(account, customer_id, standing_id, stored, previous))
            for day in reopened:
                key = rules.placing_key(customer_id, standing_id, day)
                uow.add(*store.reopening(account, customer_id, standing_id, day, rules.PLACING_SCOPE, key))
            uow.record(Change(kind, standing_id, customer_id=customer_id))
            refused = uow.commit()
        if isinstance(refused, outcomes.Full):
            raise invalid("id", f"a customer has at most {rules.MAX_PER_CUSTOMER} standing orders; delete one first")
        return refused or document

    return _retried(attempt)


def _reopened(calendar: calendar_rules.Calendar, recorded: dict[str, dict], now: dt.datetime) -> list[str]:
    """The FAILED dates a replacement places again: those whose cutoff under it has not passed (one the rules
    deliver nothing on has none: it shows UNDELIVERABLE). A placed date's outcome always stays."""
    reopened = []
    for day, record in sorted(recorded.items()):
        if record["status"] != rules.OccurrenceStatus.FAILED:
            continue
        cutoff = calendar.cutoff(dt.date.fromisoformat(day))
        if cutoff is None or now <= cutoff:
            reopened.append(day)
    return reopened


def _retried(attempt):
    """Any refusal but Full (answered in the attempt) means another write of it came between: read again."""
    return contention.retried(attempt, again=(outcomes.Refusal,), minimum=WRITE_ATTEMPTS, seconds=0, busy=BUSY)


def put_standing_order(account: str, customer_id: str, standing_id: str, data) -> dict:
    """Create or replace (decisions §17): checked as an order is, and refused naming `weekdays` when the rules
    deliver nothing on any of its dates in the next OCCURRENCE_DAYS days."""
    from ..domain.ordering import plan_order
    from .ordering import load_context, with_item_problems

    if not is_identifier(standing_id):
        raise invalid("id", ID_RULE)
    try:
        body = rules.parse_body(data)
    except ValidationFailed as failed:  # its items' catalogue problems too (decisions §3)
        raise with_item_problems(account, customer_id, data, failed, True) from None
    context = load_context(account, customer_id, [item.id for item in body.items])
    plan_order(rules.order_body(dump(body)), customer_id, context, clock.now())  # the order's own checks

    def written(previous: store.Stored | None, now: dt.datetime) -> tuple[dict, object]:
        created = previous.data["created"] if previous else iso(now)
        document = rules.shown(body, standing_id, customer_id, created, iso(now))
        first_day = previous.first_day if previous else schedule.account_today(now, context.settings).isoformat()
        calendar = calendar_of(account, customer_id, document, first_day, context)
        if calendar.all_undeliverable(calendar.today(now), rules.OCCURRENCE_DAYS):
            message = f"the supplier delivers none of it on any of its dates in the next {rules.OCCURRENCE_DAYS} days"
            raise ValidationFailed([FieldError("weekdays", message)])
        return document, context

    return _write(account, customer_id, standing_id, written, replacing=True)


def pause(account: str, customer_id: str, standing_id: str, data) -> dict:
    """The supplier pauses a bar's standing order, or resumes it (decisions §17): 200 with it; the same again
    changes nothing. Resumed, dates whose placing moment passed while it was paused are placed if their cutoff
    has not."""
    body = parse(rules.PauseBody, data)
    _check_customer(account, customer_id)
    _found(account, customer_id, standing_id)

    def written(previous: store.Stored | None, now: dt.datetime) -> tuple[dict, object] | None:
        if previous is None:
            raise not_found(standing_id)
        if previous.data["paused"] == body.paused:
            return None
        ids = [item["id"] for item in previous.data["items"]]
        context = order_context.load(account, customer_id, ids, read_pricing=False)
        return {**previous.data, "paused": body.paused, "updated": iso(now)}, context

    return _write(account, customer_id, standing_id, written)


def get_standing_order(account: str, customer_id: str, standing_id: str) -> dict:
    return _found(account, customer_id, standing_id).data


def get_customers_standing_order(account: str, customer_id: str, standing_id: str) -> dict:
    """The supplier's read: 404 for an unknown customer too."""
    _check_customer(account, customer_id)
    return get_standing_order(account, customer_id, standing_id)


@paged
def list_standing_orders(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    return store.list_page(account, customer_id, limit, cursor)


def list_customers_standing_orders(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    _check_customer(account, customer_id)
    return list_standing_orders(account, customer_id, limit, cursor)


def delete_standing_order(account: str, customer_id: str, standing_id: str) -> None:
    """Deliveries already placed stay, and so do the dates' outcomes: written again under the id, it never places a
    placed date again."""
    change = Change(ChangeType.STANDING_ORDER_DELETED, standing_id, customer_id=customer_id)

    def attempt() -> outcomes.Refusal | None:
        previous = _found(account, customer_id, standing_id)
        with unit_of_work(account, clock.now()) as uow:
            uow.add(*store.deleting(account, customer_id, standing_id, previous))
            uow.record(change)
            return uow.commit()

    _retried(attempt)


def delete_customers_standing_order(account: str, customer_id: str, standing_id: str) -> None:
    """The supplier ends a bar's standing order (decisions §17)."""
    _check_customer(account, customer_id)
    delete_standing_order(account, customer_id, standing_id)


def _occurrence(calendar: calendar_rules.Calendar, date: dt.date, record, skipped: bool, paused: bool, now) -> dict:
    status = rules.status_of(record, skipped, paused, calendar.cutoff(date), now)
    place_at = local_iso(calendar.place_at(date), calendar.zone)
    shown_record = record if record is not None and status == record["status"] else None  # not a skipped failure's
    return rules.occurrence(date, status, place_at, shown_record)


def occurrences(account: str, customer_id: str, standing_id: str, start: str | None, end: str | None) -> dict:
    """Every counted date from `start` to `end` (and any placed or failed date there that a replacement no
    longer counts), in date order."""
    stored = _found(account, customer_id, standing_id)
    now = clock.now()
    calendar = calendar_of(account, customer_id, stored.data, stored.first_day)
    first, last = rules.occurrence_range(calendar.today(now), start, end)
    recorded = store.records(account, customer_id, standing_id, first.isoformat(), last.isoformat())
    dates = sorted(set(calendar.dates(first, last)) | {dt.date.fromisoformat(day) for day in recorded})
    skips, paused = set(stored.skips), stored.data["paused"]
    shown = [_occurrence(calendar, d, recorded.get(d.isoformat()), d.isoformat() in skips, paused, now) for d in dates]
    return {"occurrences": shown}


def customers_occurrences(account: str, customer_id: str, standing_id: str, start: str | None, end: str | None) -> dict:
    _check_customer(account, customer_id)
    return occurrences(account, customer_id, standing_id, start, end)


def skip(account: str, customer_id: str, standing_id: str, day: str, data) -> dict:
    """Skip one counted date, or take the skip back (skip false); a placed date stays as it is (400). A FAILED date
    may be skipped (it was not placed): it shows SKIPPED, and FAILED again when the skip is taken back."""
    body = parse(rules.SkipBody, data)

    def attempt() -> dict | outcomes.Refusal:
        stored = _found(account, customer_id, standing_id)
        now = clock.now()
        calendar = calendar_of(account, customer_id, stored.data, stored.first_day)
        date = _counted_date(calendar, day, standing_id)
        recorded = store.records(account, customer_id, standing_id, *horizon(calendar, now))
        recorded.update(store.records(account, customer_id, standing_id, day, day))
        record = recorded.get(day)
        if record is not None and record["status"] == rules.OccurrenceStatus.PLACED:
            raise InvalidTransition(f"{day} was placed; amend or cancel its delivery instead")
        skips = set(stored.skips) | {day} if body.skip else set(stored.skips) - {day}
        kept = rules.kept_skips(skips, min(calendar.today(now), date))
        errors = rules.skip_errors(kept)
        if errors:
            raise ValidationFailed(errors)
        open_dates = calendar.open_dates(now, recorded, set(kept))
        due = calendar_rules.next_due(open_dates, stored.data["paused"], stored.data["ends_on"], now)
        written = store.update(account, customer_id, standing_id, stored, kept, iso(due) if due else None)
        if isinstance(written, outcomes.Refusal):
            return written
        return _occurrence(calendar, date, record, body.skip, stored.data["paused"], now)

    return _retried(attempt)


def _counted_date(calendar: calendar_rules.Calendar, day: str, standing_id: str) -> dt.date:
    try:
        date = dt.date.fromisoformat(day) if len(day) == 10 else None
    except ValueError:
        date = None
    if date is None or not calendar_rules.counts(calendar.standing, date, calendar.first_day):
        raise NotFound(f"{day} is not a date of standing order {standing_id}")
    return date
