"""The sequencer (store/feed_numbering.py) on moto and DynamoDB Local: one shard's marked records of one account
get their sequences, each change exactly once, whatever the stream hands over again, whichever step a numbering
dies at, and with two shards of the account numbering at once. The records are built here (as the stream's marks
show them: store/feed_marks.said), so the resources need not exist."""

import datetime as dt
import threading
from collections import Counter
from types import SimpleNamespace

import pytest

from chalicelib.domain.feed import RETENTION_DAYS
from chalicelib.domain.timestamps import iso
from chalicelib.store import feed, feed_numbering, keys, table
from chalicelib.store.feed_numbering import Marked, number
from tests.transactions import cancelled, intercept

from .conftest import ACCOUNT, NOW
from .crashing import Crash, crashing, restored

pytestmark = pytest.mark.pending_feed  # nothing here commits a unit of work: no stream to drain

EPOCH = int(NOW.timestamp())


def said(change_type: str, resource_id: str, at: dt.datetime = NOW, **extra) -> dict:
    """A change as its mark says it (store/feed_marks.said)."""
    return {"type": change_type, "resource": change_type.rsplit(".", 1)[0], "id": resource_id, "at": iso(at), **extra}


def category(category_id: str, at: dt.datetime = NOW) -> dict:
    return said("category.updated", category_id, at)


def marked(sequence: int, *changes: dict, created: int = EPOCH) -> Marked:
    """A stream record of the account's with its changes (its sequence number in its shard, its creation)."""
    return Marked(str(sequence), created, list(changes))


def entries(account: str = ACCOUNT) -> list[dict]:
    read = feed.read(account, 0, 1000, NOW)
    assert isinstance(read, feed.Entries), read
    return read.entries


def ids(account: str = ACCOUNT) -> list[str]:
    return [entry["id"] for entry in entries(account)]


def events(account: str = ACCOUNT) -> list[tuple]:
    """The account's events in the order they were made: (sequence, previous_sequence, type, created_at)."""
    response = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.events_pk(account)),
        ConsistentRead=True,
    )
    found = map(table.from_item, response["Items"])
    return [(int(e["sequence"]), int(e["previous_sequence"]), e["type"], e["created_at"]) for e in found]


def select_events(*types: str, account: str = ACCOUNT) -> None:
    """The account's webhook settings select these event types (the numbering reads only `events`)."""
    item = {**keys.webhooks_key(account), "events": list(types)}
    table.client().put_item(TableName=table.name(), Item=table.to_item(item))


def no_pauses(monkeypatch) -> list[float]:
    """The pauses a numbering that lost a race takes, recorded instead of slept."""
    waits: list[float] = []
    monkeypatch.setattr(feed_numbering, "time", SimpleNamespace(sleep=waits.append))
    return waits


def test_entries_are_consecutive_from_one_and_say_what_their_change_said(engine):
    changes = [
        said("delivery.requested", "12", status="REQUESTED"),
        said("delivery.integration", "12", status="REQUESTED", integration="IMPORTED"),
        said("customer-pricing.updated", "cola", customer_id="c1"),
        said("standing-order.failed", "weekly", customer_id="c1", date="2031-01-02"),
        said("product.deleted", "cola", at=NOW + dt.timedelta(milliseconds=5)),
    ]
    records = [marked(101, changes[0]), marked(102, *changes[1:3]), marked(103, *changes[3:])]
    outcome = number(ACCOUNT, "a", records)
    assert (outcome.count, outcome.done, outcome.head.sequence) == (5, True, 5)
    assert entries() == [{"sequence": n, **change} for n, change in enumerate(changes, 1)]
    stored = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.feed_entry_key(ACCOUNT, 5)))
    # Kept from the change on (the table's TTL), not from its numbering.
    assert int(table.from_item(stored["Item"])["expires_at"]) == EPOCH + RETENTION_DAYS * 86400
    assert number("other", "a", [marked(104, category("x"))]).head.sequence == 1  # each account its own feed
    assert ids("other") == ["x"] and len(entries()) == 5


def test_a_batch_handed_over_again_numbers_nothing_twice(engine):
    batch = [marked(100 + n, category(f"k{n}")) for n in range(5)]
    assert number(ACCOUNT, "a", batch).count == 5
    again = number(ACCOUNT, "a", batch)  # the whole batch again, as after a failure the stream hands it over
    assert (again.count, again.done, again.head.sequence) == (0, True, 5)
    retried = number(ACCOUNT, "a", batch[2:] + [marked(105, category("k5"))])  # from a record in the middle
    assert (retried.count, retried.done) == (1, True)
    assert number(ACCOUNT, "a", [marked(99, category("old"))]).count == 0  # at or before the position
    # Sequence numbers are numbers: 1000 is after 999 although it sorts before it as text.
    assert number(ACCOUNT, "a", [marked(999, category("k6")), marked(1000, category("k7"))]).count == 2
    assert number(ACCOUNT, "b", batch[:1]).count == 1  # another shard's numbers are its own
    assert ids() == [f"k{n}" for n in range(8)] + ["k0"]
    assert [entry["sequence"] for entry in entries()] == list(range(1, 10))


