"""The calendar of standing orders (decisions §17), pure: counted dates, cutoffs, placing moments, statuses."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from chalicelib.domain import schedule
from chalicelib.domain import standing_calendar as calendar
from chalicelib.domain import standing_orders as rules
from chalicelib.domain.errors import ValidationFailed
from chalicelib.domain.timestamps import local_iso

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
    found = calendar.counted_dates(standing, D.fromisoformat(first_day), D.fromisoformat(start), D.fromisoformat(end))
    return [day.isoformat() for day in found]


def test_weekdays_count_from_sunday_zero():
    assert dates(order(weekdays=[0]), end="2026-05-17") == ["2026-05-10", "2026-05-17"]  # Sundays
    assert dates(order(), end="2026-05-15") == ["2026-05-05", "2026-05-08", "2026-05-12", "2026-05-15"]


def test_every_n_weeks_counts_from_the_week_of_the_first_weekday_on_or_after_starts_on():
    # starts_on is a Thursday: the first Tuesday or Friday on or after it is Friday 05-08; its week counts.
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


def test_every_two_weeks_starting_after_the_weekday_begins_with_the_next_such_day_not_two_weeks_late():
    """decisions §17 as it changed: starts_on Saturday 05-09, Tuesdays every 2 weeks: 05-12 first (counted from the
    week of starts_on, it was 05-19)."""
    standing = order(weekdays=[2], starts_on="2026-05-09", every_weeks=2)
    assert dates(standing, end="2026-06-10") == ["2026-05-12", "2026-05-26", "2026-06-09"]
    assert calendar.first_date(standing) == D(2026, 5, 12)
    sunday_first = order(weekdays=[0, 2], starts_on="2026-05-10", every_weeks=2)  # Sunday 05-10 ends its week
    assert dates(sunday_first, end="2026-05-31") == ["2026-05-10", "2026-05-19", "2026-05-24"]


def test_starts_on_ends_on_and_the_first_write_bound_the_dates():
    assert dates(order(ends_on="2026-05-12")) == ["2026-05-05", "2026-05-08", "2026-05-12"]
    assert dates(order(), first_day="2026-05-09", end="2026-05-15") == ["2026-05-12", "2026-05-15"]
    assert dates(order(starts_on="2026-05-13"), end="2026-05-19") == ["2026-05-15", "2026-05-19"]


SETTINGS = {
    "timezone": "Europe/Helsinki",
    "delivery_days": {"2": {"lead_days": 1, "cutoff": "14:00"}, "5": {"lead_days": 2, "cutoff": "12:00"}},
}


def cal(products=({},), settings=None, customer=None, **fields) -> calendar.Calendar:
    return calendar.Calendar(order(**fields), D(2026, 1, 1), list(products), customer, settings or SETTINGS)


def test_the_cutoff_is_on_d_minus_lead_days_and_the_strictest_item_decides():
    loose = {"id": "a"}
    strict = {"id": "b", "delivery_days": {"2": {"lead_days": 3, "cutoff": "10:00"}}}
    assert cal([loose]).cutoff(D(2026, 5, 12)) == dt.datetime(2026, 5, 11, 14, 0, 59, tzinfo=HELSINKI)
    assert cal([loose, strict]).cutoff(D(2026, 5, 12)) == dt.datetime(2026, 5, 9, 10, 0, 59, tzinfo=HELSINKI)


def test_a_date_the_rules_deliver_nothing_on_has_no_cutoff():
    assert cal().cutoff(D(2026, 5, 13)) is None  # no rule for Wednesday
    closed = {**SETTINGS, "dates_with_no_delivery": ["2026-05-12"]}
    assert cal(settings=closed).undeliverable(D(2026, 5, 12))
    assert cal(customer={"dates_with_no_delivery": ["2026-05-12"]}).undeliverable(D(2026, 5, 12))
    assert cal(settings=closed).cutoff(D(2026, 5, 15)) is not None


def test_a_line_not_delivered_that_day_decides_nothing_and_is_left_out():
    """decisions §17: one product's no-delivery date leaves its line out; the other lines' cutoff decides."""
    holiday = {"id": "keg", "dates_with_no_delivery": ["2026-05-12"], "delivery_days": {"2": {"lead_days": 5}}}
    both = cal([{"id": "a"}, holiday])
    assert both.cutoff(D(2026, 5, 12)) == dt.datetime(2026, 5, 11, 14, 0, 59, tzinfo=HELSINKI)
    assert not both.delivers(D(2026, 5, 12), holiday) and both.delivers(D(2026, 5, 12), {"id": "a"})
    assert both.cutoff(D(2026, 5, 19)) == dt.datetime(2026, 5, 14, 23, 59, 59, tzinfo=HELSINKI)  # its own rule
    assert cal([holiday]).undeliverable(D(2026, 5, 12))


def test_the_placing_moment_is_place_days_ahead_calendar_days_before_the_cutoff_at_the_same_local_time():
    assert cal().place_at(D(2026, 5, 12)) == dt.datetime(2026, 5, 9, 14, 0, tzinfo=HELSINKI)
    assert cal(place_days_ahead=0).place_at(D(2026, 5, 12)) == dt.datetime(2026, 5, 11, 14, 0, tzinfo=HELSINKI)


def test_the_placing_moment_keeps_the_local_time_across_a_daylight_saving_change():
    # Helsinki moves from +02:00 to +03:00 on Sunday 2026-03-29: a cutoff on Monday 30 March at 14:00 (+03:00)
    # is placed three days earlier at 14:00 +02:00, 71 hours before, not 72.
    monday = cal(place_days_ahead=3, settings={**SETTINGS, "delivery_days": {"2": {"lead_days": 1, "cutoff": "14:00"}}})
    cutoff, moment = monday.cutoff(D(2026, 3, 31)), monday.place_at(D(2026, 3, 31))
    assert moment.isoformat() == "2026-03-27T14:00:00+02:00"
    assert cutoff.replace(second=0).astimezone(UTC) - moment.astimezone(UTC) == dt.timedelta(hours=71)
    assert local_iso(moment, "Europe/Helsinki") == "2026-03-27T14:00:00+02:00"
    assert local_iso(cutoff, "Europe/Helsinki") == "2026-03-30T14:00:59+03:00"


BERLIN_GAP = {"timezone": "Europe/Berlin", "delivery_days": {"0": {"lead_days": 0, "cutoff": "02:30"}}}


def test_a_cutoff_inside_the_spring_forward_gap_is_read_as_the_first_moment_after_it():
    """Berlin skips 02:00-03:00 on Sunday 2026-03-29. A 02:30 cutoff that day: clocks show 03:00 when it comes, so
    the placing moment (place_days_ahead 0) is 03:00 CEST, 01:00 UTC (before, 03:30 CEST: after the cutoff)."""
    gap = cal(settings=BERLIN_GAP, weekdays=[0], place_days_ahead=0)
    assert gap.place_at(D(2026, 3, 29)).astimezone(UTC) == dt.datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
    assert gap.cutoff(D(2026, 3, 29)).astimezone(UTC) == dt.datetime(2026, 3, 29, 1, 0, 59, tzinfo=UTC)
    assert gap.place_at(D(2026, 3, 29)) <= gap.cutoff(D(2026, 3, 29))
    # §7 agrees: an order at 03:00:30 CEST is in time, one at 03:01 is not.
    zone = {"timezone": "Europe/Berlin"}
    rule = {"delivery_days": {"0": {"lead_days": 0, "cutoff": "02:30"}}}
    in_time = dt.datetime(2026, 3, 29, 1, 0, 30, tzinfo=UTC)
    assert schedule.is_deliverable(D(2026, 3, 29), in_time, rule, None, zone)
    assert not schedule.is_deliverable(D(2026, 3, 29), in_time + dt.timedelta(seconds=30), rule, None, zone)
    # A week earlier, 02:30 exists: nothing moves.
    assert gap.place_at(D(2026, 3, 22)).isoformat() == "2026-03-22T02:30:00+01:00"


def test_a_placing_moment_that_falls_into_the_gap_is_the_first_moment_after_it():
    rules_ = {"timezone": "Europe/Berlin", "delivery_days": {"3": {"lead_days": 0, "cutoff": "02:15"}}}
    wednesday = cal(settings=rules_, weekdays=[3], place_days_ahead=3)  # Wednesday 04-01 02:15, 3 days before
    assert wednesday.place_at(D(2026, 4, 1)).isoformat() == "2026-03-29T03:00:00+02:00"
    assert schedule.wall_moment(dt.datetime(2026, 3, 29, 2, 15), "Europe/Berlin").isoformat() == (
        "2026-03-29T03:00:00+02:00"
    )


def test_an_undeliverable_date_shows_the_default_rules_moment_and_is_never_open():
    gone = cal(settings={"timezone": "UTC", "dates_with_no_delivery": ["2026-05-13"]}, weekdays=[3])
    assert gone.place_at(D(2026, 5, 13)) == dt.datetime(2026, 5, 11, 23, 59, tzinfo=ZoneInfo("UTC"))
    now = dt.datetime(2026, 5, 11, 0, 0, tzinfo=UTC)
    assert [d for d, _ in gone.open_dates(now, {}, set())] == []


def test_all_undeliverable_looks_at_the_counted_dates_of_the_window():
    tuesdays_only = {**SETTINGS, "delivery_days": {"2": {"lead_days": 1}}}
    today = D(2026, 5, 4)
    assert cal(settings=tuesdays_only, weekdays=[5]).all_undeliverable(today, 92)  # Fridays never delivered
    assert not cal(settings=tuesdays_only, weekdays=[2, 5]).all_undeliverable(today, 92)
    christmas = {**SETTINGS, "dates_with_no_delivery": ["2026-12-25"]}
    single = cal(settings=christmas, weekdays=[5], starts_on="2026-12-25", ends_on="2026-12-25")
    assert single.all_undeliverable(today, 92)  # its only date, though it is months away
    assert not cal(settings=christmas, weekdays=[5], starts_on="2026-12-25").all_undeliverable(today, 92)


def test_which_changes_may_bring_a_placing_moment_forward():
    rule = {"2": {"lead_days": 1}}
    assert calendar.moves_moments({"delivery_days": rule}, {"delivery_days": {"2": {"lead_days": 2}}})
    assert calendar.moves_moments({}, {"dates_with_no_delivery": ["2026-12-25"]})
    assert calendar.moves_moments({"timezone": "UTC"}, {"timezone": "Asia/Tokyo"})
    assert calendar.moves_moments({"status": "OUT_OF_STOCK"}, {"status": "ACTIVE"})
    assert not calendar.moves_moments({"status": "ACTIVE"}, {"status": "OUT_OF_STOCK"})
    assert not calendar.moves_moments({"price": 1, "delivery_days": rule}, {"price": 2, "delivery_days": rule})
    assert not calendar.moves_moments(None, {"delivery_days": rule})  # a customer made anew
    assert calendar.moves_moments(None, {"status": "ACTIVE", "delivery_days": rule})  # a product: a line may name it
    assert not calendar.moves_moments(None, {"status": "ACTIVE"})  # it follows the account's rules
    assert not calendar.moves_moments(None, {"status": "INACTIVE", "delivery_days": rule})


CUTOFF = dt.datetime(2026, 5, 11, 14, 0, 59, tzinfo=UTC)


@pytest.mark.parametrize(
    "record, skipped, paused, cutoff, now, status",
    [
        ({"status": "PLACED"}, False, False, CUTOFF, CUTOFF, "PLACED"),
        ({"status": "PLACED"}, False, False, None, CUTOFF, "PLACED"),  # placed, then the day became a holiday
        ({"status": "FAILED"}, True, True, CUTOFF, CUTOFF, "SKIPPED"),  # a failed date the customer skipped
        ({"status": "FAILED"}, False, True, CUTOFF, CUTOFF, "FAILED"),
        ({"status": "PLACED"}, True, False, CUTOFF, CUTOFF, "PLACED"),  # a placed one is never skipped
        (None, True, False, None, CUTOFF, "UNDELIVERABLE"),
        (None, False, True, None, CUTOFF + dt.timedelta(days=9), "UNDELIVERABLE"),
        (None, True, False, CUTOFF, CUTOFF + dt.timedelta(days=1), "SKIPPED"),
        (None, False, False, CUTOFF, CUTOFF + dt.timedelta(seconds=1), "MISSED"),
        (None, False, True, CUTOFF, CUTOFF + dt.timedelta(seconds=1), "MISSED"),
        (None, False, False, CUTOFF, CUTOFF, "PLANNED"),
        (None, False, True, CUTOFF, CUTOFF, "PAUSED"),
    ],
)
def test_the_status_of_a_date(record, skipped, paused, cutoff, now, status):
    assert rules.status_of(record, skipped, paused, cutoff, now) == status


def test_the_next_look_is_the_earliest_placing_moment_at_most_a_day_away():
    now = dt.datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
    soon = now + dt.timedelta(hours=3)
    assert calendar.next_due([(D(2026, 5, 8), soon), (D(2026, 5, 5), now)], False, None, now) == now
    assert calendar.next_due([(D(2026, 5, 8), soon)], False, None, now) == soon
    assert calendar.next_due([(D(2026, 6, 8), now + dt.timedelta(days=20))], False, None, now) == now + calendar.RECHECK
    assert calendar.next_due([(D(2026, 5, 8), soon)], True, None, now) is None
    assert calendar.next_due([], False, "2026-05-01", now) is None
    assert calendar.next_due([], False, None, now) == now + calendar.RECHECK


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
    near = calendar.Calendar(order(weekdays=[0, 1, 2, 3, 4, 5, 6]), D(2026, 5, 4), [{}], None, {"timezone": "UTC"})
    assert near.reach_days() == 4
    assert [d.isoformat() for d, _ in near.open_dates(now, {}, set())] == [
        "2026-05-04",
        "2026-05-05",
        "2026-05-06",
        "2026-05-07",
        "2026-05-08",
    ]
    ahead = calendar.Calendar(order(weekdays=[3]), D(2026, 5, 4), [far], None, {"timezone": "UTC"})
    assert ahead.reach_days() == 34
    # Wednesdays before 2026-06-03 are past their cutoff (30 days ahead); 06-03 is ordered by 2026-05-04 23:59 and
    # placed two days before that: due now. Later Wednesdays are looked at in a later turn.
    dates = ahead.open_dates(now, {}, set())
    assert dates == [(D(2026, 6, 3), dt.datetime(2026, 5, 2, 23, 59, tzinfo=ZoneInfo("UTC")))]
    assert calendar.next_due(dates, False, None, now) <= now


def test_a_cutoff_in_the_hour_that_repeats_is_its_second_pass_as_the_order_rules_read_it():
    """Berlin falls back from 03:00 CEST to 02:00 CET on Sunday 2026-10-25: 02:30 comes twice. An audit found the
    date MISSED at the first 02:30 while §7 took the order again from 02:00 CET; both now end at the second 02:30
    (the wall clock shows the cutoff until then), and the placing moment stays the first (the earlier)."""
    rules_ = {"timezone": "Europe/Berlin", "delivery_days": {"0": {"lead_days": 0, "cutoff": "02:30"}}}
    fall = cal(settings=rules_, weekdays=[0], place_days_ahead=0)
    assert fall.cutoff(D(2026, 10, 25)) == dt.datetime(2026, 10, 25, 1, 30, 59, tzinfo=UTC)  # 02:30:59 CET
    assert fall.place_at(D(2026, 10, 25)).astimezone(UTC) == dt.datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    zone, rule = {"timezone": "Europe/Berlin"}, {"delivery_days": rules_["delivery_days"]}
    for moment in ("00:30:59", "00:45", "01:00", "01:30:59"):  # the first 02:30, 02:45 CEST, 02:00 and 02:30 CET
        in_time = dt.datetime.fromisoformat(f"2026-10-25T{moment}+00:00")
        assert schedule.is_deliverable(D(2026, 10, 25), in_time, rule, None, zone), moment
    late = dt.datetime(2026, 10, 25, 1, 31, tzinfo=UTC)
    assert not schedule.is_deliverable(D(2026, 10, 25), late, rule, None, zone)
