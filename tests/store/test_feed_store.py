"""The change feed's guarantees (decisions §13, docs/feed.md), on DynamoDB Local and moto.

- 24 writers of mixed changes on one account at once: the feed holds exactly the committed changes, with
  sequences 1..N, each resource's changes in the order they were made.
- A crash before or after every DynamoDB request of a write (the Lambda dies there): the change and its
  entry are both there or both missing, and the next write continues the sequence without a gap.
"""
import datetime as dt
import threading
from collections import Counter

import pytest

from chalicelib.domain.errors import Busy
from chalicelib.service import catalogue, customers, deliveries, ordering, pricing, settings, webhooks
from chalicelib.store import feed, keys, table

ACCOUNT = "acme"
NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
WRITERS = 24
ROUNDS = 4


def full_feed(account: str = ACCOUNT) -> list[dict]:
    """Every entry, read the way a reader does: pages of 1000 until caught up."""
    entries, after = [], 0
    while True:
        read = feed.read(account, after, 1000, dt.datetime.now(dt.timezone.utc))
        assert isinstance(read, feed.Entries), read
        entries += read.entries
        if not read.entries:
            return entries
        after = read.entries[-1]["sequence"]


def product(name: str, **fields) -> dict:
    return {"status": "ACTIVE", "category": "drinks", "name": name, "price": 100, **fields}


ADDRESS = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}


@pytest.fixture
def shop(engine):
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"})
    catalogue.put_product(ACCOUNT, "beer", product("Pale Ale"), None)
    customers.put_customer(ACCOUNT, "c1", {"name": "Bar", "address": ADDRESS})
    return engine


def place_one() -> int:
    body = {"items": [{"id": "beer", "count": 1}], "user": {"name": "Olli", "email": "olli@example.com"}}
    (delivery,) = ordering.place_order(ACCOUNT, "c1", body)
    return delivery["id"]


@pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)
def test_concurrent_writers_of_mixed_changes_leave_exactly_their_entries_in_order(shop):
    """Each writer owns some resources (its order of changes is known) and shares others with everyone."""
    start_sequence = len(full_feed())
    delivery_ids = [place_one() for _ in range(WRITERS)]
    start_sequence += WRITERS
    committed: list[tuple[str, str]] = []
    own_order: dict[str, list[str]] = {}
    failures = []
    lock = threading.Lock()
    barrier = threading.Barrier(WRITERS)

    def writer(n: int):
        mine = []

        def did(kind: str, ident: str):
            mine.append((kind, ident))

        def committed_once(write):
            # 409 Busy (the head stayed contended for 5 s) wrote nothing: try again, as a client would.
            while True:
                try:
                    return write()
                except Busy:
                    continue

        try:
            barrier.wait()
            for r in range(ROUNDS):
                pid = f"p{n}"
                committed_once(lambda: catalogue.put_product(ACCOUNT, pid, product(f"P{n} v{r}"), None))
                did("product.created" if r == 0 else "product.updated", pid)
                committed_once(lambda: catalogue.put_category(ACCOUNT, f"c{n}", {"name": f"C{n} v{r}"}))
                did("category.created" if r == 0 else "category.updated", f"c{n}")
                committed_once(lambda: customers.patch_customer(ACCOUNT, "c1", {"price_group": f"g{n}-{r}"}))  # shared
                did("customer.updated", "c1")
                committed_once(lambda: settings.patch_delivery_settings(ACCOUNT, {"dates_with_no_delivery": [f"2031-{r + 1:02d}-{n + 1:02d}"]}))  # shared
                did("settings.updated", "deliveries")
            committed_once(lambda: deliveries.respond(ACCOUNT, str(delivery_ids[n]), {"type": "ACCEPT"}))
            did("delivery.accepted", str(delivery_ids[n]))
            committed_once(lambda: catalogue.delete_product(ACCOUNT, f"p{n}", None))
            did("product.deleted", f"p{n}")
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)
        with lock:
            committed.extend(mine)
            own_order[f"p{n}"] = [kind for kind, ident in mine if ident == f"p{n}"]

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert not failures, failures
    entries = full_feed()
    assert [e["sequence"] for e in entries] == list(range(1, len(entries) + 1))
    new = entries[start_sequence:]
    # Shared settings writes may find their value already set by another writer: no change, no entry.
    unchanged = Counter(committed) - Counter((e["type"], e["id"]) for e in new)
    assert set(unchanged) <= {("settings.updated", "deliveries"), ("customer.updated", "c1")}
    assert Counter((e["type"], e["id"]) for e in new) == Counter(committed) - unchanged
    for n in range(WRITERS):
        assert [e["type"] for e in new if (e["resource"], e["id"]) == ("product", f"p{n}")] == own_order[f"p{n}"]
        assert [e["type"] for e in new if (e["resource"], e["id"]) == ("category", f"c{n}")] == ["category.created"] + ["category.updated"] * (ROUNDS - 1)
    # The shared customer's last entry is the write whose value is stored now.
    assert customers.get_customer(ACCOUNT, "c1")["price_group"] in {f"g{n}-{ROUNDS - 1}" for n in range(WRITERS)}
    assert feed.read_head(ACCOUNT).sequence == len(entries)


