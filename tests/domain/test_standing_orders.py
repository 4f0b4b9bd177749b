"""The calendar of standing orders (decisions §17), pure: counted dates, cutoffs, placing moments, statuses."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from chalicelib.domain import standing_orders as rules
from chalicelib.domain.errors import ValidationFailed

UTC = dt.timezone.utc
HELSINKI = ZoneInfo("Europe/Helsinki")
D = dt.date


def order(**fields) -> dict:
    return {
        "weekdays": [2, 5],
        "every_weeks": 1,
        "starts_on": "2026-05-04",
        "ends_on": None,
        "place_days_ahead": 2,
        "paused": False,
        **fields,
    }


def dates(standing, start="2026-05-01", end="2026-05-31", first_day="2026-05-01"):
    found = rules.counted_dates(standing, D.fromisoformat(first_day), D.fromisoformat(start), D.fromisoformat(end))
    return [day.isoformat() for day in found]


def test_weekdays_count_from_sunday_zero():
    assert dates(order(weekdays=[0]), end="2026-05-17") == ["2026-05-10", "2026-05-17"]  # Sundays
    assert dates(order(), end="2026-05-15") == ["2026-05-05", "2026-05-08", "2026-05-12", "2026-05-15"]


def test_every_n_weeks_counts_monday_to_sunday_weeks_from_the_week_of_starts_on():
    # starts_on is a Thursday: its week (from Monday 2026-05-04) counts, Tuesday 05-05 is before starts_on.
    standing = order(starts_on="2026-05-07", every_weeks=2)
    assert dates(standing) == ["2026-05-08", "2026-05-19", "2026-05-22"]
    assert dates(order(every_weeks=3), end="2026-06-30") == [
        "2026-05-05",
        "2026-05-08",
        "2026-05-26",
        "2026-05-29",
        "2026-06-16",
        "2026-06-19",
    ]


def test_starts_on_ends_on_and_the_first_write_bound_the_dates():
    assert dates(order(ends_on="2026-05-12")) == ["2026-05-05", "2026-05-08", "2026-05-12"]
    assert dates(order(), first_day="2026-05-09", end="2026-05-15") == ["2026-05-12", "2026-05-15"]
    assert dates(order(starts_on="2026-05-13"), end="2026-05-19") == ["2026-05-15", "2026-05-19"]


SETTINGS = {
    "timezone": "Europe/Helsinki",
    "delivery_days": {"2": {"lead_days": 1, "cutoff": "14:00"}, "5": {"lead_days": 2, "cutoff": "12:00"}},
}


def test_the_cutoff_is_on_d_minus_lead_days_and_the_strictest_item_decides():
    loose = {"id": "a"}
    strict = {"id": "b", "delivery_days": {"2": {"lead_days": 3, "cutoff": "10:00"}}}
    assert rules.cutoff_moment(D(2026, 5, 12), [loose], None, SETTINGS) == dt.datetime(
        2026, 5, 11, 14, 0, 59, tzinfo=HELSINKI
    )
    assert rules.cutoff_moment(D(2026, 5, 12), [loose, strict], None, SETTINGS) == dt.datetime(
        2026, 5, 9, 10, 0, 59, tzinfo=HELSINKI
    )


def test_a_date_with_no_delivery_has_no_cutoff():
    assert rules.cutoff_moment(D(2026, 5, 13), [{}], None, SETTINGS) is None  # no rule for Wednesday
    closed = {**SETTINGS, "dates_with_no_delivery": ["2026-05-12"]}
    assert rules.cutoff_moment(D(2026, 5, 12), [{}], None, closed) is None
    assert rules.cutoff_moment(D(2026, 5, 12), [{}], {"dates_with_no_delivery": ["2026-05-12"]}, SETTINGS) is None
    assert rules.cutoff_moment(D(2026, 5, 15), [{}], None, closed) is not None


def test_the_placing_moment_is_place_days_ahead_calendar_days_before_the_cutoff_at_the_same_local_time():
    cutoff = rules.cutoff_moment(D(2026, 5, 12), [{}], None, SETTINGS)
    assert rules.placing_moment(D(2026, 5, 12), cutoff, 2, "Europe/Helsinki") == dt.datetime(
        2026, 5, 9, 14, 0, tzinfo=HELSINKI
    )
    assert rules.placing_moment(D(2026, 5, 12), cutoff, 0, "Europe/Helsinki") == dt.datetime(
        2026, 5, 11, 14, 0, tzinfo=HELSINKI
    )


def test_the_placing_moment_keeps_the_local_time_across_a_daylight_saving_change():
    # Helsinki moves from +02:00 to +03:00 on Sunday 2026-03-29: a cutoff on Monday 30 March at 14:00 (+03:00)
    # is placed three days earlier at 14:00 +02:00, 71 hours before, not 72.
    cutoff = dt.datetime(2026, 3, 30, 14, 0, 59, tzinfo=HELSINKI)
    moment = rules.placing_moment(D(2026, 3, 31), cutoff, 3, "Europe/Helsinki")
    assert moment.isoformat() == "2026-03-27T14:00:00+02:00"
    assert cutoff.replace(second=0).astimezone(UTC) - moment.astimezone(UTC) == dt.timedelta(hours=71)
    assert rules.local_iso(moment, "Europe/Helsinki") == "2026-03-27T14:00:00+02:00"
    assert rules.local_iso(cutoff, "Europe/Helsinki") == "2026-03-30T14:00:59+03:00"


def test_an_undeliverable_date_is_placed_by_the_default_rule_where_it_fails():
    assert rules.placing_moment(D(2026, 5, 13), None, 2, "UTC") == dt.datetime(
        2026, 5, 11, 23, 59, tzinfo=ZoneInfo("UTC")
    )


CUTOFF = dt.datetime(2026, 5, 11, 14, 0, 59, tzinfo=UTC)


@pytest.mark.parametrize(
    "record, skipped, paused, now, status",
    [
        ({"status": "PLACED"}, False, False, CUTOFF, "PLACED"),
        ({"status": "FAILED"}, True, True, CUTOFF, "FAILED"),
        (None, True, False, CUTOFF + dt.timedelta(days=1), "SKIPPED"),
        (None, False, False, CUTOFF + dt.timedelta(seconds=1), "MISSED"),
        (None, False, True, CUTOFF + dt.timedelta(seconds=1), "MISSED"),
        (None, False, False, CUTOFF, "PLANNED"),
        (None, False, True, CUTOFF, "PAUSED"),
    ],
)
def test_the_status_of_a_date(record, skipped, paused, now, status):
    assert rules.status_of(D(2026, 5, 12), record, skipped, paused, CUTOFF, now) == status


def test_the_next_look_is_the_earliest_placing_moment_at_most_a_day_away():
    now = dt.datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
    soon = now + dt.timedelta(hours=3)
    assert rules.next_due([(D(2026, 5, 8), soon), (D(2026, 5, 5), now)], False, None, now) == now
    assert rules.next_due([(D(2026, 5, 8), soon)], False, None, now) == soon
    assert rules.next_due([(D(2026, 6, 8), now + dt.timedelta(days=20))], False, None, now) == now + rules.RECHECK
    assert rules.next_due([(D(2026, 5, 8), soon)], True, None, now) is None
    assert rules.next_due([], False, "2026-05-01", now) is None
    assert rules.next_due([], False, None, now) == now + rules.RECHECK


@pytest.mark.parametrize(
    "start, end, expected",
    [
        (None, None, ("2026-05-04", "2026-05-31")),
        ("2026-06-01", None, ("2026-06-01", "2026-06-28")),
        ("2026-05-01", "2026-08-01", ("2026-05-01", "2026-08-01")),
    ],
)
def test_the_occurrence_range(start, end, expected):
    first, last = rules.occurrence_range(D(2026, 5, 4), start, end)
    assert (first.isoformat(), last.isoformat()) == expected


@pytest.mark.parametrize(
    "start, end, path",
    [
        ("2026-05-01", "2026-08-02", "to"),
        ("2026-05-10", "2026-05-09", "to"),
        ("05/01/2026", None, "from"),
        (None, "2026-13-01", "to"),
    ],
)
def test_an_occurrence_range_refused_names_its_parameter(start, end, path):
    with pytest.raises(ValidationFailed) as refused:
        rules.occurrence_range(D(2026, 5, 4), start, end)
    assert [e.path for e in refused.value.errors] == [path]


def test_the_placer_looks_only_as_far_as_a_placing_moment_can_come_within_a_day():
    now = dt.datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
    far = {"delivery_days": {str(d): {"lead_days": 30} for d in range(7)}}
    near = rules.Calendar(order(weekdays=[0, 1, 2, 3, 4, 5, 6]), D(2026, 5, 4), [{}], None, {"timezone": "UTC"})
    assert near.reach_days() == 4
    assert [d.isoformat() for d, _ in near.open_dates(now, {}, set())] == [
        "2026-05-04",
        "2026-05-05",
        "2026-05-06",
        "2026-05-07",
        "2026-05-08",
    ]
    ahead = rules.Calendar(order(weekdays=[3]), D(2026, 5, 4), [far], None, {"timezone": "UTC"})
    assert ahead.reach_days() == 34
    # Wednesdays before 2026-06-03 are past their cutoff (30 days ahead); 06-03 is ordered by 2026-05-04 23:59 and
    # placed two days before that: due now. Later Wednesdays are looked at in a later turn.
    dates = ahead.open_dates(now, {}, set())
    assert dates == [(D(2026, 6, 3), dt.datetime(2026, 5, 2, 23, 59, tzinfo=ZoneInfo("UTC")))]
    assert rules.next_due(dates, False, None, now) <= now
