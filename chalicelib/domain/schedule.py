"""Delivery dates (decisions §7).

Pure functions over stored mappings. The account, the customer and the product
each may carry ``delivery_days`` (rules keyed "0" = Sunday .. "6" = Saturday),
``delivery_date_overrides`` (rules keyed by ISO date) and ``dates_with_no_delivery``.
A rule is ``{"lead_days": int, "cutoff"?: "HH:mm"}``.

The current time is always a parameter (an aware datetime); cutoffs and calendar
days are evaluated on the wall clock of the account's time zone.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from itertools import islice
from typing import Mapping, Sequence
from zoneinfo import ZoneInfo, available_timezones

from .delivery_settings import DEFAULT_TIMEZONE
from .limits import MAX_DAYS

DEFAULT_CUTOFF = "23:59"
SCAN_HORIZON_DAYS = 366


def local_now(now: dt.datetime, timezone_name: str) -> dt.datetime:
    """``now`` on the wall clock of ``timezone_name``; a naive time has no defined instant."""
    if now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    return now.astimezone(ZoneInfo(timezone_name))


def rule_for(date: dt.date, product: Mapping, customer: Mapping | None, account: Mapping) -> dict | None:
    """The rule governing ``date``, or ``None`` when nothing is delivered that weekday.

    Any override (product, customer, account) beats any ``delivery_days``. The first
    ``delivery_days`` that exists decides alone: missing the weekday means no delivery.
    """
    levels = _levels(product, customer, account)
    for level in levels:
        rule = (level.get("delivery_date_overrides") or {}).get(date.isoformat())
        if rule is not None:
            return _complete(rule)
    for level in levels:
        delivery_days = level.get("delivery_days")
        if delivery_days is not None:
            rule = delivery_days.get(_weekday_key(date))
            return None if rule is None else _complete(rule)
    return {"lead_days": 0, "cutoff": DEFAULT_CUTOFF}


def is_deliverable(
    date: dt.date, now: dt.datetime, product: Mapping, customer: Mapping | None, account: Mapping
) -> bool:
    """Whether ``product`` ordered at ``now`` can be delivered on ``date``.

    Past dates need no special case: their last order day is already behind us.
    """
    levels = _levels(product, customer, account)
    if any(date.isoformat() in (level.get("dates_with_no_delivery") or ()) for level in levels):
        return False
    rule = rule_for(date, product, customer, account)
    if rule is None:
        return False
    last_order_day = date - dt.timedelta(days=rule["lead_days"])
    zone = account_timezone(account)
    # A cutoff that a daylight-saving change skips is the first wall time after the gap (as decisions §17 reads it);
    # one in an hour that repeats is in time until its second pass.
    deadline = wall_moment(dt.datetime.combine(last_order_day, _parse_cutoff(rule["cutoff"])), zone, last=True)
    # In UTC: arithmetic and comparison across zones are plain there (an hour that repeats has two offsets).
    end = deadline.astimezone(dt.timezone.utc) + dt.timedelta(minutes=1)  # 23:59:59 is still "no later than 23:59"
    return local_now(now, zone).astimezone(dt.timezone.utc) < end


def order_deliverable_on(
    date: dt.date, now: dt.datetime, products: Sequence[Mapping], customer: Mapping | None, account: Mapping
) -> bool:
    """An order is deliverable only if every item is.

    With no products, the customer's and account's rules alone decide (as for a product
    that defines nothing), so a date listing without products still honours them.
    """
    return all(is_deliverable(date, now, product, customer, account) for product in products or [{}])


def next_deliverable_dates(
    now: dt.datetime, products: Sequence[Mapping], customer: Mapping | None, account: Mapping, days: int
) -> list[dt.date]:
    """The next ``days`` deliverable dates from local today, looking at most a year ahead."""
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"days must be between 1 and {MAX_DAYS}, got {days}")
    today = account_today(now, account)
    candidates = (today + dt.timedelta(days=offset) for offset in range(SCAN_HORIZON_DAYS))
    deliverable = (d for d in candidates if order_deliverable_on(d, now, products, customer, account))
    return list(islice(deliverable, days))


TIME_ZONE_RULE = "must be an IANA time zone name, such as Europe/Helsinki or UTC"


@lru_cache(maxsize=1)
def _time_zones() -> frozenset[str]:
    return frozenset(available_timezones())


def is_time_zone(name: str) -> bool:
    """A set lookup, so junk such as "../../etc/passwd" never reaches the zoneinfo file loader."""
    return name in _time_zones()


def wall_moment(wall: dt.datetime, timezone_name: str, last: bool = False) -> dt.datetime:
    """The moment a wall-clock time (naive) of the zone names; one that a daylight-saving change skips (02:30 when
    clocks go from 02:00 to 03:00) is read as the first moment after the gap (03:00). An hour that repeats reads as
    its first occurrence, or with `last` its second (a cutoff: the wall clock shows it until then)."""
    zone = ZoneInfo(timezone_name)
    for minutes in range(0, 2 * 24 * 60):  # gaps are an hour or two; Samoa skipped a day
        probe = wall + dt.timedelta(minutes=minutes)
        moment = probe.replace(tzinfo=zone, fold=int(last))
        if moment.astimezone(dt.timezone.utc).astimezone(zone).replace(tzinfo=None) == probe:
            return moment if minutes == 0 else moment.replace(second=0, microsecond=0)
    raise ValueError(f"{wall} names no moment in {timezone_name}")


def account_timezone(account: Mapping) -> str:
    """The account's IANA zone; the service stores one, ``UTC`` is the last-resort default."""
    return account.get("timezone") or DEFAULT_TIMEZONE


def account_today(now: dt.datetime, account: Mapping) -> dt.date:
    """The date `now` is on the account's wall clock."""
    return local_now(now, account_timezone(account)).date()


def _levels(product: Mapping, customer: Mapping | None, account: Mapping) -> tuple[Mapping, ...]:
    """The levels in precedence order: most specific first."""
    return tuple(level for level in (product, customer, account) if level is not None)


def _weekday_key(date: dt.date) -> str:
    """ "0" = Sunday .. "6" = Saturday (isoweekday is Monday = 1 .. Sunday = 7)."""
    return str(date.isoweekday() % 7)


def _complete(rule: Mapping) -> dict:
    """A rule with its default cutoff filled in and ``lead_days`` as an int (stored numbers may be Decimal)."""
    return {"lead_days": int(rule["lead_days"]), "cutoff": rule.get("cutoff") or DEFAULT_CUTOFF}


def _parse_cutoff(cutoff: str) -> dt.time:
    hours, minutes = cutoff.split(":")
    return dt.time(int(hours), int(minutes))
