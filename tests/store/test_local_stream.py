"""`make run`'s stream feeder (localdev/stream.py) reads DynamoDB Local's table stream, hands each batch to the
stream Lambdas' handlers (the forwarder sends the changes to the feed queue, numbered by make run's queue poller),
reads a batch the forwarder could not send again from its first failed record, never past it, and keeps its place in
a checkpoints file only past records whose changes are numbered (the local queue is in memory), so a restarted
feeder goes on where the numbering had got to and numbers nothing twice. (tests/store/test_feed_processes.py kills it
with SIGKILL while writers write.)"""

import json
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from chalicelib.jobs.wakeups import Bells
from chalicelib.localdev import stream
from chalicelib.service import catalogue, clock
from chalicelib.store import feed, feed_sequencer, table
from tests import stream as test_stream

pytestmark = pytest.mark.pending_feed


@pytest.fixture
def local_table(request, monkeypatch):
    import uuid

    server = request.getfixturevalue("dynamodb_local_server")

    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.endpoint)
    monkeypatch.setenv("TABLE_NAME", f"stream-test-{uuid.uuid4().hex[:12]}")
    table.reset_client()
    table.create_table()
    yield
    table.client().delete_table(TableName=table.name())
    table.reset_client()


class Batches(list):
    """The sequence numbers of each batch a feeder handed over, in order."""

    def first(self) -> str:
        return self[0][0]

    def records(self) -> list[str]:
        return [number for batch in self for number in batch]


def feeder(checkpoints: Path | None = None, handler=None) -> tuple[stream.StreamFeeder, Batches]:
    """A feeder as make run starts it (both handlers, its loops' bells, the feed queue's poller telling it what is
    numbered), recording its batches."""
    built, batches = stream.feeder(Bells(), checkpoints), Batches()
    handle = handler or built.handler

    def recording(event):
        batches.append([record["dynamodb"]["SequenceNumber"] for record in event["Records"]])
        return handle(event)

    built.handler = recording
    test_stream.poller().numbered = built.numbered
    return built, batches


def write(category: str) -> None:
    catalogue.put_category("acme", category, {"name": category.title()})


def fed() -> list[tuple[int, str, str]]:
    read = feed.read("acme", 0, 100, clock.now())
    return [(entry["sequence"], entry["type"], entry["id"]) for entry in getattr(read, "entries", [])]


def created(*categories: str) -> list[tuple[int, str, str]]:
    return [(n, "category.created", category) for n, category in enumerate(categories, start=1)]


def drained(a_feeder: stream.StreamFeeder) -> int:
    """Poll, and number what the feed queue holds, until neither has anything (the numbering's own records come in
    the poll after it); records handed."""
    handed = 0
    for _ in range(10):
        count = a_feeder.poll_once()
        numbered = test_stream.poller().drain()
        if not count and not numbered:
            return handed
        handed += count
    raise AssertionError("the stream never ran dry")


def kept(a_feeder: stream.StreamFeeder, checkpoints: Path) -> dict:
    return json.loads(checkpoints.read_text())[a_feeder.stream_arn]


def test_a_write_is_numbered_by_the_feeder_which_keeps_its_place_in_the_checkpoints_file(local_table, tmp_path):
    checkpoints = tmp_path / "stream-checkpoints.json"
    first, batches = feeder(checkpoints)
    write("mine")
    drained(first)
    assert fed() == created("mine")
    kept = json.loads(checkpoints.read_text())
    assert kept == {first.stream_arn: {shard: batches[-1][-1] for shard in first.iterators}}
    assert len(first.iterators) == 1


def test_after_a_restart_the_feeder_goes_on_after_the_last_batch_it_finished(local_table, tmp_path):
    checkpoints = tmp_path / "stream-checkpoints.json"
    first, before = feeder(checkpoints)
    write("one")
    drained(first)
    write("two")  # while no feeder runs
    second, after = feeder(checkpoints)
    drained(second)
    assert int(after.first()) > int(before[-1][-1])  # nothing the first feeder finished is handed over again
    assert fed() == created("one", "two")


