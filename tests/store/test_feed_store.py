"""The change feed's guarantees (decisions §13, docs/feed.md), on DynamoDB Local and moto.

- 24 writers of mixed changes on one account at once, with two sequencers numbering beside them: the feed holds
  exactly the committed changes, with sequences 1..N, each resource's changes in the order they were made.
- A crash before or after every DynamoDB request of a write (the Lambda dies there): the change and its
  pending entry are both there or both missing, and numbering continues the sequence without a gap.
- A crash before or after every request of the sequencer: nothing is numbered twice or lost.
Writes here leave their entries pending (no prompt sequencer): each test numbers when it means to.
"""

import datetime as dt
import threading
from collections import Counter

import pytest

from chalicelib.domain.errors import Busy
from chalicelib.service import catalogue, changes, customers, deliveries, ordering, pricing, settings, webhooks
from chalicelib.service import feed_numbering as numbering
from chalicelib.store import feed, feed_numbering, feed_queue, keys, table
from chalicelib.store.feed import FeedBusy
from tests.transactions import cancelled, intercept

pytestmark = pytest.mark.pending_feed

ACCOUNT = "acme"
NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
WRITERS = 24
ROUNDS = 4


def number_all(account: str = ACCOUNT) -> int:
    """Number every pending entry, as the background loop does; the head's sequence after."""
    while not feed_numbering.number(account, dt.datetime.now(dt.timezone.utc)).done:
        pass
    return feed.read_head(account).sequence


def full_feed(account: str = ACCOUNT) -> list[dict]:
    """Every entry, read the way a reader does (pending ones numbered first): pages of 1000 until caught up."""
    number_all(account)
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
                except (Busy, FeedBusy):
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
                committed_once(
                    lambda: settings.patch_delivery_settings(
                        ACCOUNT, {"dates_with_no_delivery": [f"2031-{r + 1:02d}-{n + 1:02d}"]}
                    )
                )  # shared
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

    writing = threading.Event()
    writing.set()

    def sequencer():
        # Two of them race each other and the writers: the head's condition lets one win at a time.
        try:
            while writing.is_set():
                feed_numbering.number(ACCOUNT, dt.datetime.now(dt.timezone.utc))
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    sequencers = [threading.Thread(target=sequencer) for _ in range(2)]
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for thread in threads + sequencers:
        thread.start()
    for thread in threads:
        thread.join()
    writing.clear()
    for thread in sequencers:
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
        assert [e["type"] for e in new if (e["resource"], e["id"]) == ("category", f"c{n}")] == ["category.created"] + [
            "category.updated"
        ] * (ROUNDS - 1)
    # The shared customer's last entry is the write whose value is stored now.
    assert customers.get_customer(ACCOUNT, "c1")["price_group"] in {f"g{n}-{ROUNDS - 1}" for n in range(WRITERS)}
    assert feed.read_head(ACCOUNT).sequence == len(entries)


class Crash(Exception):
    """The Lambda died here."""


class CrashingClient:
    """The real client, but the `at`-th request dies before it is sent, or after it is answered."""

    CALLS = {
        "get_item",
        "batch_get_item",
        "transact_write_items",
        "update_item",
        "put_item",
        "delete_item",
        "query",
        "batch_write_item",
    }

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
        ("product", lambda: catalogue.get_product(ACCOUNT, "beer").body),  # the JSON a GET answers
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
    return deliveries.get_delivery(ACCOUNT, str(delivery_id))["status"], len(
        deliveries.get_delivery(ACCOUNT, str(delivery_id))["responses"]
    )


