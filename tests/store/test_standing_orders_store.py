"""The standing-order repository on moto and DynamoDB Local: the per-customer bound, conditional writes, a date
recorded once whatever races, and the due queue."""

import datetime as dt
import threading

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.domain.standing_orders import MAX_PER_CUSTOMER
from chalicelib.domain.timestamps import iso
from chalicelib.store import outcomes
from chalicelib.store import standing_orders as store

from .conftest import ACCOUNT, NOW, committed


def stored(due=None, version=1, skips=()):
    return store.Stored({"id": "x", "paused": False}, "2026-05-04", list(skips), version, due)


def put(account, customer_id, standing_id, new, previous, change, now):
    """What the service's write does: the repository's operations and the Change in one unit of work."""
    operations = store.putting(account, customer_id, standing_id, new, previous)
    refused = committed(account, *operations, changes=[change], now=now)
    return new if refused is None else refused


def recording(account, customer_id, standing_id, date, outcome, changes, now, shown=None):
    operations = store.recording(account, customer_id, standing_id, date, outcome, now, shown)
    return committed(account, *operations, changes=changes, now=now)


def created(standing_id, customer_id="c1"):
    """The change of the standing order's creation: marked on its own item (store/feed_marks.py), so it names the
    customer whose order it is."""
    return Change(ChangeType.STANDING_ORDER_CREATED, standing_id, customer_id=customer_id)


