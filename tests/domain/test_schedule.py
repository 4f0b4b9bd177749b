"""Delivery dates (decisions §7): precedence, cutoffs, lead days and time zones."""

import datetime as dt
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from chalicelib.domain.schedule import (
    DEFAULT_CUTOFF,
    is_deliverable,
    local_now,
    next_deliverable_dates,
    order_deliverable_on,
    rule_for,
)

UTC = {"timezone": "UTC"}
HELSINKI = {"timezone": "Europe/Helsinki"}
EVERY_DAY = {"lead_days": 0, "cutoff": "23:59"}

MONDAY = dt.date(2026, 5, 4)
SUNDAY = dt.date(2026, 5, 3)
SATURDAY = dt.date(2026, 5, 9)


def d(iso):
    return dt.date.fromisoformat(iso)


def at(iso, zone="UTC"):
    """An aware instant given as wall-clock time in ``zone``."""
    return dt.datetime.fromisoformat(iso).replace(tzinfo=ZoneInfo(zone))


def rule(lead_days, cutoff=None):
    return {"lead_days": lead_days} if cutoff is None else {"lead_days": lead_days, "cutoff": cutoff}


def overrides(date, r):
    return {"delivery_date_overrides": {date.isoformat(): r}}


def days(**by_key):
    """delivery_days keyed by weekday number, e.g. days(_1=rule(2))."""
    return {"delivery_days": {k.lstrip("_"): v for k, v in by_key.items()}}


def account(**fields):
    return {**UTC, **fields}


# --- rule_for: precedence ---


@pytest.mark.parametrize(
    "product, customer, acct, expected",
    [
        # overrides: product > customer > account
        (overrides(MONDAY, rule(1)), overrides(MONDAY, rule(2)), account(**overrides(MONDAY, rule(3))), 1),
        ({}, overrides(MONDAY, rule(2)), account(**overrides(MONDAY, rule(3))), 2),
        ({}, {}, account(**overrides(MONDAY, rule(3))), 3),
        # any override beats any delivery_days
        (days(_1=rule(4)), {}, account(**overrides(MONDAY, rule(3))), 3),
        (days(_1=rule(4)), overrides(MONDAY, rule(2)), account(), 2),
        # delivery_days: product > customer > account
        (days(_1=rule(4)), days(_1=rule(5)), account(**days(_1=rule(6))), 4),
        ({}, days(_1=rule(5)), account(**days(_1=rule(6))), 5),
        ({}, {}, account(**days(_1=rule(6))), 6),
        ({}, None, account(**days(_1=rule(6))), 6),
        # an override for another date does not apply
        (overrides(SUNDAY, rule(1)), {}, account(**days(_1=rule(6))), 6),
    ],
)
def test_rule_precedence(product, customer, acct, expected):
    assert rule_for(MONDAY, product, customer, acct)["lead_days"] == expected


@pytest.mark.parametrize(
    "product, customer, acct",
    [
        (days(_2=rule(0)), days(_1=rule(0)), account(**days(_1=rule(0)))),
        ({}, days(_2=rule(0)), account(**days(_1=rule(0)))),
        ({}, {}, account(**days(_2=rule(0)))),
    ],
)
def test_delivery_days_missing_the_weekday_does_not_fall_through(product, customer, acct):
    assert rule_for(MONDAY, product, customer, acct) is None


@pytest.mark.parametrize("date", [MONDAY + dt.timedelta(days=n) for n in range(7)])
def test_empty_delivery_days_means_never(date):
    assert rule_for(date, {"delivery_days": {}}, {}, account(**days(_0=rule(0), _1=rule(0)))) is None


def test_an_override_still_applies_where_delivery_days_say_never():
    assert rule_for(MONDAY, {"delivery_days": {}}, None, account(**overrides(MONDAY, rule(1)))) == {
        "lead_days": 1,
        "cutoff": DEFAULT_CUTOFF,
    }


@pytest.mark.parametrize("date", [MONDAY + dt.timedelta(days=n) for n in range(7)])
def test_nothing_defined_means_every_day_with_lead_zero(date):
    assert rule_for(date, {}, None, UTC) == EVERY_DAY


