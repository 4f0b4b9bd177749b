"""Issue 43: the replay path. `cli replay-feed` reads the table's stream from its start and numbers exactly the
changes the feed is missing, each account's in the stream's order, nothing twice; `cli mark-feed-numbered` (the upgrade
from the release whose numbering kept no record items) counts what the stream holds as numbered without numbering it.
On DynamoDB Local's stream (moto's streams API does not answer); writes wait in the stream until a test drains them
through the forwarder and the feed queue (tests/stream.py), so a change left undrained is one never numbered."""

import datetime as dt

import pytest

from chalicelib import cli
from chalicelib.service import catalogue, clock, feed_replay, webhooks
from chalicelib.store import feed, feed_sequencer, keys, stream_records, table
from tests.stream import drain

pytestmark = pytest.mark.pending_feed
ON_DYNAMODB_LOCAL = pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)


def write(account: str, category: str, name: str | None = None) -> None:
    catalogue.put_category(account, category, {"name": name or category.title()})


def fed(account: str) -> list[tuple[int, str, str]]:
    read = feed.read(account, 0, 1000, clock.now())
    return [(entry["sequence"], entry["type"], entry["id"]) for entry in read.entries]


def run(capsys, *argv: str) -> tuple[int, list[str], str]:
    """The command's exit code, the lines it printed, and its errors. Once a test in this process has loaded the
    app, the service's JSON log lines go to stdout too: they are not the command's."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, [line for line in out.splitlines() if not line.startswith('{"level"')], err


def events(account: str) -> list[tuple[int, str]]:
    """The account's webhook events: (sequence, type)."""
    found = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.events_pk(account)),
        ConsistentRead=True,
    )["Items"]
    return sorted((int(item["sequence"]), item["type"]) for item in map(table.from_item, found))


@ON_DYNAMODB_LOCAL
def test_a_replay_of_the_whole_stream_numbers_nothing_twice(engine, capsys):
    webhooks.put_settings("acme", {"url": "https://erp.example.com/hook", "events": ["category.created"]})
    write("acme", "a")
    write("acme", "b")
    write("other", "c")
    drain()
    numbered = {"acme": fed("acme"), "other": fed("other")}
    assert numbered["acme"] == [
        (1, "settings.updated", "webhooks"),
        (2, "category.created", "a"),
        (3, "category.created", "b"),
    ]
    assert events("acme") == [(2, "category.created"), (3, "category.created")]

    assert run(capsys, "replay-feed") == (
        0,
        [
            "acme: 3 records read, 0 numbered now, 3 numbered before",
            "other: 1 records read, 0 numbered now, 1 numbered before",
            "2 accounts: 4 records read, 0 numbered now, 4 numbered before",
        ],
        "",
    )
    assert {"acme": fed("acme"), "other": fed("other")} == numbered
    assert feed.read_head("acme").sequence == 3
    assert events("acme") == [(2, "category.created"), (3, "category.created")]


@ON_DYNAMODB_LOCAL
def test_a_replay_numbers_exactly_the_changes_never_numbered_in_the_order_they_were_written(engine, capsys):
    write("acme", "a")
    write("acme", "b")
    drain()
    # Never numbered: the forwarder or the queue lost them (what the replay is for).
    write("acme", "c")
    write("acme", "c", "Renamed")
    write("acme", "d")

    assert run(capsys, "replay-feed")[:2] == (
        0,
        [
            "acme: 5 records read, 3 numbered now, 2 numbered before",
            "1 accounts: 5 records read, 3 numbered now, 2 numbered before",
        ],
    )
    assert fed("acme") == [
        (1, "category.created", "a"),
        (2, "category.created", "b"),
        (3, "category.created", "c"),
        (4, "category.updated", "c"),
        (5, "category.created", "d"),
    ]
    # The forwarder reaching them later (the queue hands them over) numbers none of them again, nor does a replay.
    drain()
    assert run(capsys, "replay-feed")[1][0] == "acme: 5 records read, 0 numbered now, 5 numbered before"
    assert [sequence for sequence, _, _ in fed("acme")] == [1, 2, 3, 4, 5]


@ON_DYNAMODB_LOCAL
def test_a_replay_read_and_numbered_in_small_pieces_numbers_each_account_in_order(engine, capsys, monkeypatch):
    """The stream a page of two records at a time, the records held for numbering flushed past two: each account's
    changes are still numbered in the stream's order, every one once."""
    monkeypatch.setattr(stream_records, "BATCH", 2)
    monkeypatch.setattr(feed_replay, "HELD_AT_MOST", 2)
    monkeypatch.setattr(feed_replay, "CHUNK", 1000)
    for step in range(3):
        write("acme", "a", f"A{step}")
        write("other", "b", f"B{step}")
    write("acme", "c")

    assert run(capsys, "replay-feed")[1][-1] == "2 accounts: 7 records read, 7 numbered now, 0 numbered before"
    assert fed("acme") == [
        (1, "category.created", "a"),
        (2, "category.updated", "a"),
        (3, "category.updated", "a"),
        (4, "category.created", "c"),
    ]
    assert fed("other") == [(1, "category.created", "b"), (2, "category.updated", "b"), (3, "category.updated", "b")]


