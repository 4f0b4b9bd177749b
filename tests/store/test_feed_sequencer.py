"""The sequencer (store/feed_sequencer.py) on moto and DynamoDB Local: one account's marked records get their
sequences, each record exactly once, whatever is handed over again (at any age, from any shard, in any order),
whichever step a numbering dies at, and with two numberings of the account at once (a replay beside the queue's).
The head stays the same few numbers. The records are built here (as the stream's marks show them:
store/feed_marks.said), so the resources need not exist."""

import datetime as dt
import threading
from collections import Counter
from types import SimpleNamespace

import pytest

from chalicelib.domain.feed import RETENTION_DAYS
from chalicelib.domain.timestamps import iso
from chalicelib.store import feed, feed_sequencer, keys, table
from chalicelib.store.feed_marks import Marked
from chalicelib.store.feed_sequencer import number
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


def marked(record: int, *changes: dict, created: int = EPOCH, account: str = ACCOUNT) -> Marked:
    """A stream record of the account's with its changes (`record` its id, its creation)."""
    return Marked(f"r{record}", account, created, list(changes), unit=f"u{record}")


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
    monkeypatch.setattr(feed_sequencer, "time", SimpleNamespace(sleep=waits.append))
    return waits


def test_entries_are_consecutive_from_one_and_say_what_their_change_said(engine):
    changes = [
        said("delivery.requested", "12", status="REQUESTED"),
        said("delivery.integration", "12", status="REQUESTED", integration="IMPORTED"),
        said("customer-pricing.updated", "cola", customer_id="c1"),
        said("standing-order.failed", "weekly", customer_id="c1", date="2031-01-02"),
        said("delivery.delivered", "12", status="DELIVERED", by="supplier"),
    ]
    records = [marked(101, changes[0]), marked(102, *changes[1:3]), marked(103, *changes[3:])]
    outcome = number(ACCOUNT, records)
    assert (outcome.count, outcome.done, outcome.head.sequence) == (5, {"r101", "r102", "r103"}, 5)
    units = ["u101", "u102", "u102", "u103", "u103"]
    assert entries() == [{"sequence": n, **change, "unit": u} for n, (change, u) in enumerate(zip(changes, units), 1)]
    stored = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.feed_entry_key(ACCOUNT, 5)))
    # Kept from the change on (the table's TTL), not from its numbering.
    assert int(table.from_item(stored["Item"])["expires_at"]) == EPOCH + RETENTION_DAYS * 86400
    assert number("other", [marked(104, category("x"), account="other")]).head.sequence == 1  # each its own feed
    assert ids("other") == ["x"] and len(entries()) == 5


def test_a_record_handed_over_again_at_any_age_from_anywhere_in_any_order_is_numbered_once(engine):
    batch = [marked(100 + n, category(f"k{n}")) for n in range(5)]
    assert number(ACCOUNT, batch).count == 5
    again = number(ACCOUNT, batch)  # the whole batch again, as after a failure the queue hands it over
    assert (again.count, again.done, again.head.sequence) == (0, {r.id for r in batch}, 5)
    retried = number(ACCOUNT, batch[2:] + [marked(105, category("k5"))])  # from a record in the middle
    assert (retried.count, retried.done) == (1, {r.id for r in batch[2:]} | {"r105"})
    assert number(ACCOUNT, [batch[4], batch[0], marked(106, category("k6")), batch[1]]).count == 1  # any order
    # A day later, as another shard or a replay of the stream hands it over: its item is kept that long and more.
    late = Marked("r103", ACCOUNT, EPOCH + 86400, [category("k3")], unit="u103")
    assert number(ACCOUNT, [late]).count == 0
    assert number(ACCOUNT, [marked(107, category("k7")), marked(107, category("k7"))]).count == 1  # twice at once
    assert ids() == [f"k{n}" for n in range(8)]
    assert [entry["sequence"] for entry in entries()] == list(range(1, 9))


def test_a_records_item_is_kept_longer_than_the_stream_and_the_queue_keep_it_from_its_creation(engine):
    number(ACCOUNT, [marked(1, category("x"), created=EPOCH - 3600)])
    stored = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.feed_record_key(ACCOUNT, "r1")))
    kept = int(table.from_item(stored["Item"])[table.TTL_ATTRIBUTE]) - (EPOCH - 3600)
    assert kept == feed_sequencer.RECORD_KEPT_SECONDS > 86400 + 14 * 86400  # the stream's day, the queue's 14 days