def test_the_head_keeps_each_shards_last_record_and_the_newest_record_time(engine, monkeypatch):
    number(ACCOUNT, "a", [marked(101, category("x"), created=EPOCH), marked(102, category("y"), created=EPOCH + 5)])
    number(ACCOUNT, "b", [marked(7, category("z"), created=EPOCH + 3)])
    head = feed.read_head(ACCOUNT)
    assert (head.sequence, head.clock) == (3, EPOCH + 5)
    assert head.positions == {"a": {"seq": "102", "at": EPOCH + 5}, "b": {"seq": "7", "at": EPOCH + 3}}
    client = crashing(monkeypatch, None)
    assert number(ACCOUNT, "a", [marked(102, category("y"))]).count == 0
    assert client.calls == ["get_item"]  # read the head, found it numbered: no other request
    restored(monkeypatch, client)
    assert feed.read_head(ACCOUNT) == head


def test_another_shards_position_is_kept_for_position_kept_seconds_of_the_accounts_own_record_time(engine):
    """Kept while the stream may still hand that shard's batch over again; aged by the records' time, not the wall
    clock (this test's records are months old)."""
    kept = feed_numbering.POSITION_KEPT_SECONDS
    number(ACCOUNT, "old", [marked(1, category("a"), created=EPOCH)])
    number(ACCOUNT, "new", [marked(1, category("b"), created=EPOCH + kept)])
    assert set(feed.read_head(ACCOUNT).positions) == {"old", "new"}
    number(ACCOUNT, "new", [marked(2, category("c"), created=EPOCH - 10)])  # a late record moves no clock back
    assert set(feed.read_head(ACCOUNT).positions) == {"old", "new"}
    number(ACCOUNT, "new", [marked(3, category("d"), created=EPOCH + kept + 1)])
    head = feed.read_head(ACCOUNT)
    assert head.positions == {"new": {"seq": "3", "at": EPOCH + kept + 1}} and head.clock == EPOCH + kept + 1


def test_a_record_is_never_split_between_two_numbering_transactions(engine, monkeypatch):
    sizes: list[int] = []

    def recorded(send, **request):
        sizes.append(len(request["TransactItems"]))
        if len(sizes) == 3:
            raise Crash("before the third transaction")
        return send(**request)

    real = intercept(monkeypatch, recorded)
    changes = [category(f"c{n}") for n in range(199)]
    # The head and 49 + 50 entries fill one transaction exactly; 49 + 51 do not: the second record waits whole.
    number(ACCOUNT, "a", [marked(1, *changes[:49]), marked(2, *changes[49:99])])
    second = [marked(3, *changes[99:148]), marked(4, *changes[148:199])]
    with pytest.raises(Crash):
        number(ACCOUNT, "a", second)
    assert sizes == [100, 50, 52]
    monkeypatch.setattr(table, "client", lambda: real)
    head = feed.read_head(ACCOUNT)
    assert (head.sequence, head.positions["a"]["seq"]) == (148, "3")
    assert number(ACCOUNT, "a", second).count == 51  # handed over again: the record the crash held, whole
    assert ids() == [f"c{n}" for n in range(199)]


@pytest.mark.parametrize("at", range(3), ids=["head", "selection", "transaction"])
@pytest.mark.parametrize("after", [False, True], ids=["before", "after"])
def test_a_numbering_that_dies_at_any_step_is_done_by_the_next_each_change_once(engine, monkeypatch, at, after):
    batch = [marked(101 + n, category(f"k{n}")) for n in range(5)]
    batch.append(marked(106, said("delivery.requested", "12", status="REQUESTED")))
    client = crashing(monkeypatch, None)
    number("other", "a", batch)
    assert client.calls == [
        "get_item",
        "get_item",
        "transact_write_items",
    ]  # the head, the webhook selection, one transaction: the steps a numbering can die at
    client = crashing(monkeypatch, at, after)
    with pytest.raises(Crash):
        number(ACCOUNT, "a", batch)
    restored(monkeypatch, client)
    assert number(ACCOUNT, "a", batch).count == (0 if (at, after) == (2, True) else 6)
    assert ids() == [f"k{n}" for n in range(5)] + ["12"]
    assert [event[:3] for event in events()] == [(6, 0, "request-delivery")]


