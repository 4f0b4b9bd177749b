"""`make run`: the table's stream drives the feed and the background work as the Lambda event source mappings do in
AWS.

DynamoDB Local keeps a stream of the table (ListStreams, DescribeStream, GetShardIterator, GetRecords, with
transactional writes in it). `StreamFeeder` polls each open shard every POLL_SECONDS (Lambda polls a shard about
four times a second; an idle feeder every IDLE_POLL_SECONDS), and hands a batch of at most BATCH records to the very
handlers the stream's two Lambdas run (jobs/handlers.forward_changes, which sends each account's changes to the feed
queue, then on_table_change ringing make run's loops: jobs/wakeups.py; as Chalice DynamoDBEvents). A batch whose
records the queue refused is read again from the first of them at the next poll, however often: a record is never
skipped. The feed queue is in memory (localdev/queue.py), so the feeder keeps its place (`checkpoints`, a file beside
DynamoDB Local's data) only past records whose changes are numbered (`numbered`, told by the queue's poller): after a
restart, a kill -9 included, it forwards again what was not numbered yet, and the numbering skips any record it
numbered already. A shard it has no place for (or whose place the stream no longer has, or with a checkpoints file it
cannot read) is read from its start; a child shard once its parent is read to its end, as Lambda reads them, so one
item's records are handed over in order. After a batch it reads again at once, as Lambda does: the batch's numbering
wrote the events that the next records bring.
"""

import functools
import json
import logging
import os
import threading
from pathlib import Path
from typing import Callable

from botocore.exceptions import ClientError, ParamValidationError

from ..store import stream_records
from ..store.stream_records import lambda_record as _as_lambda_record

log = logging.getLogger("supplier-ordering.stream")

POLL_SECONDS = 0.25
# With nothing in the stream for QUIET_AFTER_SECONDS, every IDLE_POLL_SECONDS: DynamoDB Local's GetRecords costs
# more CPU than any other read of an idle make run (issue 34), and the first write after a pause is still
# numbered and its event sent well within a second.
IDLE_POLL_SECONDS, QUIET_AFTER_SECONDS = 0.5, 10.0
# GetRecords' most: a backlog (an import's records) is caught up in one batch, whose numbering takes its accounts
# in turns, as AWS's ten concurrent batches a shard (ParallelizationFactor) of 100 do; with 100 here an order
# behind 6,000 imported rows waited up to 6 s for its event (bench/README.md, issue 34).
BATCH = 1000
RETRIES = 2  # immediate tries of a failed batch again before the next poll reads it again
SHARDS_EVERY = 20  # polls between two reads of the stream's shards
# A kept place the stream cannot start after (trimmed: DynamoDB Local keeps 24 h too; not a sequence number).
UNUSABLE_PLACE = {"TrimmedDataAccessException", "ValidationException", "invalid"}


class Progress:
    """Per shard, the batches handed over whose records' changes are not all numbered yet (their sequence numbers):
    the place a feeder may keep is the last record of the batches before the first that still waits."""

    def __init__(self):
        self._lock = threading.Lock()
        self._waiting: dict[str, list[tuple[str, set[str]]]] = {}
        self._done: set[str] = set()  # numbered before the feeder counted them as handed over (a race of threads)
        self.records_forwarded = 0  # so far (a test's drain asks whether a poll forwarded any)

    def handed(self, shard_id: str, last: str, forwarded: set[str]) -> None:
        with self._lock:
            self.records_forwarded += len(forwarded)
            early = forwarded & self._done
            self._done -= early
            self._waiting.setdefault(shard_id, []).append((last, forwarded - early))

    def numbered(self, sequence_numbers: set[str]) -> None:
        with self._lock:
            left = set(sequence_numbers)
            for batches in self._waiting.values():
                for _, waiting in batches:
                    left -= waiting & left
                    waiting -= sequence_numbers
            self._done |= left

    def waiting(self) -> bool:
        """Whether a record forwarded is not numbered yet."""
        with self._lock:
            return any(waiting for batches in self._waiting.values() for _, waiting in batches)

    def keepable(self, shard_id: str) -> str | None:
        """The place to keep for the shard now (None: no further than before)."""
        with self._lock:
            batches, last = self._waiting.get(shard_id, []), None
            while batches and not batches[0][1]:
                last = batches.pop(0)[0]
            return last


