"""Batch reads and writes (store/batch.py): what DynamoDB leaves unprocessed (it is throttling) is asked for again
on the one retry helper, at least MAX_ATTEMPTS times and on for THROTTLED_SECONDS of the caller's clock."""

import datetime as dt

import pytest

from chalicelib.service.clock import FakeClock
from chalicelib.store import batch, table

START = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.timezone.utc)
STEP = 0.5  # seconds of the fake clock per request: 8 attempts take 4 s, below the 5 s deadline
KEY = {"PK": "ACCOUNT#acme", "SK": "CATEGORY#drinks"}


class Throttling:
    """A client that leaves everything unprocessed `throttled` times, each request taking STEP seconds of `clock`."""

    def __init__(self, throttled: int, clock: FakeClock | None = None):
        self.throttled, self.clock, self.requests = throttled, clock, 0

    def _answer(self, leftover: dict, found: dict) -> dict:
        self.requests += 1
        if self.clock is not None:
            self.clock.advance(STEP)
        return leftover if self.requests <= self.throttled else found

    def batch_get_item(self, RequestItems):
        item = table.to_item({**KEY, "name": "Drinks"})
        return self._answer({"UnprocessedKeys": RequestItems}, {"Responses": {table.name(): [item]}})

    def batch_write_item(self, RequestItems):
        return self._answer({"UnprocessedItems": RequestItems}, {})


@pytest.fixture
def throttling(monkeypatch):
    monkeypatch.setattr(batch, "back_off", lambda attempt: None)

    def install(throttled: int, clock: FakeClock | None = None) -> Throttling:
        client = Throttling(throttled, clock)
        monkeypatch.setattr(table, "client", lambda: client)
        return client

    return install


def test_a_read_left_unprocessed_comes_on_a_later_attempt(throttling):
    client = throttling(batch.MAX_ATTEMPTS - 1)
    assert batch.pick(batch.get_items([KEY]), KEY)["name"] == "Drinks"
    assert client.requests == batch.MAX_ATTEMPTS


def test_without_a_clock_a_read_gives_up_after_max_attempts(throttling):
    client = throttling(batch.MAX_ATTEMPTS)
    with pytest.raises(batch.StillThrottled):
        batch.get_items([KEY])
    assert client.requests == batch.MAX_ATTEMPTS


def test_with_the_callers_clock_a_read_goes_on_until_its_deadline(throttling):
    clock = FakeClock(START)
    client = throttling(batch.MAX_ATTEMPTS + 1, clock)  # past the count, within the deadline
    assert batch.pick(batch.get_items([KEY], clock=clock.now), KEY) is not None
    assert client.requests == batch.MAX_ATTEMPTS + 2
    never = throttling(1000, clock)
    with pytest.raises(batch.StillThrottled):
        batch.get_items([KEY], clock=clock.now)
    assert never.requests == batch.THROTTLED_SECONDS / STEP  # 10: on until 5 s of the caller's clock


def test_writes_left_unprocessed_are_sent_again_and_give_up_the_same_way(throttling):
    client = throttling(3)
    batch.write_items([{"DeleteRequest": {"Key": table.to_item(KEY)}}])
    assert client.requests == 4
    throttling(1000)
    with pytest.raises(batch.StillThrottled):
        batch.write_items([{"DeleteRequest": {"Key": table.to_item(KEY)}}])