class Crash(Exception):
    """The Lambda died here."""


class CrashingClient:
    """The real client, but the `at`-th request dies before it is sent, or after it is answered."""

    CALLS = {"get_item", "batch_get_item", "transact_write_items", "update_item", "put_item", "delete_item", "query", "batch_write_item"}

    def __init__(self, real, at: int | None, after: bool):
        self.real, self.at, self.after, self.count = real, at, after, 0

    def __getattr__(self, name):
        attribute = getattr(self.real, name)
        if name not in self.CALLS:
            return attribute

        def call(**request):
            index = self.count
            self.count += 1
            if index == self.at and not self.after:
                raise Crash(f"before {name}")
            answer = attribute(**request)
            if index == self.at and self.after:
                raise Crash(f"after {name}")
            return answer

        return call


def _state():
    """What GETs show of the resources the writes below touch."""
    found = {}
    for name, read in (
        ("product", lambda: catalogue.get_product(ACCOUNT, "beer").data),
        ("customer", lambda: customers.get_customer(ACCOUNT, "c1")),
        ("groups", lambda: pricing.get_price_groups(ACCOUNT, "beer")),
        ("settings", lambda: settings.get_delivery_settings(ACCOUNT)),
        ("category", lambda: catalogue.get_category(ACCOUNT, "extra")),
        ("webhooks", lambda: webhooks.get_settings(ACCOUNT)),
    ):
        try:
            found[name] = read()
        except Exception:  # noqa: BLE001 - absent
            found[name] = None
    return table.plain(found)


def _delivery_state(delivery_id: int):
    return deliveries.get_delivery(ACCOUNT, str(delivery_id))["status"], len(deliveries.get_delivery(ACCOUNT, str(delivery_id))["responses"])


WRITES = {
    "put product": lambda n: catalogue.put_product(ACCOUNT, "beer", product(f"Ale {n}"), None),
    "patch product": lambda n: catalogue.patch_product(ACCOUNT, "beer", {"price": 200 + n}, None),
    "put customer": lambda n: customers.put_customer(ACCOUNT, "c1", {"name": f"Bar {n}", "address": ADDRESS}),
    "price groups": lambda n: pricing.put_price_groups(ACCOUNT, "beer", {"gold": {"price": 50 + n}}),
    "delivery settings": lambda n: settings.patch_delivery_settings(ACCOUNT, {"dates_with_no_delivery": [f"2031-01-{n % 28 + 1:02d}"]}),
    "category": lambda n: catalogue.put_category(ACCOUNT, "extra", {"name": f"Extra {n}"}),
    "webhooks": lambda n: webhooks.put_settings(ACCOUNT, {"url": f"https://erp.example.com/{n}"}),
}


def _requests_of(write) -> int:
    counting = CrashingClient(table.client(), None, False)
    real = table.client
    table.client = lambda: counting
    try:
        write()
    finally:
        table.client = real
    return counting.count