WRITES = {
    "put product": lambda n: catalogue.put_product(ACCOUNT, "beer", product(f"Ale {n}"), None),
    "patch product": lambda n: catalogue.patch_product(ACCOUNT, "beer", {"price": 200 + n}, None),
    "put customer": lambda n: customers.put_customer(ACCOUNT, "c1", {"name": f"Bar {n}", "address": ADDRESS}),
    "price groups": lambda n: pricing.put_price_groups(ACCOUNT, "beer", {"gold": {"price": 50 + n}}),
    "delivery settings": lambda n: settings.patch_delivery_settings(
        ACCOUNT, {"dates_with_no_delivery": [f"2031-01-{n % 28 + 1:02d}"]}
    ),
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
    assert steps >= 1  # at least the transaction
    for at in range(steps):
        for after in (False, True):
            n += 1
            before_state, before_sequence = state_of(), number_all()
            crashing = CrashingClient(real, at, after)
            monkeypatch.setattr(table, "client", lambda: crashing)
            with pytest.raises(Crash):
                write_of(n)
            monkeypatch.setattr(table, "client", lambda: real)
            changed = state_of() != before_state
            appended = number_all() - before_sequence
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
        return number_all(), len(deliveries.list_deliveries(ACCOUNT, 100, None, None).items)

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


def _pending_changes(account: str = ACCOUNT) -> list[dict]:
    return [change for item in feed_numbering.read_state(account).pending for change in item["changes"]]


def test_a_write_commits_a_pending_entry_that_numbering_turns_into_the_next_sequence(shop):
    before = number_all()
    catalogue.put_category(ACCOUNT, "mine", {"name": "Mine"})
    assert feed.read_head(ACCOUNT).sequence == before  # the write did not touch the head
    assert [(c["type"], c["id"]) for c in _pending_changes()] == [("category.created", "mine")]
    assert number_all() == before + 1
    assert _pending_changes() == []
    assert [(e["sequence"], e["type"], e["id"]) for e in full_feed()[before:]] == [
        (before + 1, "category.created", "mine")
    ]


def test_one_resources_changes_are_numbered_in_order_across_several_transactions(shop):
    """More changes of one resource than one numbering transaction holds: the first ones go in one, the rest in
    the next, in the order they were made."""
    before = number_all()
    for n in range(120):
        catalogue.put_category(ACCOUNT, "busy", {"name": f"Busy {n}"})
    catalogue.put_category(ACCOUNT, "other", {"name": "Other"})
    first = feed_numbering.number(ACCOUNT, NOW, rounds=1)
    assert 0 < first.count < 121 and not first.done
    assert number_all() == before + 121
    entries = full_feed()[before:]
    assert [e["sequence"] for e in entries] == list(range(before + 1, before + 122))
    busy = [e["type"] for e in entries if e["id"] == "busy"]
    assert busy == ["category.created"] + ["category.updated"] * 119


@pytest.mark.parametrize("at", range(3))
@pytest.mark.parametrize("after", [False, True], ids=["before", "after"])
def test_a_crash_of_the_sequencer_at_any_step_numbers_nothing_twice_and_loses_nothing(shop, monkeypatch, at, after):
    """The sequencer reads the head with the pending entries (one Query), the webhook selection, then commits:
    dying before or after any of the three leaves every change numbered once by the next run."""
    before = number_all()
    for n in range(5):
        catalogue.put_category(ACCOUNT, f"k{n}", {"name": f"K{n}"})
    catalogue.put_category(ACCOUNT, "k0", {"name": "K0 again"})
    real = table.client()
    crashing = CrashingClient(real, at, after)
    monkeypatch.setattr(table, "client", lambda: crashing)
    with pytest.raises(Crash):
        feed_numbering.number(ACCOUNT, NOW)
    monkeypatch.setattr(table, "client", lambda: real)
    entries = full_feed()[before:]
    assert [e["sequence"] for e in entries] == list(range(before + 1, before + 7))
    assert Counter((e["type"], e["id"]) for e in entries) == Counter(
        [("category.created", f"k{n}") for n in range(5)] + [("category.updated", "k0")]
    )
    assert [e["type"] for e in entries if e["id"] == "k0"] == ["category.created", "category.updated"]


def test_two_sequencers_at_once_number_each_change_once(shop, monkeypatch):
    """Another sequencer commits between our reads and our transaction: the head's condition refuses ours, and
    we read again and number what is left (nothing, here)."""
    before = number_all()
    for n in range(3):
        catalogue.put_category(ACCOUNT, f"r{n}", {"name": f"R{n}"})
    real = feed_numbering._selection
    raced = []

    def racing(account):
        read = real(account)
        if not raced:
            raced.append(True)
            assert feed_numbering.number(account, NOW).count == 3  # the other sequencer
        return read

    monkeypatch.setattr(feed_numbering, "_selection", racing)
    outcome = feed_numbering.number(ACCOUNT, NOW)
    assert (outcome.count, outcome.done, outcome.head.sequence) == (0, True, before + 3)
    monkeypatch.setattr(feed_numbering, "_selection", real)
    assert [e["id"] for e in full_feed()[before:]] == ["r0", "r1", "r2"]


def test_a_refused_write_leaves_no_pending_entry(shop):
    before = number_all()
    catalogue.create_category(ACCOUNT, {"id": "mine", "name": "Mine"})
    with pytest.raises(Exception):
        catalogue.create_category(ACCOUNT, {"id": "mine", "name": "Again"})
    assert [c["type"] for c in _pending_changes()] == ["category.created"]
    assert number_all() == before + 1


def test_a_resource_with_too_many_changes_waiting_is_busy_and_writes_nothing(shop, monkeypatch):
    """The pending entry of one resource is bounded (FEED_PENDING_PER_RESOURCE changes): beyond it, 409 until
    the sequencer catches up."""
    monkeypatch.setattr(feed, "FEED_PENDING_PER_RESOURCE", 3)
    number_all()
    for n in range(3):
        catalogue.put_category(ACCOUNT, "full", {"name": f"Full {n}"})
    with pytest.raises(FeedBusy):
        catalogue.put_category(ACCOUNT, "full", {"name": "One too many"})
    assert catalogue.get_category(ACCOUNT, "full")["name"] == "Full 2"
    catalogue.put_category(ACCOUNT, "elsewhere", {"name": "Another resource"})  # not held up
    number_all()
    catalogue.put_category(ACCOUNT, "full", {"name": "Now it fits"})
    assert catalogue.get_category(ACCOUNT, "full")["name"] == "Now it fits"


def test_writes_to_different_resources_share_no_item(shop, monkeypatch):
    """Issue 25: nothing all of one account's writes touch inside their transactions (no head, no counts)."""
    seen: list[set] = []

    def recorded(send, **request):
        seen.append({repr(table.item_key(item)) for item in request["TransactItems"]})
        return send(**request)

    real = intercept(monkeypatch, recorded)
    catalogue.put_category(ACCOUNT, "x1", {"name": "X1"})
    catalogue.put_category(ACCOUNT, "x2", {"name": "X2"})
    catalogue.put_product(ACCOUNT, "beer", product("Beer again"), None)
    catalogue.put_product(ACCOUNT, "wine", product("Wine"), None)
    customers.put_customer(ACCOUNT, "c2", {"name": "Other bar", "address": ADDRESS})
    first, second = place_one(), place_one()
    deliveries.respond(ACCOUNT, str(first), {"type": "ACCEPT"})
    deliveries.respond(ACCOUNT, str(second), {"type": "ACCEPT"})
    monkeypatch.setattr(table, "client", lambda: real)
    for i, mine in enumerate(seen):
        for theirs in seen[i + 1 :]:
            shared = mine & theirs
            if any("#PENDING" in key for key in shared):
                continue  # two changes of one resource (an order, then its response): serialised by design
            # Only items of a resource both name: the product two orders mark used, the category two products
            # are checked against. No per-account item.
            assert all("PRODUCT#" in key or "CATEGORY#" in key for key in shared), shared


@pytest.fixture
def fake_clock():
    from chalicelib.service import clock

    fake = clock.FakeClock(dt.datetime.now(dt.timezone.utc))
    previous = clock.use(fake)
    yield fake
    clock.use(previous)


def number_at(fake_clock) -> int:
    """number_all at the fake clock's time (what a numbering empties carries that time)."""
    while not (outcome := feed_numbering.number(ACCOUNT, fake_clock.now())).done:
        pass
    return outcome.head.sequence


def _pending_item(resource_key: str) -> dict | None:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.feed_pending_key(ACCOUNT, resource_key)), ConsistentRead=True
    )
    return table.from_item(response["Item"]) if "Item" in response else None