def test_a_batch_numbered_but_not_kept_when_the_feeder_died_is_handed_over_again_and_numbered_once(
    local_table, tmp_path
):
    checkpoints = tmp_path / "stream-checkpoints.json"
    first, before = feeder(checkpoints)
    write("one")
    drained(first)
    place_after_one, batches_after_one = checkpoints.read_text(), len(before)
    write("two")
    drained(first)
    checkpoints.write_text(place_after_one)  # as a kill -9 between numbering "two" and keeping its place leaves it
    second, after = feeder(checkpoints)
    drained(second)
    assert after.first() == before[batches_after_one][0]  # "two" again, and nothing before it
    assert fed() == created("one", "two")


@pytest.mark.parametrize("checkpoints_file", ["absent", "unreadable"])
def test_without_a_readable_checkpoints_file_the_feeder_reads_from_the_start_and_numbers_nothing_twice(
    local_table, tmp_path, checkpoints_file
):
    first, before = feeder()  # its place in memory only
    write("one")
    write("two")
    drained(first)
    checkpoints = tmp_path / "stream-checkpoints.json"
    if checkpoints_file == "unreadable":
        checkpoints.write_text('{"arn:aws:dynamodb:ddblocal:000000000000:table/x/stream/y": ')
    second, after = feeder(checkpoints)
    drained(second)
    assert after.records() == before.records()  # the whole stream again, from its first record
    assert fed() == created("one", "two")
    write("three")
    drained(second)
    assert fed() == created("one", "two", "three")


def test_a_batch_the_forwarder_keeps_failing_on_is_read_again_from_its_first_failed_record_never_passed(
    local_table, tmp_path
):
    checkpoints = tmp_path / "stream-checkpoints.json"
    failed: list[str] = []
    recovered = []

    def failing_on_the_second_record(event):
        """The forwarder, refused by the queue from the first batch's second record on, until it recovers."""
        numbers = [record["dynamodb"]["SequenceNumber"] for record in event["Records"]]
        failed[:] = failed or numbers[1:2]
        if recovered or failed[0] not in numbers:
            return stream._lambda_handler(event)
        sent = numbers.index(failed[0])
        stream._lambda_handler({**event, "Records": event["Records"][:sent]})
        return {"batchItemFailures": [{"itemIdentifier": number} for number in numbers[sent:]]}

    failing, batches = feeder(checkpoints, handler=failing_on_the_second_record)
    for name in ("one", "two", "three"):
        write(name)
    # A category's creation is two records: the category and the account's count of them (decisions §4), kept from
    # the first creation on (one record more).
    assert failing.poll_once() == 7
    first = batches[0]
    assert len(first) == 7
    assert batches[1:] == [first[1:]] * stream.RETRIES  # from the failed record on, the records after it too
    assert failing.poll_once() == 6 and batches[-1] == first[1:]  # the next poll reads it again: never skipped
    test_stream.poller().drain()  # "one" is numbered
    failing.poll_once()
    assert list(kept(failing, checkpoints).values()) == [first[0]]  # its place: after the first record, no further
    recovered.append(True)
    drained(failing)
    assert fed() == created("one", "two", "three")
    assert list(kept(failing, checkpoints).values()) == [batches[-1][-1]]