@ON_DYNAMODB_LOCAL
def test_a_replay_of_one_account_numbers_only_its_changes(engine, capsys):
    write("acme", "a")
    write("other", "b")
    write("third", "c")

    assert run(capsys, "replay-feed", "--account", "other")[:2] == (
        0,
        [
            "other: 1 records read, 1 numbered now, 0 numbered before",
            "1 accounts: 1 records read, 1 numbered now, 0 numbered before",
        ],
    )
    assert (fed("acme"), fed("other"), fed("third")) == ([], [(1, "category.created", "b")], [])
    # An account without changes in the stream is named with none.
    assert run(capsys, "replay-feed", "--account", "nobody")[1][0] == (
        "nobody: 0 records read, 0 numbered now, 0 numbered before"
    )
    assert run(capsys, "replay-feed")[1] == [
        "acme: 1 records read, 1 numbered now, 0 numbered before",
        "other: 1 records read, 0 numbered now, 1 numbered before",
        "third: 1 records read, 1 numbered now, 0 numbered before",
        "3 accounts: 3 records read, 2 numbered now, 1 numbered before",
    ]


@ON_DYNAMODB_LOCAL
def test_a_replay_since_a_time_reads_only_the_changes_written_from_then(engine, capsys):
    write("acme", "a")
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=2)  # the stream's times are to the minute here
    assert run(capsys, "replay-feed", "--since", later.isoformat())[1] == [
        "0 accounts: 0 records read, 0 numbered now, 0 numbered before"
    ]
    assert fed("acme") == []
    earlier = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert run(capsys, "replay-feed", "--since", earlier)[1][0] == (
        "acme: 1 records read, 1 numbered now, 0 numbered before"
    )
    assert fed("acme") == [(1, "category.created", "a")]


@pytest.mark.parametrize("since", ["yesterday", "2026-05-04T09:30:00", "2026-13-01T00:00:00Z", ""])
def test_a_replay_refuses_a_since_that_is_not_a_time_with_its_zone(capsys, since):
    with pytest.raises(SystemExit) as exited:
        cli.main(["replay-feed", "--since", since])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.endswith(
        f"replay-feed: error: argument --since: {since!r} is not a time with its zone, e.g. 2026-05-04T09:30:00Z\n"
    )


@ON_DYNAMODB_LOCAL
def test_a_record_whose_mark_cannot_be_read_is_replayed_as_an_entry_that_says_so(engine, capsys):
    key = keys.category_key("acme", "broken")
    table.client().put_item(TableName=table.name(), Item=table.to_item({**key, "feed_mark": {"unit": 7}}))

    assert run(capsys, "replay-feed")[1][0] == "acme: 1 records read, 1 numbered now, 0 numbered before"
    [(sequence, change_type, _)] = fed("acme")
    assert (sequence, change_type) == (1, "feed.unreadable")
    assert run(capsys, "replay-feed")[1][0] == "acme: 1 records read, 0 numbered now, 1 numbered before"


@ON_DYNAMODB_LOCAL
def test_an_account_whose_numbering_fails_keeps_the_rest_of_its_changes_for_the_next_replay(
    engine, capsys, monkeypatch
):
    monkeypatch.setattr(feed_replay, "CHUNK", 2)  # acme's three changes in two chunks
    for category in ("a", "b", "c"):
        write("acme", category)
    write("other", "d")
    real = feed_sequencer.number

    def failing(account, records, **named):
        if account == "acme":
            raise RuntimeError("throttled")
        return real(account, records, **named)

    monkeypatch.setattr(feed_sequencer, "number", failing)
    code, out, err = run(capsys, "replay-feed")
    assert (code, out) == (
        1,
        [
            "acme: 3 records read, 0 numbered now, 0 numbered before, 3 left (RuntimeError: throttled)",
            "other: 1 records read, 1 numbered now, 0 numbered before",
            "2 accounts: 4 records read, 1 numbered now, 0 numbered before",
        ],
    )
    assert err.endswith("error: 3 changes left unnumbered; fix the cause and run replay-feed again\n")
    assert (fed("acme"), fed("other")) == ([], [(1, "category.created", "d")])

    monkeypatch.setattr(feed_sequencer, "number", real)
    assert run(capsys, "replay-feed")[:2] == (
        0,
        [
            "acme: 3 records read, 3 numbered now, 0 numbered before",
            "other: 1 records read, 0 numbered now, 1 numbered before",
            "2 accounts: 4 records read, 3 numbered now, 1 numbered before",
        ],
    )
    assert [change_id for _, _, change_id in fed("acme")] == ["a", "b", "c"]


