"""Standing orders (decisions §17): their shapes, their occurrences as reads show them, skips and ranges (the
calendar of dates and moments is domain/standing_calendar.py).

Pure: the time, the account's settings and the products arrive as parameters. A standing order is a plain dict
as the API shows it (every field, defaults filled in).
"""

import datetime as dt
import hashlib
from enum import StrEnum
from typing import Annotated, Mapping

from pydantic import Field, Strict

from . import limits
from .common import FieldError, IsoDate, Shape, ShortText, Text, ValidationFailed, dump, parse
from .customer import Address
from .delivery import DELIVERY, DeliveryType, OrderBody, OrderItem, User
from .deposit_types import Empties, ItemDeposit
from .rendering import size_in_bytes
from .values import literal

MAX_PER_CUSTOMER = 50
MAX_SKIPS = 100  # skipped dates still to come, per standing order
STANDING_ORDER_BYTES = limits.LISTED_BYTES  # one standing order as reads show it: 100 of them fit a page
OCCURRENCE_DAYS = 92  # the longest from..to of GET .../occurrences (inclusive days apart)
DEFAULT_OCCURRENCE_DAYS = 27


class OccurrenceStatus(StrEnum):
    PLANNED = "PLANNED"
    SKIPPED = "SKIPPED"
    PLACED = "PLACED"
    FAILED = "FAILED"
    MISSED = "MISSED"
    PAUSED = "PAUSED"
    UNDELIVERABLE = "UNDELIVERABLE"  # the rules as they stand deliver nothing that day: never placed, never moved


class LeftOutReason(StrEnum):
    """Why a line of a standing order was left out of what it placed on a date (decisions §17)."""

    INACTIVE = "INACTIVE"
    DELETED = "DELETED"
    OUT_OF_STOCK = "OUT_OF_STOCK"
    NOT_DELIVERABLE = "NOT_DELIVERABLE"  # a no-delivery date (or weekday) of its own


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


class LeftOut(Shape):
    id: str = Field(description="The line's product id")
    reason: literal(LeftOutReason)


class Occurrence(Shape):
    date: IsoDate
    status: literal(OccurrenceStatus)
    place_at: str = Field(description="The placing moment, RFC 3339 with the account's offset")
    delivery_ids: list[int] | None = None
    left_out: list[LeftOut] | None = Field(default=None, description="Lines that could not go on the date")
    errors: list[OccurrenceError] | None = None


class OccurrenceList(Shape):
    occurrences: list[Occurrence]


class PauseBody(Shape):
    """PATCH /customers/:id/standing-orders/:sid: the supplier pauses a bar's standing order, or resumes it."""

    paused: Annotated[bool, Strict()]


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


UNDELIVERABLE_ERROR = {"path": "scheduled", "message": "is a date on which the supplier delivers none of it"}


PLACING_SCOPE = "standing-order"  # the Idempotency-Key scope of placings


def placing_key(customer_id: str, standing_id: str, date: str) -> str:
    """The Idempotency-Key of placing a date: per customer, standing order id and date, not per creation."""
    return hashlib.sha256(f"{customer_id}/{standing_id}/{date}".encode()).hexdigest()


def status_of(
    record: Mapping | None, skipped: bool, paused: bool, cutoff: dt.datetime | None, now: dt.datetime
) -> OccurrenceStatus:
    """A date's status: a placed date's recorded outcome; UNDELIVERABLE while the rules deliver nothing that day
    (`cutoff` None), a date that failed before included (decisions §17: from the moment the rules say so, in every
    listing); a FAILED one unless the customer skipped the date; else the customer's skip, MISSED once its cutoff
    passed, PAUSED or PLANNED."""
    if record is not None and record["status"] == OccurrenceStatus.FAILED:
        if cutoff is None:
            return OccurrenceStatus.UNDELIVERABLE
        if skipped:
            return OccurrenceStatus.SKIPPED
    if record is not None:
        return OccurrenceStatus(record["status"])
    if cutoff is None:
        return OccurrenceStatus.UNDELIVERABLE
    if skipped:
        return OccurrenceStatus.SKIPPED
    if now > cutoff:
        return OccurrenceStatus.MISSED
    return OccurrenceStatus.PAUSED if paused else OccurrenceStatus.PLANNED


def occurrence(date: dt.date, status: OccurrenceStatus, place_at: str, record: Mapping | None) -> dict:
    """A date as reads show it (`place_at` already in the account's offset)."""
    shown_ = {"date": date.isoformat(), "status": str(status), "place_at": place_at}
    record = record or {}
    if record.get("delivery_ids") is not None:
        shown_["delivery_ids"] = [int(i) for i in record["delivery_ids"]]
    if record.get("left_out") and status != OccurrenceStatus.UNDELIVERABLE:
        shown_["left_out"] = [{"id": line["id"], "reason": line["reason"]} for line in record["left_out"]]
    errors = [UNDELIVERABLE_ERROR] if status == OccurrenceStatus.UNDELIVERABLE else record.get("errors")
    if errors:
        shown_["errors"] = [{"path": e["path"], "message": e["message"]} for e in errors]
    return shown_


def occurrence_range(today: dt.date, start: str | None, end: str | None) -> tuple[dt.date, dt.date]:
    """from (default today) and to (default from + 27 days), at most OCCURRENCE_DAYS apart."""
    first = _date_param("from", start) if start is not None else today
    default_days = min(DEFAULT_OCCURRENCE_DAYS, (dt.date.max - first).days)  # from near the calendar's end: to its end
    last = _date_param("to", end) if end is not None else first + dt.timedelta(days=default_days)
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