def test_a_sweep_leaves_changes_younger_than_its_settle_time_to_readers(shop, fake_clock):
    """The background sweep and a reader numbering one account at once waste each other's transactions: the sweep
    takes only changes older than SWEEP_SETTLE (a reader takes everything at once)."""
    before = number_at(fake_clock)
    catalogue.put_category(ACCOUNT, "young", {"name": "Young"})
    fake_clock.advance(numbering.SWEEP_SETTLE - dt.timedelta(milliseconds=1))
    assert numbering.sweep(fake_clock.now() + dt.timedelta(seconds=30)) == {"numbered": 0, "left": 0}
    assert [c["id"] for c in _pending_changes()] == ["young"]
    fake_clock.advance(dt.timedelta(milliseconds=2))
    assert numbering.sweep(fake_clock.now() + dt.timedelta(seconds=30)) == {"numbered": 1, "left": 0}
    assert feed.read_head(ACCOUNT).sequence == before + 1


def test_a_reader_numbers_changes_of_any_age(shop, fake_clock):
    before = number_at(fake_clock)
    catalogue.put_category(ACCOUNT, "fresh", {"name": "Fresh"})
    page = changes.read_changes(ACCOUNT, before, 10, False)
    assert [(e["sequence"], e["id"]) for e in page["changes"]] == [(before + 1, "fresh")]
    assert page["max_sequence"] == before + 1