class StreamFeeder:
    def __init__(
        self, tables, streams, table_name: str, handler: Callable | None = None, checkpoints: Path | None = None
    ):
        self.tables, self.client = tables, streams  # a dynamodb client and a dynamodbstreams client
        self.table_name = table_name
        self.handler = handler or _lambda_handler
        self.forwarded = _forwarded  # what of a batch the handler sends to the feed queue (its sequence numbers)
        self.iterators: dict[str, str] = {}
        self.polls = 0
        self.stream_arn: str | None = None
        self.checkpoints = checkpoints  # None: kept in memory only
        self.kept: dict[str, str] = {}  # per shard: the last record of a finished batch
        self.closed: set[str] = set()  # shards read to their end
        self.listed: set[str] = set()  # the stream's shards when last described
        self.progress = Progress()

    def _load(self) -> None:
        """The places kept for this stream. A file that cannot be read (written by another version, edited) is
        as none: every shard is read from its start and the numbering's record items skip what was numbered."""
        if self.checkpoints is None or not self.checkpoints.exists():
            return
        try:
            kept = json.loads(self.checkpoints.read_text()).get(self.stream_arn, {})
            if not all(isinstance(s, str) and isinstance(n, str) for s, n in kept.items()):
                raise ValueError("not a sequence number per shard")
        except (ValueError, AttributeError) as error:
            log.warning(
                "stream checkpoints %s unreadable (%s): reading every shard from its start", self.checkpoints, error
            )
            kept = {}
        self.kept = kept

    def _keep(self, shard_id: str, sequence_number: str) -> None:
        # Only the stream's current shards: a shard trimmed away is never read again.
        self.kept = {shard: kept for shard, kept in self.kept.items() if shard in self.listed}
        self.kept[shard_id] = sequence_number
        if self.checkpoints is None:
            return
        temporary = self.checkpoints.with_name(f"{self.checkpoints.name}.tmp")
        temporary.write_text(json.dumps({self.stream_arn: self.kept}))
        os.replace(temporary, self.checkpoints)  # never half a file, whenever the process dies

    def _streams(self) -> None:
        if self.stream_arn is None:
            self.stream_arn = self.tables.describe_table(TableName=self.table_name)["Table"]["LatestStreamArn"]
            self._load()
        shards = stream_records.shards(self.client, self.stream_arn)
        self.listed = {shard["ShardId"] for shard in shards}
        for shard_id in stream_records.ready(shards, self.closed):  # a child after its parent, as Lambda reads them
            if shard_id not in self.iterators:
                self.iterators[shard_id] = self._iterator(shard_id)

    def _iterator(self, shard_id: str, at: str | None = None) -> str:
        """At a record (`at`), after the shard's kept place, or from its start when it has none or the stream no
        longer has it."""
        if at is not None:
            return self.client.get_shard_iterator(
                StreamArn=self.stream_arn, ShardId=shard_id, ShardIteratorType="AT_SEQUENCE_NUMBER", SequenceNumber=at
            )["ShardIterator"]
        if shard_id in self.kept:
            try:
                return self.client.get_shard_iterator(
                    StreamArn=self.stream_arn,
                    ShardId=shard_id,
                    ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                    SequenceNumber=self.kept[shard_id],
                )["ShardIterator"]
            except (ClientError, ParamValidationError) as error:
                code = error.response["Error"]["Code"] if isinstance(error, ClientError) else "invalid"
                if code not in UNUSABLE_PLACE:
                    raise
                log.warning(
                    "stream place %s of shard %s unusable (%s): reading it from its start",
                    self.kept[shard_id],
                    shard_id,
                    code,
                )
        return self.client.get_shard_iterator(
            StreamArn=self.stream_arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]

    def poll_once(self) -> int:
        """Read every open shard once and hand what it holds to the handler; the records handed."""
        if self.polls % SHARDS_EVERY == 0:
            self._streams()
        self.polls += 1
        handed = 0
        for shard_id, iterator in list(self.iterators.items()):
            response = self.client.get_records(ShardIterator=iterator, Limit=BATCH)
            records = response.get("Records", [])
            unsent = None
            if records:
                batch = [_as_lambda_record(record, self.stream_arn) for record in records]
                unsent = self.hand_over(batch, shard_id)
                handed += len(records)
            self.keep(shard_id)
            if records and unsent is not None:  # read again from there at the next poll: never skipped
                self.iterators[shard_id] = self._iterator(shard_id, at=unsent)
                continue
            if response.get("NextShardIterator"):
                self.iterators[shard_id] = response["NextShardIterator"]
            else:  # the shard closed and is read to its end: its children are opened at the next poll
                del self.iterators[shard_id]
                self.closed.add(shard_id)
                self.polls = 0
        return handed

    def hand_over(self, batch: list[dict], shard_id: str) -> str | None:
        """Deliver the batch and count what it forwarded as waiting for its numbering: the sequence number of the
        first record not forwarded, or None."""
        unsent = self.deliver(batch, shard_id)
        numbers = [record["dynamodb"]["SequenceNumber"] for record in batch]
        sent = batch[: numbers.index(unsent)] if unsent is not None else batch
        if sent:
            self.progress.handed(shard_id, sent[-1]["dynamodb"]["SequenceNumber"], self.forwarded(sent))
        return unsent

    def numbered(self, bodies: list[str]) -> None:
        """The feed queue's poller deleted these messages: their records' changes are numbered."""
        self.progress.numbered(_records_in(bodies))

    def keep(self, shard_id: str) -> None:
        place = self.progress.keepable(shard_id)
        if place is not None:
            self._keep(shard_id, place)

    def deliver(self, records: list[dict], shard_id: str = "stream") -> str | None:
        """One batch, tried again from its first failed record as the event source mapping does: None when every
        record was forwarded, else the sequence number of the first that was not."""
        for attempt in range(RETRIES + 1):
            try:
                answer = self.handler({"Records": records, "shardId": shard_id}) or {}
                failed = {item["itemIdentifier"] for item in answer.get("batchItemFailures", [])}
            except Exception:  # noqa: BLE001 - the whole batch failed: tried again whole
                log.exception("stream batch failed (attempt %s)", attempt + 1)
                failed = {records[0]["dynamodb"]["SequenceNumber"]}
            if not failed:
                return None
            # An identifier of no record in the batch (empty, None) fails it whole, as Lambda takes it.
            first = next((i for i, record in enumerate(records) if record["dynamodb"]["SequenceNumber"] in failed), 0)
            records = records[first:]
        log.error("stream batch not forwarded from record %s: read again", records[0]["dynamodb"]["SequenceNumber"])
        return records[0]["dynamodb"]["SequenceNumber"]

    def run_forever(self, stop_event: threading.Event) -> None:
        import time

        from ..service import clock

        last_records = time.monotonic()  # a pace, not a moment of the service's clock
        while not stop_event.is_set():
            try:
                if self.poll_once():
                    last_records = time.monotonic()
                    continue  # the records of what this batch wrote (events the numbering made) come next
            except Exception:  # noqa: BLE001 - the loop must survive a DynamoDB hiccup
                log.exception("reading the table's stream failed; trying again")
                self.stream_arn, self.iterators, self.polls = None, {}, 0
            quiet = time.monotonic() - last_records > QUIET_AFTER_SECONDS
            clock.current().wait(IDLE_POLL_SECONDS if quiet else POLL_SECONDS, stop_event)


