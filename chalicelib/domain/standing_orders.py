"""Standing orders (decisions §17): their shape, the calendar of counted dates and each date's placing moment.

Pure: the time, the account's settings and the products arrive as parameters. A standing order is a plain dict
as the API shows it (every field, defaults filled in).
"""

import datetime as dt
from enum import StrEnum
from typing import Annotated, Mapping, Sequence
from zoneinfo import ZoneInfo

from pydantic import Field, Strict

from . import limits, schedule
from .common import FieldError, IsoDate, Shape, ShortText, Text, ValidationFailed, dump, parse
from .customer import Address
from .delivery import DELIVERY, DeliveryType, OrderBody, OrderItem, User
from .deposit_types import Empties, ItemDeposit
from .rendering import size_in_bytes
from .timestamps import local_iso
from .values import literal

MAX_PER_CUSTOMER = 50
MAX_SKIPS = 100  # skipped dates still to come, per standing order
STANDING_ORDER_BYTES = limits.LISTED_BYTES  # one standing order as reads show it: 100 of them fit a page
OCCURRENCE_DAYS = 92  # the longest from..to of GET .../occurrences (inclusive days apart)
DEFAULT_OCCURRENCE_DAYS = 27
# Every counted date of an open-ended order is at most every_weeks (8) weeks from the previous one.
NEXT_HORIZON_DAYS = 8 * 7 + 7
RECHECK = dt.timedelta(hours=24)  # a planned date is looked at again at least this often (rules may change)


class OccurrenceStatus(StrEnum):
    PLANNED = "PLANNED"
    SKIPPED = "SKIPPED"
    PLACED = "PLACED"
    FAILED = "FAILED"
    MISSED = "MISSED"
    PAUSED = "PAUSED"


Weekday = Annotated[int, Strict(), Field(ge=0, le=6)]


class StandingOrderBody(Shape):
    """PUT /customer/standing-orders/:id."""

    name: ShortText | None = None
    items: Annotated[list[OrderItem], Field(max_length=limits.ORDER_ITEMS)] = Field(default_factory=list)
    weekdays: Annotated[list[Weekday], Field(min_length=1, max_length=7)] = Field(
        description="0 (Sunday) to 6 (Saturday), distinct"
    )
    every_weeks: Annotated[int, Strict(), Field(ge=1, le=8)] = 1
    starts_on: IsoDate
    ends_on: IsoDate | None = None
    place_days_ahead: Annotated[int, Strict(), Field(ge=0, le=14)] = 2
    paused: Annotated[bool, Strict()] = False
    type: literal(DeliveryType) = DELIVERY.value
    empties: Empties | None = None
    message: Text | None = None
    cost_center: ShortText | None = None
    company: ShortText | None = None
    address: Address | None = None
    user: User


class StandingOrderBundle(Shape):
    id: str | None = None
    type: str | None = None
    size: float | None = None


class StandingOrderLine(Shape):
    """An item as written: the order's item (decisions §8)."""

    id: str
    count: float
    bundle: StandingOrderBundle | None = None
    message: str | None = None
    substitute: bool | None = Field(default=None, description="false: the line may not be substituted (decisions §18)")


class StandingOrder(Shape):
    """A standing order as reads show it: every field, defaults included."""

    id: str
    customer_id: str
    name: str | None
    items: list[StandingOrderLine]
    weekdays: list[int]
    every_weeks: int
    starts_on: IsoDate
    ends_on: IsoDate | None
    place_days_ahead: int
    paused: bool
    type: literal(DeliveryType)
    empties: list[ItemDeposit] | None
    message: str | None
    cost_center: str | None
    company: str | None
    address: Address | None
    user: User
    created: str
    updated: str


class StandingOrderList(Shape):
    standing_orders: list[StandingOrder]
    cursor: str | None = None


class OccurrenceError(Shape):
    path: str
    message: str


class Occurrence(Shape):
    date: IsoDate
    status: literal(OccurrenceStatus)
    place_at: str = Field(description="The placing moment, RFC 3339 with the account's offset")
    delivery_ids: list[int] | None = None
    errors: list[OccurrenceError] | None = None


class OccurrenceList(Shape):
    occurrences: list[Occurrence]


class SkipBody(Shape):
    """PUT /customer/standing-orders/:id/occurrences/:date."""

    skip: Annotated[bool, Strict()]


ORDER_FIELDS = ("type", "items", "empties", "message", "cost_center", "company", "address", "user")


def parse_body(data) -> StandingOrderBody:
    """The body's own rules (the order's rules are checked against the catalogue by the service)."""
    body = parse(StandingOrderBody, data)
    errors = []
    if len(set(body.weekdays)) != len(body.weekdays):
        errors.append(FieldError("weekdays", "must not repeat a weekday"))
    if body.ends_on is not None and body.ends_on < body.starts_on:
        errors.append(FieldError("ends_on", "must not be before starts_on"))
    if errors:
        raise ValidationFailed(errors)
    return body