@pytest.mark.parametrize(
    "date, key", [(SUNDAY, "0"), (MONDAY, "1"), (d("2026-05-05"), "2"), (d("2026-05-08"), "5"), (SATURDAY, "6")]
)
def test_weekday_keys_run_from_sunday_zero_to_saturday_six(date, key):
    all_days = {str(n): rule(n) for n in range(7)}
    assert rule_for(date, {"delivery_days": all_days}, None, UTC)["lead_days"] == int(key)


def test_cutoff_defaults_to_23_59_and_lead_days_becomes_int():
    assert DEFAULT_CUTOFF == "23:59"
    assert rule_for(MONDAY, days(_1={"lead_days": Decimal(2)}), None, UTC) == {"lead_days": 2, "cutoff": "23:59"}
    assert rule_for(MONDAY, days(_1=rule(2, "10:30")), None, UTC) == {"lead_days": 2, "cutoff": "10:30"}


# --- is_deliverable ---

NOON_MONDAY = at("2026-05-04T12:00")


@pytest.mark.parametrize(
    "product, customer, acct",
    [
        ({"dates_with_no_delivery": ["2026-05-04"]}, {}, UTC),
        ({}, {"dates_with_no_delivery": ["2026-05-04"]}, UTC),
        ({}, None, account(dates_with_no_delivery=["2026-05-04"])),
        ({"dates_with_no_delivery": ["2026-05-05"]}, {"dates_with_no_delivery": ["2026-05-04"]}, UTC),
    ],
)
def test_no_delivery_dates_are_a_union_of_all_levels(product, customer, acct):
    assert not is_deliverable(MONDAY, NOON_MONDAY, product, customer, acct)


def test_no_delivery_date_of_another_day_does_not_block():
    other = {"dates_with_no_delivery": ["2026-05-05"]}
    assert is_deliverable(MONDAY, NOON_MONDAY, other, other, account(**other))


def test_no_delivery_date_beats_an_override():
    product = {**overrides(MONDAY, rule(0)), "dates_with_no_delivery": ["2026-05-04"]}
    assert not is_deliverable(MONDAY, NOON_MONDAY, product, None, UTC)


def test_missing_weekday_is_not_deliverable():
    assert not is_deliverable(MONDAY, at("2026-05-01T08:00"), days(_2=rule(0)), None, UTC)


@pytest.mark.parametrize(
    "date, now, expected",
    [
        (MONDAY, "2026-05-04T00:00", True),
        (MONDAY, "2026-05-04T23:59:30", True),
        (MONDAY, "2026-05-04T23:59:59.999999", True),
        (MONDAY, "2026-05-05T00:00", False),
        (d("2026-05-05"), "2026-05-04T23:59:59", True),
        (d("2026-05-03"), "2026-05-04T00:00", False),  # yesterday
        (d("2025-05-04"), "2026-05-04T00:00", False),  # last year
    ],
)
def test_nothing_defined_same_day_until_23_59(date, now, expected):
    assert is_deliverable(date, at(now), {}, None, UTC) is expected


@pytest.mark.parametrize(
    "now, expected",
    [
        ("2026-05-03T23:59", True),
        ("2026-05-04T00:00", True),
        ("2026-05-04T00:00:59", True),
        ("2026-05-04T00:01", False),
    ],
)
def test_cutoff_midnight(now, expected):
    assert is_deliverable(MONDAY, at(now), days(_1=rule(0, "00:00")), None, UTC) is expected


@pytest.mark.parametrize(
    "date, lead_days, cutoff, now, expected",
    [
        # across a weekend: Monday with lead 3 must be ordered by Friday
        (MONDAY, 3, "12:00", "2026-05-01T12:00", True),
        (MONDAY, 3, "12:00", "2026-05-01T12:00:59", True),
        (MONDAY, 3, "12:00", "2026-05-01T12:01", False),
        (MONDAY, 3, "12:00", "2026-05-02T09:00", False),
        (MONDAY, 2, "12:00", "2026-05-02T11:00", True),  # lead 2 means Saturday
        # across a month end: 1 June with lead 2 -> 30 May
        (d("2026-06-01"), 2, "16:00", "2026-05-30T16:00", True),
        (d("2026-06-01"), 2, "16:00", "2026-05-30T16:01", False),
        (d("2026-06-01"), 2, "16:00", "2026-05-29T23:00", True),
        # across a year end: 2 January 2027 with lead 3 -> 30 December 2026
        (d("2027-01-02"), 3, "23:59", "2026-12-30T23:59:59", True),
        (d("2027-01-02"), 3, "23:59", "2026-12-31T00:00", False),
        # lead days make today's delivery impossible
        (MONDAY, 1, "23:59", "2026-05-04T00:00", False),
    ],
)
def test_lead_days_count_calendar_days(date, lead_days, cutoff, now, expected):
    acct = account(delivery_days={str(n): rule(lead_days, cutoff) for n in range(7)})
    assert is_deliverable(date, at(now), {}, None, acct) is expected