class MotoStreamFeeder(StreamFeeder):
    """moto's stream, read in this process's memory: moto's streams API does not answer (under mock_aws, nor in
    its server, which make run starts in this process when Java is missing). One shard, read from where the last
    poll stopped, its batches handed over like DynamoDB Local's, each record stamped with the one clock's time when
    it is read (right after its write in tests, which move that clock)."""

    def __init__(self, table_name: str, region: str, handler: Callable):
        super().__init__(None, None, table_name, handler)
        self.region, self.read = region, 0

    def poll_once(self) -> int:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        shard = dynamodb_backends[DEFAULT_ACCOUNT_ID][self.region].get_table(self.table_name).stream_shard
        records = [record.to_json() for record in shard.items[self.read : self.read + BATCH]]
        if not records:
            return 0
        from ..service import clock

        handed = []
        for record in records:
            # moto stamps its records with the machine's time; a write happened at the one clock's (a test's).
            stream = {**record["dynamodb"], "ApproximateCreationDateTime": clock.now()}
            handed.append(_as_lambda_record({**record, "dynamodb": stream}, "moto"))
        unsent = self.hand_over(handed, shard.id)
        numbers = [record["dynamodb"]["SequenceNumber"] for record in handed]
        self.read += numbers.index(unsent) if unsent is not None else len(records)
        return len(records)


def feeder(bells=None, checkpoints: Path | None = None, in_memory: bool = False) -> StreamFeeder:
    """The feeder of this process's table (store/table.py), on the endpoint the store uses; its batches ring
    `bells` (jobs/wakeups.Bells, make run's loops) for the events, images and imports they show; it keeps its
    place in `checkpoints` (None: in memory). `in_memory`: the table is moto's, in this process."""
    import boto3

    from ..store import table

    tables = table.client()
    handler = functools.partial(_lambda_handler, local=bells)
    if in_memory:
        return MotoStreamFeeder(table.name(), tables.meta.region_name, handler)
    streams = boto3.client(
        "dynamodbstreams", endpoint_url=tables.meta.endpoint_url, region_name=tables.meta.region_name
    )
    return StreamFeeder(tables, streams, table.name(), handler, checkpoints=checkpoints)


def _forwarded(batch: list[dict]) -> set[str]:
    """The sequence numbers of the batch's records that make changes (what the forwarder sends to the queue)."""
    from chalice.app import DynamoDBEvent

    from ..service.feed_forwarding import records_marked

    return {number for number, _ in records_marked(DynamoDBEvent({"Records": batch}, None))}


def _records_in(bodies: list[str]) -> set[str]:
    """The stream sequence numbers of the records in feed queue messages (as the forwarder wrote them)."""
    found = set()
    for body in bodies:
        try:
            found |= {record["seq"] for record in json.loads(body)["records"] if record.get("seq")}
        except (ValueError, KeyError, TypeError):
            continue
    return found


def _lambda_handler(event: dict, local=None):
    """The stream's two functions in AWS, one after the other: the forwarder's answer says what to hand over again.
    With make run's bells (`local`) the feed queue's poller is woken for what was forwarded."""
    from chalice.app import DynamoDBEvent

    from ..jobs import handlers

    answer = handlers.forward_changes(DynamoDBEvent(event, None))
    if local is not None:
        local.feed.ring()
    handlers.on_table_change(DynamoDBEvent(event, None), local=local)
    return answer
