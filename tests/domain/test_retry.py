"""The one retry helper (domain/retry.py): attempts bounded by a count and by a deadline of the caller's clock."""

import datetime as dt

from chalicelib.domain import retry
from chalicelib.service.clock import FakeClock

START = dt.datetime(2026, 11, 26, 12, 0, tzinfo=dt.timezone.utc)


def test_at_least_the_count_when_no_time_passes():
    clock = FakeClock(START)
    assert list(retry.attempts(clock.now, 3, 0)) == [0, 1, 2]


def test_on_past_the_count_until_the_deadline_of_the_callers_clock():
    clock = FakeClock(START)
    seen = []
    for attempt in retry.attempts(clock.now, 2, 5.0):
        seen.append(attempt)
        clock.advance(1.0)  # each lost race takes a second of the fake clock
    assert seen == [0, 1, 2, 3, 4]


def test_breaking_out_stops_the_attempts():
    clock = FakeClock(START)
    for attempt in retry.attempts(clock.now, 10, 5.0):
        if attempt == 1:
            break
    assert attempt == 1


def test_the_pause_is_jittered_up_to_a_doubling_capped_bound():
    bounds = [retry.pause_seconds(n, 0.005, 0.2, draw=lambda low, high: high) for n in range(8)]
    assert bounds == [0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.2, 0.2]
    assert retry.pause_seconds(3, 0.005, 0.2, draw=lambda low, high: low) == 0
    assert retry.pause_seconds(5_000, 0.005, 0.2, draw=lambda low, high: high) == 0.2  # a long contention: no overflow


def test_back_off_sleeps_with_the_given_sleep():
    slept = []
    retry.back_off(10, slept.append, first=0.001, cap=0.05)
    assert len(slept) == 1 and 0 <= slept[0] <= 0.05


def test_without_a_clock_only_the_count_bounds_them():
    assert list(retry.attempts(None, 3, 5.0)) == [0, 1, 2]