def test_a_numbering_raced_by_another_shards_reads_the_head_again_and_numbers_after_it(engine, monkeypatch):
    waits = no_pauses(monkeypatch)
    mine = [marked(101 + n, category(f"a{n}")) for n in range(3)]
    theirs = [marked(201 + n, category(f"b{n}")) for n in range(2)]
    real, raced = feed_numbering._selection, []

    def racing(account):
        selected = real(account)
        if not raced:
            raced.append(None)
            raced[0] = number(account, "b", theirs)  # commits between our reads and our transaction
        return selected

    monkeypatch.setattr(feed_numbering, "_selection", racing)
    outcome = number(ACCOUNT, "a", mine)
    assert (raced[0].count, outcome.count, outcome.done, outcome.head.sequence) == (2, 3, True, 5)
    assert len(waits) == 1  # lost once
    assert ids() == ["b0", "b1", "a0", "a1", "a2"]
    assert feed.read_head(ACCOUNT).positions == {"a": {"seq": "103", "at": EPOCH}, "b": {"seq": "202", "at": EPOCH}}


def test_a_numbering_that_keeps_losing_gives_up_with_the_head_it_read_and_the_next_numbers_it(engine, monkeypatch):
    number(ACCOUNT, "a", [marked(1, category("x"))])
    waits = no_pauses(monkeypatch)

    def refused(send, **request):
        raise cancelled(["ConditionalCheckFailed"] + ["None"] * (len(request["TransactItems"]) - 1), "moved")

    real = intercept(monkeypatch, refused)
    outcome = number(ACCOUNT, "a", [marked(2, category("y"))])
    assert (outcome.count, outcome.done, outcome.head.sequence) == (0, False, 1)
    assert len(waits) == feed_numbering.MAX_ATTEMPTS - 1
    monkeypatch.setattr(table, "client", lambda: real)
    assert number(ACCOUNT, "a", [marked(2, category("y"))]).count == 1 and ids() == ["x", "y"]


def test_a_change_type_this_release_does_not_know_is_numbered_without_an_event_and_blocks_nothing(engine):
    unknown = said("product.archived", "cola")  # a newer release's, during a deploy
    known = said("delivery.requested", "12", status="REQUESTED")
    outcome = number(ACCOUNT, "a", [marked(1, unknown), marked(2, known)])
    assert (outcome.count, outcome.done) == (2, True)
    assert entries() == [{"sequence": 1, **unknown}, {"sequence": 2, **known}]
    assert [event[:3] for event in events()] == [(2, 0, "request-delivery")]


def test_events_chain_across_numberings_and_are_made_at_their_change_never_before_the_latest(engine):
    select_events("category.updated", "delivery.requested")
    later = NOW + dt.timedelta(seconds=2)
    number(ACCOUNT, "a", [marked(1, category("x")), marked(2, said("category.created", "y"))])  # makes none
    behind = NOW - dt.timedelta(minutes=1)  # another writer's clock a minute behind
    number(ACCOUNT, "b", [marked(1, said("delivery.requested", "12", at=later, status="REQUESTED"))])
    number(ACCOUNT, "a", [marked(3, category("x", at=behind))])
    assert events() == [
        (1, 0, "category.updated", iso(NOW)),
        (3, 1, "delivery.requested", iso(later)),
        (4, 3, "category.updated", iso(later)),
    ]
    head = feed.read_head(ACCOUNT)
    assert (head.sequence, head.last_event_sequence, head.last_event_at) == (4, 4, iso(later))


@pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)
def test_two_shards_numbering_one_account_at_once_make_one_gap_free_sequence(engine):
    """Threads against the real engine: the head's condition lets one numbering through at a time."""
    select_events("category.updated")
    shards = {name: [marked(1000 + n, category(f"{name}{n}")) for n in range(60)] for name in ("a", "b")}
    start, failures = threading.Barrier(2), []

    def numbering(name: str):
        try:
            start.wait()
            for first in range(0, 60, 6):  # batches of six records, as the stream hands them over
                while not number(ACCOUNT, name, shards[name][first : first + 6]).done:
                    pass
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=numbering, args=(name,)) for name in shards]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    found = entries()
    assert [entry["sequence"] for entry in found] == list(range(1, 121))
    assert Counter(entry["id"] for entry in found) == Counter(f"{s}{n}" for s in shards for n in range(60))
    for name in shards:
        assert [entry["id"] for entry in found if entry["id"][0] == name] == [f"{name}{n}" for n in range(60)]
    made = events()
    assert [(sequence, previous) for sequence, previous, *_ in made] == [(n, n - 1) for n in range(1, 121)]