def number_keeping(monkeypatch, fake_clock) -> None:
    """A numbering refused once (as when a write appended to an entry it would delete): it keeps the entries it
    empties from then on."""
    refusals = []

    def refused_once(send, **request):
        if not refusals:
            refusals.append(True)
            raise cancelled(["ConditionalCheckFailed"] + ["None"] * (len(request["TransactItems"]) - 1), "appended")
        return send(**request)

    real = intercept(monkeypatch, refused_once)
    feed_numbering.number(ACCOUNT, fake_clock.now())
    monkeypatch.setattr(table, "client", lambda: real)


def test_an_emptied_pending_entry_of_a_busy_resource_stays_until_it_was_empty_a_while_then_a_sweep_deletes_it(
    shop, fake_clock, monkeypatch
):
    """A numbering refused once keeps the entries it empties; so does one of a resource numbered before and
    changed again within QUIET. Others are deleted by the numbering that empties them."""
    number_at(fake_clock)
    catalogue.put_category(ACCOUNT, "once", {"name": "Once"})
    number_keeping(monkeypatch, fake_clock)
    emptied = _pending_item("category#once")
    assert emptied is not None and emptied["changes"] == []  # a write appending now is not refused by a delete
    assert ACCOUNT in feed_queue.accounts_pending(100)
    fake_clock.advance(numbering.CLEAR_EMPTIED_AFTER)
    numbering.sweep(fake_clock.now() + dt.timedelta(seconds=30))
    assert _pending_item("category#once") is not None  # empty for exactly CLEAR_EMPTIED_AFTER: not yet
    fake_clock.advance(dt.timedelta(milliseconds=1))
    numbering.sweep(fake_clock.now() + dt.timedelta(seconds=30))
    assert _pending_item("category#once") is None
    assert ACCOUNT not in feed_queue.accounts_pending(100)
    catalogue.put_category(ACCOUNT, "once", {"name": "Busy again"})
    feed_numbering.number(ACCOUNT, fake_clock.now())
    assert _pending_item("category#once") is None  # recreated, never numbered since: deleted when numbered
    catalogue.put_category(ACCOUNT, "once", {"name": "Busy"})
    number_keeping(monkeypatch, fake_clock)
    catalogue.put_category(ACCOUNT, "once", {"name": "Busier"})  # numbered before, changed within QUIET
    feed_numbering.number(ACCOUNT, fake_clock.now())
    assert _pending_item("category#once")["changes"] == []
    fake_clock.advance(feed_numbering.QUIET)
    catalogue.put_category(ACCOUNT, "once", {"name": "Quiet"})
    fake_clock.advance(feed_numbering.QUIET + dt.timedelta(milliseconds=1))
    feed_numbering.number(ACCOUNT, fake_clock.now())
    assert _pending_item("category#once") is None


def test_clearing_keeps_an_entry_a_write_appended_to_and_deletes_the_others(shop, fake_clock, monkeypatch):
    before = number_at(fake_clock)
    for name in ("a", "b", "c"):
        catalogue.put_category(ACCOUNT, name, {"name": name})
    number_keeping(monkeypatch, fake_clock)
    mine = [f"FEED#PENDING#category#{n}" for n in ("a", "b", "c")]
    emptied = [item for item in feed_numbering.read_state(ACCOUNT).emptied if item["SK"] in mine]
    assert sorted(item["SK"] for item in emptied) == mine
    catalogue.put_category(ACCOUNT, "b", {"name": "B again"})  # after the state was read
    assert feed_numbering.clear(emptied) == 2
    assert _pending_item("category#a") is None and _pending_item("category#c") is None
    assert [c["type"] for c in _pending_item("category#b")["changes"]] == ["category.updated"]
    assert [(e["type"], e["id"]) for e in full_feed()[before:]][-1] == ("category.updated", "b")


def test_a_numbering_that_loses_its_last_round_answers_the_head_it_read_not_the_one_it_planned(shop, monkeypatch):
    """A reader takes max_sequence from the numbering: a head only planned would promise entries that are not there."""
    before = number_all()
    catalogue.put_category(ACCOUNT, "late", {"name": "Late"})

    def refused(send, **request):
        raise cancelled(["TransactionConflict"] + ["None"] * (len(request["TransactItems"]) - 1), "held")

    real = intercept(monkeypatch, refused)
    outcome = feed_numbering.number(ACCOUNT, NOW, rounds=1)
    monkeypatch.setattr(table, "client", lambda: real)
    assert (outcome.count, outcome.done, outcome.head.sequence) == (0, False, before)
    assert number_all() == before + 1