def test_the_head_stays_the_same_few_numbers_however_many_records_it_numbered(engine):
    def head_item():
        response = table.client().get_item(
            TableName=table.name(), Key=table.to_item(keys.feed_head_key(ACCOUNT)), ConsistentRead=True
        )
        return table.from_item(response["Item"])

    number(ACCOUNT, [marked(1, category("a"))])
    first = head_item()
    for start in range(0, 300, 30):
        number(ACCOUNT, [marked(1000 + n, category(f"c{n}"), created=EPOCH + n) for n in range(start, start + 30)])
    last = head_item()
    assert set(first) == set(last) == {"PK", "SK", "sequence", "previous", "last_event_sequence"} | SELECTION_KEPT
    assert (last["sequence"], last["previous"], last["events"], last["events_version"]) == (301, 271, None, 0)


SELECTION_KEPT = {"events", "events_version"}  # the webhook settings' selection of event types, on the head


def reads_of(monkeypatch) -> list[str]:
    """From now on, the sort key of each item the numbering reads with GetItem."""
    read: list[str] = []

    def get_item(send, **request):
        read.append(request["Key"]["SK"]["S"])
        return send(**request)

    intercept(monkeypatch, get_item, "get_item")
    return read


def put_selection(*types: str, account: str = ACCOUNT) -> None:
    """What a PUT of the webhook settings writes beside them (service/webhooks.put_settings)."""
    table.client().transact_write_items(TransactItems=[feed.selecting(account, list(types)).item])


def test_the_selection_a_put_keeps_on_the_head_is_read_with_it_in_one_item(engine, monkeypatch):
    put_selection("category.updated")
    read = reads_of(monkeypatch)
    number(ACCOUNT, [marked(1, category("x")), marked(2, said("category.created", "y"))])
    assert read == [keys.FEED_HEAD_SK]
    assert [event[:3] for event in events()] == [(1, 0, "category.updated")]


def test_a_selection_put_by_an_earlier_release_is_read_once_and_copied_onto_the_head(engine, monkeypatch):
    select_events("category.created")  # on the settings' item only
    read = reads_of(monkeypatch)
    number(ACCOUNT, [marked(1, said("category.created", "y"))])
    number(ACCOUNT, [marked(2, said("category.created", "z"))])
    assert read == [keys.FEED_HEAD_SK, keys.webhooks_key(ACCOUNT)["SK"], keys.FEED_HEAD_SK]
    assert (feed.read_head(ACCOUNT).selection, feed.read_head(ACCOUNT).selection_version) == (("category.created",), 0)
    assert [event[:3] for event in events()] == [(1, 0, "category.created"), (2, 1, "category.created")]


@pytest.mark.parametrize("kept_before", [True, False])
def test_a_put_between_the_numberings_read_and_its_move_refuses_it_and_its_events_follow_the_put(
    engine, monkeypatch, kept_before
):
    (put_selection if kept_before else select_events)("category.created")
    waits = no_pauses(monkeypatch)
    real, raced = feed_sequencer.read_head, []

    def read_head(account, consistent=True):
        head = real(account, consistent)
        if not raced:
            raced.append(put_selection("category.updated"))
        return head

    monkeypatch.setattr(feed_sequencer, "read_head", read_head)
    outcome = number(ACCOUNT, [marked(1, category("x")), marked(2, said("category.created", "y"))])
    assert (outcome.count, len(waits)) == (2, 1)
    assert [event[:3] for event in events()] == [(1, 0, "category.updated")]


def test_a_head_of_the_previous_release_loses_its_shard_positions_with_its_first_move(engine):
    item = {**keys.feed_head_key(ACCOUNT), "sequence": 4, "positions": {"shard": {"seq": "9", "at": EPOCH}}}
    table.client().put_item(TableName=table.name(), Item=table.to_item({**item, "clock": EPOCH}))
    assert feed.read_head(ACCOUNT).previous == 4  # every earlier move is long over
    number(ACCOUNT, [marked(1, category("a"))])
    response = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.feed_head_key(ACCOUNT)))
    assert "positions" not in response["Item"] and "clock" not in response["Item"]
    assert [entry["sequence"] for entry in feed.read(ACCOUNT, 4, 10, NOW).entries] == [5]