def order_body(standing: Mapping, scheduled: dt.date | None = None) -> OrderBody:
    """The order a standing order places (on `scheduled`), as the customer would send it."""
    data = {name: standing[name] for name in ORDER_FIELDS if standing.get(name) is not None}
    if scheduled is not None:
        data["scheduled"] = {"date": scheduled.isoformat()}
    return OrderBody.model_validate(data)


def shown(body: StandingOrderBody, standing_id: str, customer_id: str, created: str, updated: str) -> dict:
    """Every field, defaults included, in the order reads show them; ValidationFailed when too large."""
    given = dump(body)
    document = {"id": standing_id, "customer_id": customer_id}
    for name in StandingOrderBody.model_fields:
        document[name] = given.get(name)
    document["created"], document["updated"] = created, updated
    errors = limits.size_errors(document, STANDING_ORDER_BYTES, "body", "a standing order holds")
    if errors:
        raise ValidationFailed(errors)
    return document


# --- the calendar ---


def _monday(date: dt.date) -> dt.date:
    return date - dt.timedelta(days=date.weekday())


def counts(standing: Mapping, date: dt.date, first_day: dt.date) -> bool:
    """Whether `date` is a counted date: a chosen weekday, in the period, in a week a whole number of
    every_weeks after starts_on's week, and not before the day the standing order was first written."""
    starts_on = dt.date.fromisoformat(standing["starts_on"])
    ends_on = standing.get("ends_on")
    if date < starts_on or date < first_day or (ends_on and date > dt.date.fromisoformat(ends_on)):
        return False
    if date.isoweekday() % 7 not in standing["weekdays"]:
        return False
    weeks = (_monday(date) - _monday(starts_on)).days // 7
    return weeks % int(standing["every_weeks"]) == 0


def counted_dates(standing: Mapping, first_day: dt.date, start: dt.date, end: dt.date) -> list[dt.date]:
    days = (end - start).days
    candidates = (start + dt.timedelta(days=n) for n in range(days + 1))
    return [date for date in candidates if counts(standing, date, first_day)]


def cutoff_moment(
    date: dt.date, products: Sequence[Mapping], customer: Mapping | None, settings: Mapping
) -> dt.datetime | None:
    """The moment an order for `date` must be in (decisions §7), the strictest item deciding; None when some
    item is not delivered on `date` at all (no rule, or a date with no delivery)."""
    zone = ZoneInfo(schedule.account_timezone(settings))
    moments = []
    for product in products or [{}]:
        levels = [level for level in (product, customer, settings) if level is not None]
        if any(date.isoformat() in (level.get("dates_with_no_delivery") or ()) for level in levels):
            return None
        rule = schedule.rule_for(date, product, customer, settings)
        if rule is None:
            return None
        day = date - dt.timedelta(days=rule["lead_days"])
        hours, minutes = rule["cutoff"].split(":")
        # The cutoff minute is still in time (§7 compares minutes): its last second is the moment.
        moments.append(dt.datetime.combine(day, dt.time(int(hours), int(minutes), 59), zone))
    return min(moments)


def placing_moment(date: dt.date, cutoff: dt.datetime | None, days_ahead: int, zone_name: str) -> dt.datetime:
    """place_days_ahead calendar days before the cutoff, at the same local time. A date nobody can order for has
    no cutoff: its placing moment is taken from the default rule (23:59 on the day, §7), where it fails."""
    zone = ZoneInfo(zone_name)
    if cutoff is None:
        cutoff = dt.datetime.combine(date, dt.time(23, 59), zone)
    local = cutoff.astimezone(zone).replace(tzinfo=None) - dt.timedelta(days=days_ahead)
    moment = local.replace(second=0).replace(tzinfo=zone)
    return moment


def status_of(
    date: dt.date, record: Mapping | None, skipped: bool, paused: bool, cutoff: dt.datetime | None, now: dt.datetime
) -> OccurrenceStatus:
    if record is not None:
        return OccurrenceStatus(record["status"])
    if skipped:
        return OccurrenceStatus.SKIPPED
    if cutoff is not None and now > cutoff:
        return OccurrenceStatus.MISSED
    return OccurrenceStatus.PAUSED if paused else OccurrenceStatus.PLANNED


def occurrence(
    date: dt.date, status: OccurrenceStatus, place_at: dt.datetime, zone: str, record: Mapping | None
) -> dict:
    shown_ = {"date": date.isoformat(), "status": str(status), "place_at": local_iso(place_at, zone)}
    if record is not None and record.get("delivery_ids") is not None:
        shown_["delivery_ids"] = [int(i) for i in record["delivery_ids"]]
    if record is not None and record.get("errors"):
        shown_["errors"] = [{"path": e["path"], "message": e["message"]} for e in record["errors"]]
    return shown_


