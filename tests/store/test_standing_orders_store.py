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
    return store.Stored({"id": "x", "paused": False}, "born1", "2026-05-04", list(skips), version, due)


def put(account, customer_id, standing_id, new, previous, change, now):
    """What the service's write does: the repository's operations and the Change in one unit of work."""
    operations = store.putting(account, customer_id, standing_id, new, previous)
    refused = committed(account, *operations, changes=[change], now=now)
    return new if refused is None else refused


def recording(account, customer_id, standing_id, born, date, outcome, changes, now):
    operations = store.recording(account, customer_id, standing_id, born, date, outcome, now)
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


def test_a_date_is_recorded_once_whatever_races(engine):
    results = []
    barrier = threading.Barrier(6)

    def record():
        barrier.wait()
        results.append(
            recording(ACCOUNT, "c1", "s", "born1", "2026-05-05", {"status": "PLACED", "delivery_ids": [1]}, [], NOW)
        )

    threads = [threading.Thread(target=record) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(repr, results)) == sorted([repr(None)] + [repr(outcomes.Taken())] * 5)
    assert store.records(ACCOUNT, "c1", "s", "born1", "2026-05-01", "2026-05-31") == {
        "2026-05-05": {"status": "PLACED", "delivery_ids": [1]}
    }
    assert store.records(ACCOUNT, "c1", "s", "born2", "2026-05-01", "2026-05-31") == {}  # a new standing order


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