def test_a_record_is_never_split_between_two_numbering_transactions(engine, monkeypatch):
    sizes: list[int] = []

    def recorded(send, **request):
        sizes.append(len(request["TransactItems"]))
        if len(sizes) == 3:
            raise Crash("before the third transaction")
        return send(**request)

    real = intercept(monkeypatch, recorded)
    changes = [category(f"c{n}") for n in range(199)]
    # The head, per record its item, per change its entry: 1 + (1 + 48) + (1 + 49) fill one transaction exactly;
    # 1 + (1 + 48) + (1 + 50) do not: the second record waits whole.
    number(ACCOUNT, [marked(1, *changes[:48]), marked(2, *changes[48:97])])
    second = [marked(3, *changes[97:145]), marked(4, *changes[145:199])]
    with pytest.raises(Crash):
        number(ACCOUNT, second)
    assert sizes == [100, 50, 56]
    monkeypatch.setattr(table, "client", lambda: real)
    assert feed.read_head(ACCOUNT).sequence == 145
    assert number(ACCOUNT, second).count == 54  # handed over again: the record the crash held, whole
    assert ids() == [f"c{n}" for n in range(199)]


@pytest.mark.parametrize("at", range(3), ids=["head", "selection", "transaction"])
@pytest.mark.parametrize("after", [False, True], ids=["before", "after"])
def test_a_numbering_that_dies_at_any_step_is_done_by_the_next_each_change_once(engine, monkeypatch, at, after):
    batch = [marked(101 + n, category(f"k{n}")) for n in range(5)]
    batch.append(marked(106, said("delivery.requested", "12", status="REQUESTED")))
    client = crashing(monkeypatch, None)
    number("other", [Marked(r.id, "other", r.created, r.changes) for r in batch])
    assert client.calls == [
        "get_item",
        "get_item",
        "transact_write_items",
    ]  # the head, the webhook selection, one transaction: the steps a numbering can die at
    client = crashing(monkeypatch, at, after)
    with pytest.raises(Crash):
        number(ACCOUNT, batch)
    restored(monkeypatch, client)
    again = number(ACCOUNT, batch)
    assert (again.count, again.done) == (0 if (at, after) == (2, True) else 6, {r.id for r in batch})
    assert ids() == [f"k{n}" for n in range(5)] + ["12"]
    assert [event[:3] for event in events()] == [(6, 0, "request-delivery")]


def test_a_numbering_raced_by_another_reads_the_head_again_and_numbers_after_it(engine, monkeypatch):
    """Two numberings of one account at once: the queue's and a replay's, say."""
    waits = no_pauses(monkeypatch)
    mine = [marked(101 + n, category(f"a{n}")) for n in range(3)]
    theirs = [marked(201 + n, category(f"b{n}")) for n in range(2)]
    real, raced = feed_sequencer._selection, []

    def racing(account):
        selected = real(account)
        if not raced:
            raced.append(None)
            raced[0] = number(account, theirs)  # commits between our reads and our transaction
        return selected

    monkeypatch.setattr(feed_sequencer, "_selection", racing)
    outcome = number(ACCOUNT, mine)
    assert (raced[0].count, outcome.count, outcome.head.sequence) == (2, 3, 5)
    assert outcome.done == {"r101", "r102", "r103"}
    assert len(waits) == 1  # lost once
    assert ids() == ["b0", "b1", "a0", "a1", "a2"]


def test_the_head_is_read_eventually_consistent_and_a_stale_one_is_read_again_consistently(engine, monkeypatch):
    """Half a read unit per numbering: a stale head only loses the condition on its sequence (issue 43's cost)."""
    waits = no_pauses(monkeypatch)
    number(ACCOUNT, [marked(1, category("x")), marked(2, category("y"))])
    stale = feed.read_head(ACCOUNT)
    number(ACCOUNT, [marked(3, category("z"))])
    reads: list[bool] = []

    def read_head(account, consistent=True):
        reads.append(consistent)
        return stale if len(reads) == 1 else feed.read_head(account, consistent)

    monkeypatch.setattr(feed_sequencer, "read_head", read_head)
    outcome = number(ACCOUNT, [marked(4, category("w"))])
    assert reads == [False, True]
    assert (outcome.count, outcome.head.sequence, len(waits)) == (1, 4, 1)
    assert ids() == ["x", "y", "z", "w"]


def test_a_numbering_that_keeps_losing_leaves_the_rest_and_the_next_numbers_it(engine, monkeypatch):
    number(ACCOUNT, [marked(1, category("x"))])
    waits = no_pauses(monkeypatch)

    def refused(send, **request):
        raise cancelled(["ConditionalCheckFailed"] + ["None"] * (len(request["TransactItems"]) - 1), "moved")

    real = intercept(monkeypatch, refused)
    outcome = number(ACCOUNT, [marked(2, category("y")), marked(3, category("z"))])
    assert (outcome.count, outcome.done, outcome.head.sequence) == (0, set(), 1)
    assert len(waits) == feed_sequencer.MAX_ATTEMPTS - 1
    monkeypatch.setattr(table, "client", lambda: real)
    assert number(ACCOUNT, [marked(2, category("y")), marked(3, category("z"))]).count == 2
    assert ids() == ["x", "y", "z"]


