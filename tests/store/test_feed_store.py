"""The change feed's guarantees end to end (decisions §13, docs/feed.md), on DynamoDB Local and moto: writes mark
their items, the table's stream hands the records to the numbering (tests/stream.drain, as the event source mapping
or make run's feeder does), and readers see exactly the committed changes, numbered 1..N, each once, each resource's
in the order they were made.

- 24 writers of mixed changes on one account at once, with the stream numbering beside them.
- A crash before or after every DynamoDB request of a write (the Lambda dies there): the change and its entry are
  both there or both missing, and the sequence goes on without a gap.
- The stream handing a batch over again (whole, or from a record in the middle) numbers nothing twice.
Writes here wait in the stream until a test drains it (pending_feed; the numbering's own steps:
test_feed_sequencer.py).
"""

import datetime as dt
import threading
from collections import Counter

import pytest
from chalice.app import DynamoDBEvent

from chalicelib.domain.errors import Busy
from chalicelib.jobs import handlers
from chalicelib.service import catalogue, changes, customers, deliveries, ordering, pricing, settings, webhooks
from chalicelib.store import feed, feed_marks, keys, table
from tests.stream import drain
from tests.transactions import intercept

from .crashing import Crash, CrashingClient, crashing, restored

pytestmark = pytest.mark.pending_feed

ACCOUNT = "acme"
WRITERS = 24
ROUNDS = 4


def number_all(account: str = ACCOUNT) -> int:
    """Hand everything the stream holds to the numbering; the head's sequence after."""
    drain()
    return feed.read_head(account).sequence


def full_feed(account: str = ACCOUNT) -> list[dict]:
    """Every entry once the stream is drained, read as a reader does: pages of 1000 until caught up."""
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
            while True:  # 409 Busy (a delivery kept changing under it) wrote nothing: a client tries again
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
                committed_once(
                    lambda: settings.patch_delivery_settings(
                        ACCOUNT, {"dates_with_no_delivery": [f"2031-{r + 1:02d}-{n + 1:02d}"]}
                    )
                )  # shared
                did("settings.updated", "deliveries")
            committed_once(lambda: deliveries.respond(ACCOUNT, str(delivery_ids[n]), {"type": "ACCEPT"}))
            did("delivery.accepted", str(delivery_ids[n]))
            committed_once(lambda: catalogue.delete_product(ACCOUNT, f"p{n}", None))
            did("product.deleted", f"p{n}")  # the product item's REMOVE record
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)
        with lock:
            committed.extend(mine)
            own_order[f"p{n}"] = [kind for kind, ident in mine if ident == f"p{n}"]

    writing = threading.Event()
    writing.set()

    def stream():
        try:  # the stream's numbering, beside the writers (as the event source mapping polls)
            while writing.is_set():
                drain()
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    numbering = threading.Thread(target=stream)
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for thread in threads + [numbering]:
        thread.start()
    for thread in threads:
        thread.join()
    writing.clear()
    numbering.join()

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
    shown = deliveries.get_delivery(ACCOUNT, str(delivery_id))
    return shown["status"], len(shown["responses"])


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
    return len(counting.calls)


def _crash_everywhere(write_of, state_of, monkeypatch):
    """Run the write dying before and after each of its requests; after each crash the change and its entry are
    both there or both missing; then the write runs through and the feed stays consecutive."""
    n = 0
    steps = _requests_of(lambda: write_of(n))
    assert steps >= 1  # at least the write itself
    for at in range(steps):
        for after in (False, True):
            n += 1
            before_state, before_sequence = state_of(), number_all()
            client = crashing(monkeypatch, at, after)
            with pytest.raises(Crash):
                write_of(n)
            restored(monkeypatch, client)
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

    steps = _requests_of(place_one)
    for at in range(steps):
        for after in (False, True):
            sequence, placed = count_deliveries()
            client = crashing(monkeypatch, at, after)
            with pytest.raises(Crash):
                place_one()
            restored(monkeypatch, client)
            new_sequence, new_placed = count_deliveries()
            assert new_sequence - sequence == new_placed - placed
    entries = full_feed()
    assert [e["sequence"] for e in entries] == list(range(1, len(entries) + 1))


def test_a_write_marks_its_item_and_is_in_the_feed_once_the_stream_is_numbered(shop):
    before = number_all()
    catalogue.put_category(ACCOUNT, "mine", {"name": "Mine"})
    assert feed.read_head(ACCOUNT).sequence == before  # the write did not touch the head
    stored = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.category_key(ACCOUNT, "mine")))
    assert [c["type"] for c in table.from_item(stored["Item"])[feed_marks.MARK]["changes"]] == ["category.created"]
    page = changes.read_changes(ACCOUNT, before, 10, False)  # a read numbers nothing: the stream does
    assert (page["changes"], page["max_sequence"]) == ([], before)
    catalogue.delete_category(ACCOUNT, "mine")  # leaves no item to mark: its REMOVE record says it
    assert number_all() == before + 2
    shown = changes.read_changes(ACCOUNT, before, 10, False)["changes"]
    assert [(e["sequence"], e["type"], e["id"]) for e in shown] == [
        (before + 1, "category.created", "mine"),
        (before + 2, "category.deleted", "mine"),
    ]