def _crash_everywhere(write_of, state_of, monkeypatch):
    """Run the write dying before and after each of its requests; after each crash the change and its entry are
    both there or both missing; then the write runs through and the feed stays consecutive."""
    real = table.client()
    n = 0
    steps = _requests_of(lambda: write_of(n))
    assert steps >= 2  # a read of the head (with what is written), then the transaction
    for at in range(steps):
        for after in (False, True):
            n += 1
            before_state, before_sequence = state_of(), feed.read_head(ACCOUNT).sequence
            crashing = CrashingClient(real, at, after)
            monkeypatch.setattr(table, "client", lambda: crashing)
            with pytest.raises(Crash):
                write_of(n)
            monkeypatch.setattr(table, "client", lambda: real)
            changed = state_of() != before_state
            appended = feed.read_head(ACCOUNT).sequence - before_sequence
            assert appended == (1 if changed else 0), (at, after, changed, appended)
            write_of(n + 1000)  # the next write goes through
            n += 1
    entries = full_feed()
    assert [e["sequence"] for e in entries] == list(range(1, len(entries) + 1))


@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_crash_between_any_two_steps_leaves_the_change_and_its_entry_together(shop, monkeypatch, write):
    _crash_everywhere(WRITES[write], _state, monkeypatch)


def test_a_crash_while_a_delivery_changes_leaves_the_change_and_its_entry_together(shop, monkeypatch):
    ids = iter([place_one() for _ in range(40)])
    current = {"id": next(ids)}

    def respond(n):
        if n >= 1000:  # the write after a crash: a fresh delivery for the next round
            current["id"] = next(ids)
            return
        deliveries.respond(ACCOUNT, str(current["id"]), {"type": "ACCEPT"})

    _crash_everywhere(respond, lambda: _delivery_state(current["id"]), monkeypatch)


def test_a_crash_while_an_order_is_placed_leaves_the_deliveries_and_their_entries_together(shop, monkeypatch):
    def count_deliveries():
        return feed.read_head(ACCOUNT).sequence, len(deliveries.list_deliveries(ACCOUNT, 100, None, None).items)

    real = table.client()
    steps = _requests_of(place_one)
    for at in range(steps):
        for after in (False, True):
            sequence, placed = count_deliveries()
            crashing = CrashingClient(real, at, after)
            monkeypatch.setattr(table, "client", lambda: crashing)
            with pytest.raises(Crash):
                place_one()
            monkeypatch.setattr(table, "client", lambda: real)
            new_sequence, new_placed = count_deliveries()
            assert new_sequence - sequence == new_placed - placed
    entries = full_feed()
    assert [e["sequence"] for e in entries] == list(range(1, len(entries) + 1))


def test_only_a_moved_head_is_retried_and_a_refused_write_appends_nothing(shop, monkeypatch):
    """Another write commits between our read of the head and our transaction: ours goes in after it."""
    before = feed.read_head(ACCOUNT).sequence
    real_read = feed.read_head
    raced = []

    def racing_read(account):
        head = real_read(account)
        if not raced:
            raced.append(True)
            catalogue.put_category(ACCOUNT, "racer", {"name": "Racer"})
        return head

    monkeypatch.setattr(feed, "read_head", racing_read)
    catalogue.create_category(ACCOUNT, {"id": "mine", "name": "Mine"})
    assert [(e["type"], e["id"]) for e in full_feed()[before:]] == [("category.created", "racer"), ("category.created", "mine")]
    monkeypatch.setattr(feed, "read_head", real_read)
    with pytest.raises(Exception):
        catalogue.create_category(ACCOUNT, {"id": "mine", "name": "Again"})
    assert feed.read_head(ACCOUNT).sequence == before + 2


def test_a_head_that_never_settles_is_busy(shop, monkeypatch):
    monkeypatch.setattr(feed, "MAX_ATTEMPTS", 3)
    monkeypatch.setattr(feed.time, "sleep", lambda seconds: None)
    real_read = feed.read_head
    monkeypatch.setattr(feed, "read_head", lambda account: feed.Head(real_read(account).sequence - 1, True))
    monkeypatch.setattr(feed, "_head_in", lambda error, position: None)  # nor does a failed condition tell it
    before = real_read(ACCOUNT).sequence
    with pytest.raises(Busy):
        catalogue.create_category(ACCOUNT, {"id": "never", "name": "Never"})
    assert real_read(ACCOUNT).sequence == before
    with pytest.raises(Exception):
        catalogue.get_category(ACCOUNT, "never")