def test_a_numbering_refused_for_another_reason_raises_and_numbers_nothing(engine, monkeypatch):
    def throttled(send, **request):
        raise cancelled(["None", "ThrottlingError"] + ["None"] * (len(request["TransactItems"]) - 2), "throttled")

    intercept(monkeypatch, throttled)
    with pytest.raises(table.WriteFailed):
        number(ACCOUNT, [marked(1, category("x"))])


def test_a_change_type_this_release_does_not_know_is_numbered_without_an_event_and_blocks_nothing(engine):
    unknown = said("product.archived", "cola")  # a newer release's, during a deploy
    known = said("delivery.requested", "12", status="REQUESTED")
    outcome = number(ACCOUNT, [marked(1, unknown), marked(2, known)])
    assert (outcome.count, outcome.done) == (2, {"r1", "r2"})
    assert entries() == [{"sequence": 1, **unknown, "unit": "u1"}, {"sequence": 2, **known, "unit": "u2"}]
    assert [event[:3] for event in events()] == [(2, 0, "request-delivery")]


def test_an_unreadable_record_is_one_entry_that_says_so_and_blocks_nothing(engine):
    select_events("category.updated")
    broken = Marked("mark.e1", ACCOUNT, EPOCH, unreadable="a change without its type, id or time on A#acme X")
    outcome = number(ACCOUNT, [marked(1, category("a")), broken, marked(2, category("b"))])
    assert (outcome.count, outcome.done) == (3, {"r1", "mark.e1", "r2"})
    assert entries()[1] == {
        "sequence": 2,
        "type": "feed.unreadable",
        "resource": "feed",
        "id": "mark.e1",
        "at": iso(NOW),
        "reason": "a change without its type, id or time on A#acme X",
    }
    assert [event[:3] for event in events()] == [(1, 0, "category.updated"), (3, 1, "category.updated")]
    assert number(ACCOUNT, [broken]).count == 0  # once, too


def test_events_chain_across_numberings_and_are_made_at_their_change_never_before_the_latest(engine):
    select_events("category.updated", "delivery.requested")
    later = NOW + dt.timedelta(seconds=2)
    number(ACCOUNT, [marked(1, category("x")), marked(2, said("category.created", "y"))])  # makes none of y
    behind = NOW - dt.timedelta(minutes=1)  # another writer's clock a minute behind
    number(ACCOUNT, [marked(3, said("delivery.requested", "12", at=later, status="REQUESTED"))])
    number(ACCOUNT, [marked(4, category("x", at=behind))])
    assert events() == [
        (1, 0, "category.updated", iso(NOW)),
        (3, 1, "delivery.requested", iso(later)),
        (4, 3, "category.updated", iso(later)),
    ]
    head = feed.read_head(ACCOUNT)
    assert (head.sequence, head.last_event_sequence, head.last_event_at) == (4, 4, iso(later))


@pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)
def test_two_numberings_of_one_account_at_once_make_one_gap_free_sequence_each_record_once(engine):
    """Threads against the real engine, handing over overlapping records (a replay beside the queue's numbering):
    the head's condition lets one numbering through at a time, the records' items each record once."""
    select_events("category.updated")
    records = {
        name: [marked(1000 * i + n, category(f"{name}{n}")) for n in range(60)] for i, name in ((1, "a"), (2, "b"))
    }
    shared = records["a"][:20]  # both hand these over
    start, failures = threading.Barrier(2), []

    def numbering(name: str):
        try:
            start.wait()
            mine = (shared + records[name]) if name == "b" else records[name]
            for first in range(0, len(mine), 6):  # six records at a time, as messages hand them over
                batch = mine[first : first + 6]
                while {r.id for r in batch} - number(ACCOUNT, batch).done:
                    pass
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    threads = [threading.Thread(target=numbering, args=(name,)) for name in records]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    found = entries()
    assert [entry["sequence"] for entry in found] == list(range(1, 121))
    assert Counter(entry["id"] for entry in found) == Counter(f"{s}{n}" for s in records for n in range(60))
    for name in records:
        assert [entry["id"] for entry in found if entry["id"][0] == name] == [f"{name}{n}" for n in range(60)]
    made = events()
    assert [(sequence, previous) for sequence, previous, *_ in made] == [(n, n - 1) for n in range(1, 121)]