def occurrence_range(today: dt.date, start: str | None, end: str | None) -> tuple[dt.date, dt.date]:
    """from (default today) and to (default from + 27 days), at most OCCURRENCE_DAYS apart."""
    first = _date_param("from", start) if start is not None else today
    last = _date_param("to", end) if end is not None else first + dt.timedelta(days=DEFAULT_OCCURRENCE_DAYS)
    if last < first:
        raise ValidationFailed([FieldError("to", "must not be before from")])
    if (last - first).days > OCCURRENCE_DAYS:
        raise ValidationFailed([FieldError("to", f"must be at most {OCCURRENCE_DAYS} days after from")])
    return first, last


def _date_param(name: str, value: str) -> dt.date:
    try:
        if len(value) != 10:
            raise ValueError
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed([FieldError(name, "must be a date YYYY-MM-DD")]) from None


def kept_skips(skips, first: dt.date) -> list[str]:
    """Skipped dates from `first` on (earlier ones no longer matter), sorted."""
    return sorted(date for date in set(skips or ()) if date >= first.isoformat())


def skip_errors(skips: list[str]) -> list[FieldError]:
    if len(skips) > MAX_SKIPS:
        return [FieldError("skip", f"a standing order keeps at most {MAX_SKIPS} skipped dates still to come")]
    return []


def size_ok(document: Mapping) -> bool:
    return size_in_bytes(document) <= STANDING_ORDER_BYTES


# --- what the placer does next ---

# Lead days reach a year (§7), so a date's placing moment may come that long before it.
LOOK_AHEAD_DAYS = 366 + 14 + NEXT_HORIZON_DAYS


class Calendar:
    """One standing order's dates against the rules as they are now: cutoffs and placing moments."""

    def __init__(self, standing: Mapping, first_day: dt.date, products: Sequence[Mapping], customer, settings: Mapping):
        self.standing, self.first_day = standing, first_day
        self.products, self.customer, self.settings = products, customer, settings
        self.zone = schedule.account_timezone(settings)
        self._cutoffs: dict[dt.date, dt.datetime | None] = {}

    def today(self, now: dt.datetime) -> dt.date:
        return schedule.local_now(now, self.zone).date()

    def dates(self, start: dt.date, end: dt.date) -> list[dt.date]:
        return counted_dates(self.standing, self.first_day, start, end)

    def cutoff(self, date: dt.date) -> dt.datetime | None:
        if date not in self._cutoffs:
            self._cutoffs[date] = cutoff_moment(date, self.products, self.customer, self.settings)
        return self._cutoffs[date]

    def reach_days(self) -> int:
        """How far ahead a date can have its placing moment within RECHECK: the longest lead days of any rule,
        place_days_ahead, and a day either side."""
        leads = [0]
        for level in (*self.products, self.customer or {}, self.settings):
            for rules_ in (level.get("delivery_days") or {}, level.get("delivery_date_overrides") or {}):
                leads += [int(rule.get("lead_days", 0)) for rule in rules_.values()]
        return max(leads) + int(self.standing["place_days_ahead"]) + 2

    def last_moment(self, date: dt.date) -> dt.datetime:
        """Until when the date may still be placed: its cutoff (for an undeliverable date, the default one,
        when its placing fails and is recorded)."""
        return self.cutoff(date) or dt.datetime.combine(date, dt.time(23, 59, 59), ZoneInfo(self.zone))

    def place_at(self, date: dt.date) -> dt.datetime:
        return placing_moment(date, self.cutoff(date), int(self.standing["place_days_ahead"]), self.zone)

    def open_dates(self, now: dt.datetime, recorded, skips) -> list[tuple[dt.date, dt.datetime]]:
        """(date, placing moment) of each date still to place (not recorded, skipped or past its last moment)
        whose moment may come within RECHECK, in date order: later dates are looked at in a later turn."""
        today = self.today(now)
        result = []
        for date in self.dates(today, today + dt.timedelta(days=min(self.reach_days(), LOOK_AHEAD_DAYS))):
            key = date.isoformat()
            if key in recorded or key in skips or now > self.last_moment(date):
                continue
            result.append((date, self.place_at(date)))
        return result


def due_dates(open_dates, now: dt.datetime) -> list[dt.date]:
    return [date for date, moment in open_dates if moment <= now]


def next_due(open_dates, paused: bool, ends_on: str | None, now: dt.datetime) -> dt.datetime | None:
    """When the placer should look at the standing order next: the earliest placing moment still to come (at
    the latest RECHECK from now, as the rules may change), None when paused or nothing can come any more."""
    if paused:
        return None
    moments = [moment for _, moment in open_dates]
    if not moments:
        ended = ends_on is not None and dt.date.fromisoformat(ends_on) < now.date()
        return None if ended else now + RECHECK
    return min(min(moments), now + RECHECK)