def test_a_write_that_leaves_an_items_mark_as_it_was_is_no_change(shop):
    """A housekeeping write on a marked item (a claim, a counter, an image's bookkeeping) keeps the mark: its
    stream record's old and new images carry the same unit."""
    catalogue.put_category(ACCOUNT, "mine", {"name": "Mine"})
    before = number_all()
    key = table.to_item(keys.category_key(ACCOUNT, "mine"))
    table.client().update_item(
        TableName=table.name(),
        Key=key,
        UpdateExpression="SET claimed = :c",
        ExpressionAttributeValues=table.values(c=1),
    )
    assert number_all() == before
    catalogue.put_category(ACCOUNT, "mine", {"name": "Mine again"})
    assert number_all() == before + 1


def test_one_request_is_one_entry_whatever_it_changes_along_the_way(shop):
    before = number_all()
    delivery_id = place_one()
    deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED"})
    deliveries.cancel(ACCOUNT, "c1", str(delivery_id), {})  # the integration state is PENDING again too
    catalogue.put_product(ACCOUNT, "beer", product("Pale Ale"), None)  # the same product again: no change
    assert [(e["type"], e.get("integration")) for e in full_feed()[before:]] == [
        ("delivery.requested", None),
        ("delivery.integration", "IMPORTED"),
        ("delivery.cancelled", None),
    ]


def test_one_resources_changes_are_numbered_in_order_across_several_transactions(shop):
    """More changes of one resource than one numbering transaction holds, handed over in one batch."""
    before = number_all()
    for n in range(120):
        catalogue.put_category(ACCOUNT, "busy", {"name": f"Busy {n}"})
    catalogue.put_category(ACCOUNT, "other", {"name": "Other"})
    assert number_all() == before + 121
    entries = full_feed()[before:]
    assert [e["sequence"] for e in entries] == list(range(before + 1, before + 122))
    assert [e["type"] for e in entries if e["id"] == "busy"] == ["category.created"] + ["category.updated"] * 119


def test_a_batch_the_stream_hands_over_again_whole_or_from_the_middle_numbers_nothing_twice(shop):
    before = number_all()
    handed: list[dict] = []

    def forwarding(event):
        handed.extend(event["Records"])
        return handlers.forward_changes(DynamoDBEvent(event, None))

    for n in range(4):
        catalogue.put_category(ACCOUNT, f"k{n}", {"name": f"K{n}"})
    drain(forwarding)
    head = feed.read_head(ACCOUNT)
    assert head.sequence == before + 4
    records = [record for record in handed if record["eventName"] != "INSERT" or "EVENT" not in str(record)]
    for again in (handed, handed[2:], list(reversed(handed))):  # as the event source mapping retries, or a replay
        assert handlers.forward_changes(DynamoDBEvent({"Records": again}, None)) == {"batchItemFailures": []}
        drain()
        assert feed.read_head(ACCOUNT) == head
    assert records and [e["id"] for e in full_feed()[before:]] == ["k0", "k1", "k2", "k3"]


def test_a_refused_write_leaves_no_entry(shop):
    before = number_all()
    catalogue.create_category(ACCOUNT, {"id": "mine", "name": "Mine"})
    with pytest.raises(Exception):
        catalogue.create_category(ACCOUNT, {"id": "mine", "name": "Again"})
    assert number_all() == before + 1
    assert [e["type"] for e in full_feed()[before:]] == ["category.created"]


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
    assert len(seen) >= 4  # the products (with their category check) and the orders; the rest are single writes
    ordered = {repr(table.key_of(keys.delivery_key(ACCOUNT, delivery_id))) for delivery_id in (first, second)}
    for i, mine in enumerate(seen):
        for theirs in seen[i + 1 :]:
            shared = mine & theirs
            if shared & ordered:
                continue  # two changes of one delivery (its order, then its response): serialised by design
            # Only items of a resource both name: the product two orders mark used, the category two products
            # are checked against. No per-account item but the account's count of categories, which two creations
            # of categories share: decisions §4 bounds them (as the deposit types' one item does).
            count = repr(table.key_of(keys.category_count_key(ACCOUNT)))
            assert all("PRODUCT#" in key or "CATEGORY#" in key or key == count for key in shared), shared