@pytest.mark.parametrize(
    "zone, expected",
    [
        ("UTC", True),  # 21:30, before 22:00
        ("America/New_York", True),  # 17:30
        ("Europe/Helsinki", False),  # 00:30 on 5 May
        ("Asia/Tokyo", False),  # 06:30 on 5 May
    ],
)
def test_the_same_instant_is_before_cutoff_in_one_zone_and_after_in_another(zone, expected):
    acct = {"timezone": zone, **days(_1=rule(0, "22:00"))}
    assert is_deliverable(MONDAY, at("2026-05-04T21:30"), {}, None, acct) is expected


def test_missing_timezone_means_utc():
    assert is_deliverable(MONDAY, at("2026-05-04T23:30"), {}, None, {})
    assert not is_deliverable(MONDAY, at("2026-05-05T00:00"), {}, None, {})


@pytest.mark.parametrize(
    "date, cutoff, utc_now, expected",
    [
        # 2026-03-29: Helsinki springs forward 03:00 EET -> 04:00 EEST (01:00 UTC)
        (d("2026-03-28"), "23:59", "2026-03-28T21:59:59", True),  # 23:59:59 EET
        (d("2026-03-28"), "23:59", "2026-03-28T22:00", False),  # 00:00 EET on the 29th
        (d("2026-03-29"), "03:30", "2026-03-29T00:59", True),  # 02:59 EET
        # 03:30 never happens: a cutoff the change skips is the first moment after the gap (as §17 reads it), 04:00
        (d("2026-03-29"), "03:30", "2026-03-29T01:00", True),  # 04:00:00 EEST
        (d("2026-03-29"), "03:30", "2026-03-29T01:00:59", True),  # 04:00:59 EEST: the cutoff minute
        (d("2026-03-29"), "03:30", "2026-03-29T01:01", False),  # 04:01 EEST
        (d("2026-03-29"), "23:59", "2026-03-29T20:59:30", True),  # 23:59:30 EEST
        (d("2026-03-29"), "23:59", "2026-03-29T21:00", False),  # 00:00 EEST on the 30th
        # 2026-10-25: Helsinki falls back 04:00 EEST -> 03:00 EET (01:00 UTC); 03:30 happens twice
        (d("2026-10-24"), "23:59", "2026-10-24T20:59", True),  # 23:59 EEST
        (d("2026-10-24"), "23:59", "2026-10-24T21:00", False),  # 00:00 EEST on the 25th
        (d("2026-10-25"), "03:30", "2026-10-25T00:30", True),  # first 03:30 (EEST)
        (d("2026-10-25"), "03:30", "2026-10-25T01:30", True),  # second 03:30 (EET)
        (d("2026-10-25"), "03:30", "2026-10-25T01:31", False),  # 03:31 EET
        (d("2026-10-25"), "23:59", "2026-10-25T21:59:59", True),  # 23:59:59 EET
        (d("2026-10-25"), "23:59", "2026-10-25T22:00", False),  # 00:00 EET on the 26th
    ],
)
def test_daylight_saving_days_in_helsinki(date, cutoff, utc_now, expected):
    acct = {**HELSINKI, "delivery_days": {str(n): rule(0, cutoff) for n in range(7)}}
    assert is_deliverable(date, at(utc_now), {}, None, acct) is expected


def test_lead_days_over_a_daylight_saving_change_count_calendar_days():
    acct = {**HELSINKI, "delivery_days": {"1": rule(1, "23:59")}}
    monday = d("2026-03-30")
    assert is_deliverable(monday, at("2026-03-29T20:59"), {}, None, acct)  # Sunday 23:59 EEST
    assert not is_deliverable(monday, at("2026-03-29T21:00"), {}, None, acct)  # Monday 00:00 EEST