def test_the_place_kept_never_passes_a_record_whose_changes_are_not_numbered(local_table, tmp_path, monkeypatch):
    """make run's feed queue is in memory: a kill -9 loses what it held. A feeder that restarts from its kept place
    forwards those records again, and the numbering skips what it had numbered."""
    checkpoints = tmp_path / "stream-checkpoints.json"
    first, before = feeder(checkpoints)
    write("one")
    drained(first)
    place_after_one = kept(first, checkpoints)
    real = feed_sequencer.number
    monkeypatch.setattr(feed_sequencer, "number", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
    write("two")
    write("three")
    first.poll_once()  # forwarded; the numbering fails: the messages wait in the queue
    assert test_stream.poller().drain() == 1
    first.poll_once()
    assert kept(first, checkpoints) == place_after_one
    monkeypatch.setattr(feed_sequencer, "number", real)
    test_stream.lose_queue()  # the kill -9: the queue and what it held are gone
    second, after = feeder(checkpoints)
    drained(second)
    assert after.first() == before[-1][0]  # "two" and "three" forwarded again
    assert fed() == created("one", "two", "three")


class TwoShards:
    """A stream whose parent shard closed with two batches left in it, and the child shard after it (DynamoDB
    Local's table stream has one shard; DynamoDB's roll over every few hours)."""

    def __init__(self):
        self.opened: list[str] = []
        self.pages = {"parent-0": (["1", "2"], "parent-1"), "parent-1": (["3"], None), "child-0": (["4"], "child-1")}

    def describe_table(self, TableName):
        return {"Table": {"LatestStreamArn": "arn:stream"}}

    def describe_stream(self, StreamArn):
        shards = [{"ShardId": "child", "ParentShardId": "parent"}, {"ShardId": "parent"}]
        return {"StreamDescription": {"Shards": shards}}

    def get_shard_iterator(self, StreamArn, ShardId, ShardIteratorType, SequenceNumber=None):
        if ShardIteratorType == "AT_SEQUENCE_NUMBER":  # a batch to read again
            return {"ShardIterator": f"{ShardId}-0"}
        if SequenceNumber is not None:  # the places tests keep are all trimmed away
            raise ClientError({"Error": {"Code": "TrimmedDataAccessException"}}, "GetShardIterator")
        self.opened.append(ShardId)
        return {"ShardIterator": f"{ShardId}-0"}

    def get_records(self, ShardIterator, Limit):
        numbers, following = self.pages.get(ShardIterator, ([], ShardIterator))
        records = [{"eventName": "INSERT", "dynamodb": {"SequenceNumber": n}} for n in numbers]
        return {"Records": records, **({"NextShardIterator": following} if following else {})}


def feeder_of(streams: TwoShards, checkpoints: Path | None = None) -> tuple[stream.StreamFeeder, list[list[str]]]:
    """A feeder of the fake stream; the sequence numbers of each batch it handed over."""
    handed: list[list[str]] = []

    def handler(event):
        handed.append([record["dynamodb"]["SequenceNumber"] for record in event["Records"]])

    built = stream.StreamFeeder(streams, streams, "t", handler, checkpoints)
    built.forwarded = lambda batch: set()  # nothing of the fake stream goes to the feed queue
    return built, handed


def test_a_child_shard_is_read_only_once_its_parent_is_read_to_its_end():
    """One item's records move to the child shard when its parent closes: reading the child before the parent's
    last records would number that item's changes out of order."""
    streams = TwoShards()
    two, handed = feeder_of(streams)
    assert [two.poll_once() for _ in range(4)] == [2, 1, 1, 0]
    assert handed == [["1", "2"], ["3"], ["4"]]
    assert streams.opened == ["parent", "child"]  # the child opened after the parent's end, each once


def test_a_kept_place_the_stream_has_trimmed_away_is_read_from_the_shards_start(tmp_path):
    """make run stopped for longer than the stream keeps records: the feeder starts again at what is left."""
    checkpoints = tmp_path / "stream-checkpoints.json"
    checkpoints.write_text(json.dumps({"arn:stream": {"parent": "2"}}))
    two, handed = feeder_of(TwoShards(), checkpoints)
    assert two.poll_once() == 2
    assert handed == [["1", "2"]]
    assert json.loads(checkpoints.read_text()) == {"arn:stream": {"parent": "2"}}


def test_a_failure_naming_no_record_of_the_batch_retries_it_whole():
    """As Lambda takes an empty or null itemIdentifier (the feeder raised StopIteration and read the shard anew)."""
    streams = TwoShards()
    answers = []

    def naming_nothing(event):
        answers.append([record["dynamodb"]["SequenceNumber"] for record in event["Records"]])
        return {"batchItemFailures": [{"itemIdentifier": ""}]}

    built = stream.StreamFeeder(streams, streams, "t", naming_nothing)
    built.forwarded = lambda batch: set()
    built.poll_once()
    assert answers == [["1", "2"]] * (stream.RETRIES + 1)
    built.poll_once()  # and again at the next poll, from its first record: never passed
    assert answers == [["1", "2"]] * (stream.RETRIES + 1) * 2
