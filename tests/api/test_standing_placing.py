"""Placing standing orders at most once (decisions §17): two placing loops racing, a crash between placing and
recording, a placer that died holding its claim, and one account's failure never holding up another."""

import datetime as dt

import pytest

from chalicelib.service import clock, ordering
from chalicelib.store import standing_orders as store

from .deliveries_helpers import CUSTOMER_TOKEN, shop  # noqa: F401
from .standing_support import occurrences, put_standing, run_placer


def own_deliveries(api, token=CUSTOMER_TOKEN):
    return [d["id"] for d in api.get("/customer/deliveries", token=token).json_body["deliveries"]]


def first_occurrence(api):
    return occurrences(api).json_body["occurrences"][0]


def test_two_placing_loops_racing_place_a_date_once(shop, monkeypatch):
    put_standing(shop)
    original = ordering.place_order
    inner = {}

    def place_order(*args, **kwargs):
        if not inner:
            inner["run"] = run_placer()  # the other loop runs while this one is placing
        return original(*args, **kwargs)

    monkeypatch.setattr(ordering, "place_order", place_order)
    outer = run_placer()
    assert (inner["run"]["placed"], inner["run"]["busy"]) == (0, 1)  # the date's key was held: it waited
    assert outer["placed"] == 1
    assert own_deliveries(shop) == [1]
    clock.current().advance(10)
    assert run_placer()["placed"] == 0
    assert own_deliveries(shop) == [1]
    assert first_occurrence(shop)["delivery_ids"] == [1]


def test_a_placed_date_is_recorded_in_the_orders_own_write_so_a_crash_after_it_places_nothing_twice(shop, monkeypatch):
    put_standing(shop)
    original = store.update

    def crash(*args, **kwargs):
        raise RuntimeError("the process died after placing, before the standing order was queued again")

    monkeypatch.setattr(store, "update", crash)
    assert run_placer()["crashed"] == 1
    assert own_deliveries(shop) == [1]
    assert first_occurrence(shop)["delivery_ids"] == [1]  # recorded with the order
    monkeypatch.setattr(store, "update", original)
    clock.current().advance(10)
    assert run_placer()["placed"] == 0
    assert own_deliveries(shop) == [1]


def test_a_crash_between_failing_and_recording_records_the_failure_once(shop, monkeypatch):
    from chalicelib.service import standing_placing

    put_standing(shop)
    shop.put("/products/beer", body={"status": "INACTIVE", "category": "drinks", "name": "Pale Ale"})
    original = standing_placing._recorded

    def crash(*args, **kwargs):
        raise RuntimeError("the process died after failing the date")

    monkeypatch.setattr(standing_placing, "_recorded", crash)
    assert run_placer()["crashed"] == 1
    assert first_occurrence(shop)["status"] == "PLANNED"  # failed, not yet recorded
    monkeypatch.setattr(standing_placing, "_recorded", original)
    assert run_placer()["failed"] == 1  # the key's answer holds the failure: recorded from it, not tried again
    first = first_occurrence(shop)
    assert first["status"] == "FAILED" and first["left_out"] == [{"id": "beer", "reason": "INACTIVE"}]
    failed = [e for e in shop.get("/changes?after=0&limit=1000").json_body["changes"] if e["type"].endswith(".failed")]
    assert len(failed) == 1


def test_a_placer_that_died_holding_its_claim_is_taken_over_after_it_goes_stale(shop, monkeypatch):
    from chalicelib.service import idempotency

    put_standing(shop)
    original_place, original_abandon = ordering.place_order, idempotency.abandon

    def die(*args, **kwargs):
        raise RuntimeError("the process died before placing")

    monkeypatch.setattr(ordering, "place_order", die)
    monkeypatch.setattr(idempotency, "abandon", lambda claim: None)  # nobody lets the claim go
    run_placer()
    monkeypatch.setattr(ordering, "place_order", original_place)
    monkeypatch.setattr(idempotency, "abandon", original_abandon)
    clock.current().advance(10)
    assert run_placer()["busy"] == 1  # the claim still holds
    assert own_deliveries(shop) == []
    clock.current().advance(60)
    assert run_placer()["placed"] == 1
    assert own_deliveries(shop) == [1]


def test_one_standing_order_failing_holds_up_no_other(shop, monkeypatch):
    put_standing(shop, "broken")
    put_standing(shop, "fine")
    original = ordering.place_order

    def place_order(account, customer_id, data, claim=None, placing=None):
        if placing.standing_order["id"] == "broken":
            raise RuntimeError("a store fault")
        return original(account, customer_id, data, claim, placing)

    monkeypatch.setattr(ordering, "place_order", place_order)
    summary = run_placer()
    assert (summary["placed"], summary["busy"]) == (1, 1)
    assert occurrences(shop, "broken").json_body["occurrences"][0]["status"] == "PLANNED"
    assert occurrences(shop, "fine").json_body["occurrences"][0]["delivery_ids"] == [1]
    monkeypatch.setattr(ordering, "place_order", original)
    clock.current().advance(10)
    assert run_placer()["placed"] == 1  # the broken one's date is tried again, once its fault is gone
    assert occurrences(shop, "broken").json_body["occurrences"][0]["status"] == "PLACED"