def test_naive_now_is_refused():
    with pytest.raises(ValueError):
        is_deliverable(MONDAY, dt.datetime(2026, 5, 4, 12), {}, None, UTC)


def test_local_now_converts_to_the_zone():
    local = local_now(at("2026-05-04T21:30"), "Europe/Helsinki")
    assert (local.date(), local.hour, local.minute) == (d("2026-05-05"), 0, 30)
    assert local.utcoffset() == dt.timedelta(hours=3)


# --- orders ---


def test_an_order_is_deliverable_only_if_every_product_is():
    fresh = days(_1=rule(0))
    frozen = days(_1=rule(3))
    now = at("2026-05-02T10:00")
    assert order_deliverable_on(MONDAY, now, [fresh, fresh], None, UTC)
    assert not order_deliverable_on(MONDAY, now, [fresh, frozen], None, UTC)
    assert not order_deliverable_on(MONDAY, now, [fresh, {"dates_with_no_delivery": ["2026-05-04"]}], None, UTC)


def test_an_order_without_products_follows_the_customer_and_account():
    now = at("2026-05-02T10:00")
    assert order_deliverable_on(MONDAY, now, [], None, UTC)
    assert not order_deliverable_on(MONDAY, now, [], {"dates_with_no_delivery": ["2026-05-04"]}, UTC)
    assert not order_deliverable_on(MONDAY, now, [], None, account(delivery_days={}))


# --- next deliverable dates ---


def test_next_dates_skip_no_delivery_dates_and_missing_weekdays():
    # Deliveries Mon/Wed/Fri, lead 1, cutoff 12:00; Wednesday 6 May is off for the customer.
    acct = account(delivery_days={"1": rule(1, "12:00"), "3": rule(1, "12:00"), "5": rule(1, "12:00")})
    customer = {"dates_with_no_delivery": ["2026-05-06"]}
    now = at("2026-05-03T13:00")  # Sunday afternoon: Monday's cutoff (Sunday 12:00) has passed
    assert next_deliverable_dates(now, [{}], customer, acct, 4) == [
        d("2026-05-08"),
        d("2026-05-11"),
        d("2026-05-13"),
        d("2026-05-15"),
    ]


def test_next_dates_include_today_when_still_in_time():
    assert next_deliverable_dates(at("2026-05-04T23:59"), [{}], None, UTC, 3) == [
        MONDAY,
        d("2026-05-05"),
        d("2026-05-06"),
    ]


def test_next_dates_start_at_local_today():
    # 22:30 UTC on 4 May is 01:30 on 5 May in Helsinki.
    assert next_deliverable_dates(at("2026-05-04T22:30"), [], None, HELSINKI, 1) == [d("2026-05-05")]


def test_next_dates_honour_every_product():
    weekdays_only = {"delivery_days": {str(n): rule(0) for n in range(1, 6)}}
    not_fridays = {"delivery_days": {str(n): rule(0) for n in range(7) if n != 5}}
    assert next_deliverable_dates(at("2026-05-07T08:00"), [weekdays_only, not_fridays], None, UTC, 2) == [
        d("2026-05-07"),
        MONDAY + dt.timedelta(days=7),
    ]


def test_next_dates_look_at_most_a_year_ahead():
    never_but = lambda date: account(delivery_days={}, **overrides(date, rule(0)))  # noqa: E731
    now = at("2026-05-04T08:00")
    # 366 days: today and the 365 that follow.
    assert next_deliverable_dates(now, [], None, never_but(d("2027-05-04")), 5) == [d("2027-05-04")]
    assert next_deliverable_dates(now, [], None, never_but(d("2027-05-05")), 5) == []


@pytest.mark.parametrize("count", [0, -1, 61])
def test_next_dates_count_is_limited(count):
    with pytest.raises(ValueError):
        next_deliverable_dates(NOON_MONDAY, [], None, UTC, count)


def test_next_dates_up_to_sixty():
    found = next_deliverable_dates(NOON_MONDAY, [], None, UTC, 60)
    assert found == [MONDAY + dt.timedelta(days=n) for n in range(60)]
