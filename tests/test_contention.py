"""The service's one retry idiom and its one answer per refusal (service/contention.py), on the fake clock: no table."""

import datetime as dt

import pytest

from chalicelib.domain.errors import Busy, ValidationFailed
from chalicelib.service import contention
from chalicelib.store import outcomes


@pytest.fixture
def pauses(monkeypatch) -> list[int]:
    taken: list[int] = []
    monkeypatch.setattr(contention, "back_off", taken.append)
    return taken


def _answers(*answers):
    """An attempt answering these in turn, counting its calls."""
    calls = []

    def attempt():
        calls.append(1)
        return answers[len(calls) - 1]

    return attempt, calls


def test_a_lost_race_is_tried_again_after_a_pause_until_an_answer(fake_clock, pauses):
    attempt, calls = _answers(outcomes.Stale(), outcomes.Contended(), {"id": "x"})
    assert contention.retried(attempt) == {"id": "x"}
    assert len(calls) == 3 and pauses == [0, 1]  # a pause before each attempt but the first, growing


def test_a_refusal_that_is_not_a_lost_race_is_the_answer_at_once(fake_clock, pauses):
    attempt, calls = _answers(outcomes.Gone())
    assert contention.retried(attempt) == outcomes.Gone()
    assert len(calls) == 1 and pauses == []
    attempt, calls = _answers(outcomes.Changed(), None)
    assert contention.retried(attempt, again=(outcomes.Changed,)) is None and len(calls) == 2


def test_contention_past_the_minimum_count_is_409_with_the_callers_words(fake_clock, pauses):
    attempt, calls = _answers(*[outcomes.Stale()] * 10)
    with pytest.raises(Busy) as busy:
        contention.retried(attempt, minimum=4, seconds=0, busy="the thing kept changing; try again")
    assert str(busy.value) == "the thing kept changing; try again" and busy.value.status == 409
    assert len(calls) == 4


def test_it_keeps_trying_while_contention_lasts_less_than_its_seconds(fake_clock, pauses):
    def attempt():
        fake_clock.advance(1)  # each race takes a second of the one clock
        return outcomes.Stale()

    counted = []
    with pytest.raises(Busy):
        contention.retried(lambda: counted.append(1) or attempt(), minimum=2, seconds=5)
    assert len(counted) == 5  # past the minimum of 2, until 5 s had passed since the first


def test_a_job_gets_what_it_answers_when_contention_outlasts_it(fake_clock, pauses):
    attempt, calls = _answers(*[outcomes.Stale()] * 3)
    assert contention.retried(attempt, minimum=3, seconds=0, exhausted="changed") == "changed"


@pytest.mark.parametrize(
    "refused, status, detail",
    [
        (outcomes.LostClaim(), 409, contention.LOST_CLAIM),
        (outcomes.Stale(), 409, contention.ACCOUNT_BUSY),
        (outcomes.Contended(), 409, contention.ACCOUNT_BUSY),
    ],
)
def test_one_answer_per_refusal(refused, status, detail):
    with pytest.raises(Busy) as raised:
        contention.raise_for(refused)
    assert (raised.value.status, str(raised.value)) == (status, detail)


def test_too_large_is_a_400_on_the_body_in_the_callers_words():
    with pytest.raises(ValidationFailed) as failed:
        contention.raise_for(outcomes.TooLarge(), too_large="the thing is too large")
    assert [(e.path, e.message) for e in failed.value.errors] == [("body", "the thing is too large")]


@pytest.mark.parametrize("refused", [outcomes.Gone(), outcomes.InUse(), outcomes.Throttled(dt.datetime(2026, 1, 1))])
def test_an_unknown_refusal_is_raised_as_a_fault_never_called_a_storage_limit(refused):
    with pytest.raises(contention.Unanswered) as raised:
        contention.raise_for(refused)
    assert raised.value.refused == refused