def test_a_pass_with_nothing_due_reads_only_the_queue(shop):
    from .customer_support import dynamodb_calls

    put_standing(shop, paused=True)
    with dynamodb_calls() as calls:
        assert run_placer()["due"] == 0
    assert set(calls) == {"Query"}
    assert len(calls) == 17  # every shard of the queue, and the partition of items from before the shards


@pytest.mark.parametrize("moment", ["2026-05-03T23:58:59+00:00"])
def test_a_date_is_not_placed_before_its_moment(shop, moment):
    clock.current().set(dt.datetime.fromisoformat(moment))
    put_standing(shop)
    assert run_placer()["due"] == 0
    clock.current().advance(1)
    assert run_placer()["placed"] == 1


def test_the_one_minute_schedule_places_due_dates(shop):
    """In AWS the schedule (jobs/triggers.py, the deploy template) runs every phase of jobs/handlers.py."""
    from chalicelib.jobs import handlers

    assert "standing-orders" in [phase.name for phase in handlers.PHASES]
    put_standing(shop)
    handlers.every_minute(None)
    assert own_deliveries(shop) == [1]


def test_make_run_runs_the_placing_loop():
    """`make run` gives every phase of jobs/handlers.py a loop; this one runs its rounds every 10 seconds (issue 34:
    an idle make run reads its queues seldom), well within §17's minute."""
    from chalicelib.jobs import budget, standing_order_turns
    from chalicelib.jobs.wakeups import Bells
    from chalicelib.localdev import run

    phases = [loop.args[0] for loop in run.background_loops()]
    assert standing_order_turns.PHASE in phases
    assert standing_order_turns.PHASE.loop is standing_order_turns.run_forever
    assert standing_order_turns.PAUSE_SECONDS <= 10
    (streamed,) = [loop for loop in run.background_loops(Bells()) if loop.args[0] is standing_order_turns.PHASE]
    assert streamed.func is budget.loop_forever


def test_a_skip_written_while_a_turn_runs_is_honoured(shop, monkeypatch):
    """The turn read the standing order before the customer skipped the date: it checks again once it holds the
    date's key, and leaves the date to the next turn, which sees the skip."""
    from chalicelib.service import idempotency

    put_standing(shop)
    original = idempotency.begin

    def begin(*args, **kwargs):
        shop.put("/customer/standing-orders/weekly/occurrences/2026-05-05", body={"skip": True}, token=CUSTOMER_TOKEN)
        return original(*args, **kwargs)

    monkeypatch.setattr(idempotency, "begin", begin)
    assert run_placer()["placed"] == 0
    monkeypatch.setattr(idempotency, "begin", original)
    clock.current().advance(10)
    run_placer()
    assert own_deliveries(shop) == []
    assert first_occurrence(shop)["status"] == "SKIPPED"


def test_an_account_with_many_dates_due_at_once_holds_up_no_other_account_of_its_shard(monkeypatch):
    """The due queue is oldest first: a round takes at most PER_ACCOUNT entries of each account, and the run goes
    round after round, so a wholesaler whose bars share one cutoff is placed in one run beside the others."""
    from chalicelib.jobs import standing_order_turns as turns
    from chalicelib.service import standing_placing as placing

    queue = [store.Due("busy", f"c{n}", "weekly", f"2026-05-04T09:00:{n:02d}.000Z") for n in range(8)]
    queue.append(store.Due("quiet", "c1", "weekly", "2026-05-04T09:01:00.000Z"))  # due after the busy ones
    placed = []

    class Turn:
        placed, failed, busy = 1, 0, 0

    monkeypatch.setattr(placing, "due", lambda limit: [item for item in queue if item not in placed][:limit])
    monkeypatch.setattr(placing, "take_turn", lambda item: placed.append(item) or Turn())
    monkeypatch.setattr(turns, "PER_ACCOUNT", 3)
    monkeypatch.setattr(turns, "READ", 5)  # a shard's read window smaller than the busy account's backlog...
    run = turns.place_due(clock.after(60))
    assert [item.account for item in placed] == ["busy"] * 7 + ["quiet", "busy"]  # ...shows the quiet one in round 3
    assert (run["due"], run["left"], run["placed"]) == (5, 0, 9)
    monkeypatch.setattr(turns, "READ", 1000)
    placed.clear()
    turns.place_due(clock.after(60))
    assert [item.account for item in placed] == ["busy", "quiet", "busy", "busy"] + ["busy"] * 5  # turns, then rounds