def test_a_customer_holds_at_most_fifty_even_when_writes_race(engine):
    if engine == "moto":
        pytest.skip("moto's transactions are not thread-safe; DynamoDB Local's are")
    for n in range(MAX_PER_CUSTOMER - 2):
        assert not isinstance(put(ACCOUNT, "c1", f"s{n}", stored(), None, created(f"s{n}"), NOW), outcomes.Refusal)
    results = []
    barrier = threading.Barrier(6)

    def create(n):
        barrier.wait()
        results.append(put(ACCOUNT, "c1", f"race{n}", stored(), None, created(f"race{n}"), NOW))

    threads = [threading.Thread(target=create, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    written = [r for r in results if not isinstance(r, outcomes.Refusal)]
    assert len(results) == 6 and len(written) <= 2
    assert all(isinstance(r, (outcomes.Full, outcomes.Contended)) for r in results if r not in written)
    listed = store.list_page(ACCOUNT, "c1", 100, None).items
    assert len(listed) == MAX_PER_CUSTOMER - 2 + len(written) <= MAX_PER_CUSTOMER
    assert put(ACCOUNT, "c2", "s0", stored(), None, created("s0", "c2"), NOW) == stored()  # another customer's own


def test_a_replacement_is_conditional_on_the_version_read(engine):
    first = stored()
    put(ACCOUNT, "c1", "s", first, None, created("s"), NOW)
    change = Change(ChangeType.STANDING_ORDER_UPDATED, "s", customer_id="c1")
    assert put(ACCOUNT, "c1", "s", stored(version=2), first, change, NOW) == stored(version=2)
    assert put(ACCOUNT, "c1", "s", stored(version=3), first, change, NOW) == outcomes.Stale()
    assert put(ACCOUNT, "c1", "s", stored(version=2), None, created("s"), NOW) == outcomes.Stale()
    assert store.update(ACCOUNT, "c1", "s", first, ["2026-05-12"], None) == outcomes.Stale()
    assert store.get(ACCOUNT, "c1", "s").version == 2


@pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)  # moto serves threads without isolation
def test_a_date_is_recorded_once_whatever_races(engine):
    results = []
    barrier = threading.Barrier(6)

    def record():
        barrier.wait()
        results.append(recording(ACCOUNT, "c1", "s", "2026-05-05", {"status": "PLACED", "delivery_ids": [1]}, [], NOW))

    threads = [threading.Thread(target=record) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(repr, results)) == sorted([repr(None)] + [repr(outcomes.Taken())] * 5)
    assert store.records(ACCOUNT, "c1", "s", "2026-05-01", "2026-05-31") == {
        "2026-05-05": {"status": "PLACED", "delivery_ids": [1]}
    }
    assert store.records(ACCOUNT, "c1", "t", "2026-05-01", "2026-05-31") == {}  # another standing order


def test_the_due_queue_holds_what_is_due_until_it_moves_on(engine):
    soon = NOW + dt.timedelta(minutes=5)
    first = stored(due=iso(soon))
    put(ACCOUNT, "c1", "s", first, None, created("s"), NOW)
    put("other", "c9", "t", stored(due=iso(NOW)), None, created("t", "c9"), NOW)
    assert [(d.account, d.customer_id, d.standing_id) for d in store.due(NOW, 10)] == [("other", "c9", "t")]
    due = store.due(soon, 10)
    assert [(d.account, d.standing_id, d.due) for d in due] == [("other", "t", iso(NOW)), (ACCOUNT, "s", iso(soon))]
    store.update(ACCOUNT, "c1", "s", first, [], None)  # paused, or nothing more to place
    assert [d.standing_id for d in store.due(soon, 10)] == ["t"]


def test_a_dates_outcome_outlives_a_delete_and_a_new_standing_order_under_the_id(engine):
    """decisions §17: a date is placed at most once per customer and standing order id, whatever was deleted and
    written again: the outcomes are kept per id, not per creation."""
    first = stored()
    put(ACCOUNT, "c1", "s", first, None, created("s"), NOW)
    assert recording(ACCOUNT, "c1", "s", "2026-05-05", {"status": "PLACED", "delivery_ids": [7]}, [], NOW) is None
    deleted = Change(ChangeType.STANDING_ORDER_DELETED, "s", customer_id="c1")
    assert committed(ACCOUNT, *store.deleting(ACCOUNT, "c1", "s", first), changes=[deleted]) is None
    put(ACCOUNT, "c1", "s", stored(), None, created("s"), NOW)
    assert store.records(ACCOUNT, "c1", "s", "2026-05-01", "2026-05-31") == {
        "2026-05-05": {"status": "PLACED", "delivery_ids": [7]}
    }
    again = recording(ACCOUNT, "c1", "s", "2026-05-05", {"status": "PLACED", "delivery_ids": [8]}, [], NOW)
    assert again == outcomes.Taken()


def _marked_changes(key) -> list[str]:
    from chalicelib.store import feed_marks, table

    item = table.client().get_item(TableName=table.name(), Key=table.to_item(key), ConsistentRead=True)["Item"]
    return [c["type"] for c in table.from_item({"m": item[feed_marks.MARK]})["m"]["changes"]]


@pytest.mark.pending_feed
def test_a_failed_date_is_marked_on_the_standing_orders_own_item(engine):
    """issue 43 with §17: the standing-order.failed change is marked on the item that carries the standing order's
    other changes (store/feed_marks.py), so the stream hands them over in the order they committed."""
    from chalicelib.store import keys

    put(ACCOUNT, "c1", "s", stored(), None, created("s"), NOW)
    failed = Change(ChangeType.STANDING_ORDER_FAILED, "s", customer_id="c1", date="2026-05-05")
    shown = {"date": "2026-05-05", "status": "FAILED", "place_at": "2026-05-03T23:59:00+00:00"}
    outcome = {"status": "FAILED", "errors": [{"path": "items", "message": "none"}]}
    assert recording(ACCOUNT, "c1", "s", "2026-05-05", outcome, [failed], NOW, shown) is None
    assert _marked_changes(keys.standing_order_key(ACCOUNT, "c1", "s")) == ["standing-order.failed"]


def test_a_failed_date_of_a_standing_order_deleted_meanwhile_is_not_recorded(engine):
    put(ACCOUNT, "c1", "s", stored(), None, created("s"), NOW)
    deleted = Change(ChangeType.STANDING_ORDER_DELETED, "s", customer_id="c1")
    committed(ACCOUNT, *store.deleting(ACCOUNT, "c1", "s", stored()), changes=[deleted])
    failed = Change(ChangeType.STANDING_ORDER_FAILED, "s", customer_id="c1", date="2026-05-05")
    shown = {"date": "2026-05-05", "status": "FAILED", "place_at": "2026-05-03T23:59:00+00:00"}
    outcome = {"status": "FAILED", "errors": []}
    assert recording(ACCOUNT, "c1", "s", "2026-05-05", outcome, [failed], NOW, shown) == outcomes.Gone()
    assert store.records(ACCOUNT, "c1", "s", "2026-05-01", "2026-05-31") == {}


def test_a_failed_date_and_an_update_of_the_standing_order_are_numbered_in_commit_order(engine):
    """On the real stream (DynamoDB Local) and moto's: failed, then updated, then failed again: the feed says so."""
    from chalicelib.store import feed

    first = stored()
    put(ACCOUNT, "c1", "s", first, None, created("s"), NOW)
    shown = {"date": "2026-05-05", "status": "FAILED", "place_at": "2026-05-03T23:59:00+00:00"}
    outcome = {"status": "FAILED", "errors": []}
    failed = Change(ChangeType.STANDING_ORDER_FAILED, "s", customer_id="c1", date="2026-05-05")
    assert recording(ACCOUNT, "c1", "s", "2026-05-05", outcome, [failed], NOW, shown) is None
    updated = Change(ChangeType.STANDING_ORDER_UPDATED, "s", customer_id="c1")
    assert put(ACCOUNT, "c1", "s", stored(version=2), first, updated, NOW) == stored(version=2)
    again = Change(ChangeType.STANDING_ORDER_FAILED, "s", customer_id="c1", date="2026-05-08")
    assert recording(ACCOUNT, "c1", "s", "2026-05-08", outcome, [again], NOW, {**shown, "date": "2026-05-08"}) is None
    read = feed.read(ACCOUNT, 0, 100, NOW)
    said = [(e["type"], e.get("date")) for e in read.entries]
    assert said == [
        ("standing-order.created", None),
        ("standing-order.failed", "2026-05-05"),
        ("standing-order.updated", None),
        ("standing-order.failed", "2026-05-08"),
    ]
    assert [e["sequence"] for e in read.entries] == [1, 2, 3, 4]
