"""The AWS one-minute schedule places every due standing order of an account within a minute of its moment,
however many share it (decisions §17), and keeps looking while its invocation runs."""

import datetime as dt

from chalicelib.jobs import handlers, standing_order_turns
from chalicelib.service import clock
from chalicelib.store import tokens

from .deliveries_helpers import ACCOUNT, ADDRESS, put_customer, shop  # noqa: F401
from .standing_support import BASE, standing

BARS = 25  # more than two rounds' share of an account


def bars(api, count: int) -> list[str]:
    """`count` bars, each with a Tuesday-and-Friday standing order sharing one placing moment."""
    names = []
    for n in range(count):
        bar = f"bar{n:02d}"
        put_customer(bar, company=f"Bar {n}", address=ADDRESS)
        secret = f"{bar}-token"
        tokens.create(ACCOUNT, "customer", bar, secret=secret)
        assert api.put(f"{BASE}/weekly", body=standing(), token=secret).status_code == 200
        names.append(bar)
    return names


def placed_bars(api) -> set[str]:
    found = api.get("/deliveries?limit=100").json_body["deliveries"]
    return {d["customer"]["id"] for d in found}


def test_one_invocation_of_the_schedule_places_every_bar_sharing_a_moment(shop, monkeypatch):
    monkeypatch.setattr(standing_order_turns, "PER_ACCOUNT", 10)  # a round's share of an account, as it was
    everyone = bars(shop, BARS)
    handlers.every_minute(None)
    assert placed_bars(shop) == set(everyone)  # before: 10 a run, the others a minute later each
    for bar in everyone:
        listed = shop.get(f"/customers/{bar}/standing-orders/weekly/occurrences?to=2026-05-05").json_body
        assert listed["occurrences"][0]["status"] == "PLACED"


class Ticking(clock.FakeClock):
    """A fake clock whose waits take their time (the schedule's invocation waiting to look again)."""

    def wait(self, seconds, stop):
        self.advance(seconds)
        return stop.is_set()


def test_the_schedules_invocation_acts_on_a_moment_that_comes_while_it_runs(shop, monkeypatch):
    """Each invocation looks every POLL_SECONDS until its window (30 s less a turn and the margin: 21 s) ends: a
    moment 12 s after it starts is placed by it; one 25 s after, by the next invocation, within the minute."""
    start = dt.datetime(2026, 5, 6, 23, 58, 48, tzinfo=dt.timezone.utc)  # Friday's moment: Wednesday 23:59
    ticking = Ticking(start)
    monkeypatch.setattr(clock, "_current", ticking)
    assert (
        shop.put(f"{BASE}/weekly", body=standing(starts_on="2026-05-08"), token="customer-c1-token").status_code == 200
    )
    handlers.every_minute(None)
    assert len(shop.get("/deliveries").json_body["deliveries"]) == 1
    assert ticking.now() <= start + dt.timedelta(seconds=30)

    ticking.set(dt.datetime(2026, 5, 10, 23, 58, 35, tzinfo=dt.timezone.utc))  # Tuesday 12th's moment: 25 s on
    handlers.every_minute(None)
    assert len(shop.get("/deliveries").json_body["deliveries"]) == 1
    ticking.set(dt.datetime(2026, 5, 10, 23, 59, 40, tzinfo=dt.timezone.utc))  # the next invocation
    handlers.every_minute(None)
    assert len(shop.get("/deliveries").json_body["deliveries"]) == 2


def test_make_runs_run_takes_what_is_due_and_returns_without_waiting(shop, monkeypatch):
    """`make run` looks again every 10 s by itself (run_forever): its run never waits; the schedule's run waits
    for moments until its window ends."""
    start = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
    ticking = Ticking(start)
    monkeypatch.setattr(clock, "_current", ticking)
    standing_order_turns.place_due(clock.after(16))
    assert ticking.now() == start
    standing_order_turns.scheduled(clock.after(21))
    assert ticking.now() == start + dt.timedelta(seconds=20)