@ON_DYNAMODB_LOCAL
def test_after_mark_feed_numbered_neither_a_replay_nor_the_forwarder_numbers_what_the_stream_held(engine, capsys):
    """The upgrade: the previous release numbered these (with positions, no record items); marked, they are skipped
    by the new forwarder reading the stream from its start and by any replay."""
    write("acme", "a")
    write("acme", "a", "Renamed")
    write("other", "b")

    assert run(capsys, "mark-feed-numbered") == (
        0,
        [
            "acme: 2 records read, 2 marked numbered now, 0 numbered before",
            "other: 1 records read, 1 marked numbered now, 0 numbered before",
            "2 accounts: 3 records read, 3 marked numbered now, 0 numbered before",
        ],
        "",
    )
    assert run(capsys, "replay-feed")[1] == [
        "acme: 2 records read, 0 numbered now, 2 numbered before",
        "other: 1 records read, 0 numbered now, 1 numbered before",
        "2 accounts: 3 records read, 0 numbered now, 3 numbered before",
    ]
    drain()
    assert (fed("acme"), fed("other")) == ([], [])
    assert run(capsys, "mark-feed-numbered")[1][-1] == (
        "2 accounts: 3 records read, 0 marked numbered now, 3 numbered before"
    )
    # A change after the upgrade is numbered as ever.
    write("acme", "c")
    drain()
    assert fed("acme") == [(1, "category.created", "c")]


@ON_DYNAMODB_LOCAL
def test_marked_record_items_are_kept_as_long_as_the_numbering_keeps_its_own(engine, capsys):
    write("acme", "a")
    assert run(capsys, "mark-feed-numbered")[0] == 0
    items = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.feed_record_key("acme", "x")["PK"]),
        ConsistentRead=True,
    )["Items"]
    [item] = [table.from_item(found) for found in items]
    created = dt.datetime.now(dt.timezone.utc).timestamp()
    assert abs(int(item["expires_at"]) - feed_sequencer.RECORD_KEPT_SECONDS - created) < 120
    assert set(item) == {"PK", "SK", "expires_at"}


class Streams:
    """A streams API with an older stream and the latest, the latest's shards over two DescribeStream pages: a
    closed parent with a child, and an open shard whose reads come back empty before its last records."""

    def __init__(self):
        self.read: list[str] = []
        self.pages = {
            "old/s-0": (["o1"], None),
            "new/parent-0": (["p1", "p2"], "new/parent-1"),
            "new/parent-1": (["p3"], None),
            "new/child-0": (["c1"], "new/child-1"),
            "new/child-1": ([], "new/child-2"),
            "new/child-2": (["c2"], "new/child-3"),
            "new/open-0": ([], "new/open-1"),
            "new/open-1": (["x1"], "new/open-2"),
        }

    def list_streams(self, TableName, ExclusiveStartStreamArn=None):
        if ExclusiveStartStreamArn is None:
            return {
                "Streams": [{"StreamArn": "new", "StreamLabel": "2026-05-04T10:00:00"}],
                "LastEvaluatedStreamArn": "new",
            }
        return {"Streams": [{"StreamArn": "old", "StreamLabel": "2026-05-03T10:00:00"}]}

    def describe_stream(self, StreamArn, ExclusiveStartShardId=None):
        if StreamArn == "old":
            return {"StreamDescription": {"Shards": [{"ShardId": "s"}]}}
        if ExclusiveStartShardId is None:
            shards = [{"ShardId": "child", "ParentShardId": "parent"}, {"ShardId": "open", "ParentShardId": "gone"}]
            return {"StreamDescription": {"Shards": shards, "LastEvaluatedShardId": "open"}}
        return {"StreamDescription": {"Shards": [{"ShardId": "parent"}]}}

    def get_shard_iterator(self, StreamArn, ShardId, ShardIteratorType):
        assert ShardIteratorType == "TRIM_HORIZON"
        return {"ShardIterator": f"{StreamArn}/{ShardId}-0"}

    def get_records(self, ShardIterator, Limit):
        self.read.append(ShardIterator)
        numbers, following = self.pages.get(ShardIterator, ([], ShardIterator + "+"))
        records = [{"eventName": "INSERT", "dynamodb": {"SequenceNumber": n}} for n in numbers]
        return {"Records": records, **({"NextShardIterator": following} if following else {})}


def test_the_stream_is_read_oldest_stream_first_each_shard_from_its_start_a_child_after_its_parent():
    streams = Streams()
    read = [
        (shard, [record["dynamodb"]["SequenceNumber"] for record in records])
        for shard, records in stream_records.batches(streams)
    ]
    assert read == [
        ("s", ["o1"]),
        ("open", ["x1"]),  # its parent is no longer listed: read at once
        ("parent", ["p1", "p2"]),
        ("parent", ["p3"]),
        ("child", ["c1"]),  # after its parent's end, though listed first
        ("child", ["c2"]),  # past an empty page
    ]
    # A closed shard ends with its last page; an open one after EMPTY_READS_AT_END empty reads in a row.
    assert [it for it in streams.read if it.startswith("new/open")] == [
        "new/open-0",
        "new/open-1",
        *[f"new/open-2{'+' * n}" for n in range(stream_records.EMPTY_READS_AT_END)],
    ]
