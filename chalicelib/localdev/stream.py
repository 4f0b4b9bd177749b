"""`make run`: the table's stream drives the background work as the Lambda event source mapping does in AWS.

DynamoDB Local keeps a stream of the table (ListStreams, DescribeStream, GetShardIterator, GetRecords, with
transactional writes in it). `StreamFeeder` polls each open shard every POLL_SECONDS (Lambda polls a shard about
four times a second; an idle feeder every IDLE_POLL_SECONDS), hands a batch of at most BATCH records to the very
handlers the stream's two Lambdas run (jobs/handlers.number_changes, then on_table_change ringing make run's loops:
jobs/wakeups.py; as Chalice DynamoDBEvents), and reads the numbering's `batchItemFailures`: the batch is tried again
from its first failed record, at most RETRIES times (then logged and skipped, as the on-failure destination takes it
in AWS); the loops' schedules are the safety net. Each event names its shard (`shardId`, as the tumbling window of
the numbering's mapping gives it in AWS). After a batch the feeder keeps its place (`checkpoints`, a file beside
DynamoDB Local's data), so after a restart, a kill -9 included, it goes on from the last batch it finished: what was
written while it was down is numbered then, and a batch numbered but not yet kept is handed over again (the head's
positions skip what it numbered). A shard it has no place for (or whose place the stream no longer has, or with a
checkpoints file it cannot read) is read from its start; a child shard once its parent is read to its end, as Lambda
reads them, so one item's records are handed over in order. After a batch it reads again at once, as Lambda does:
the batch's numbering wrote the events that the next records bring.
"""

import datetime as dt
import functools
import json
import logging
import os
import threading
from pathlib import Path
from typing import Callable

from botocore.exceptions import ClientError, ParamValidationError

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
RETRIES = 5  # deploy_stream.py's retries of the stream's batches
SHARDS_EVERY = 20  # polls between two reads of the stream's shards
# A kept place the stream cannot start after (trimmed: DynamoDB Local keeps 24 h too; not a sequence number).
UNUSABLE_PLACE = {"TrimmedDataAccessException", "ValidationException", "invalid"}


def _as_lambda_record(record: dict, stream_arn: str) -> dict:
    """A GetRecords record as Lambda hands it over (the creation time in epoch seconds, the stream's ARN)."""
    stream = dict(record["dynamodb"])
    created = stream.get("ApproximateCreationDateTime")
    if isinstance(created, dt.datetime):
        stream["ApproximateCreationDateTime"] = created.timestamp()
    stream.setdefault("ApproximateCreationDateTime", 0)
    return {"eventSourceARN": stream_arn, **record, "dynamodb": stream}


class StreamFeeder:
    def __init__(
        self, tables, streams, table_name: str, handler: Callable | None = None, checkpoints: Path | None = None
    ):
        self.tables, self.client = tables, streams  # a dynamodb client and a dynamodbstreams client
        self.table_name = table_name
        self.handler = handler or _lambda_handler
        self.iterators: dict[str, str] = {}
        self.polls = 0
        self.stream_arn: str | None = None
        self.checkpoints = checkpoints  # None: kept in memory only
        self.kept: dict[str, str] = {}  # per shard: the last record of a finished batch
        self.closed: set[str] = set()  # shards read to their end
        self.listed: set[str] = set()  # the stream's shards when last described

    def _load(self) -> None:
        """The places kept for this stream. A file that cannot be read (written by another version, edited) is
        as none: every shard is read from its start and the head's positions skip what was numbered."""
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
        shards = self.client.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"]
        self.listed = {shard["ShardId"] for shard in shards}
        for shard in shards:
            shard_id, parent = shard["ShardId"], shard.get("ParentShardId")
            if shard_id in self.iterators or shard_id in self.closed:
                continue
            if parent in self.listed and parent not in self.closed:
                continue  # a child after its parent, as Lambda reads them: one item's records stay in order
            self.iterators[shard_id] = self._iterator(shard_id)

    def _iterator(self, shard_id: str) -> str:
        """After the shard's kept place, or from its start when it has none or the stream no longer has it."""
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
            if records:
                self.deliver([_as_lambda_record(record, self.stream_arn) for record in records], shard_id)
                self._keep(shard_id, records[-1]["dynamodb"]["SequenceNumber"])
                handed += len(records)
            if response.get("NextShardIterator"):
                self.iterators[shard_id] = response["NextShardIterator"]
            else:  # the shard closed and is read to its end: its children are opened at the next poll
                del self.iterators[shard_id]
                self.closed.add(shard_id)
                self.polls = 0
        return handed

    def deliver(self, records: list[dict], shard_id: str = "stream") -> None:
        """One batch, retried from its first failed record as the event source mapping does."""
        for attempt in range(RETRIES + 1):
            try:
                answer = self.handler({"Records": records, "shardId": shard_id}) or {}
                failed = {item["itemIdentifier"] for item in answer.get("batchItemFailures", [])}
            except Exception:  # noqa: BLE001 - the whole batch failed: retried whole
                log.exception("stream batch failed (attempt %s)", attempt + 1)
                failed = {records[0]["dynamodb"]["SequenceNumber"]}
            if not failed:
                return
            # An identifier of no record in the batch (empty, None) fails it whole, as Lambda takes it.
            first = next((i for i, record in enumerate(records) if record["dynamodb"]["SequenceNumber"] in failed), 0)
            records = records[first:]
        log.error(
            "stream batch given up after %s retries from record %s; the schedule takes its work",
            RETRIES,
            records[0]["dynamodb"]["SequenceNumber"],
        )

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
    poll stopped, its batches handed over like DynamoDB Local's."""

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
        self.read += len(records)
        handed = []
        for record in records:
            stream = dict(record["dynamodb"])
            created = stream["ApproximateCreationDateTime"]  # moto's naive UTC time
            if isinstance(created, dt.datetime) and created.tzinfo is None:
                stream["ApproximateCreationDateTime"] = created.replace(tzinfo=dt.timezone.utc)
            handed.append(_as_lambda_record({**record, "dynamodb": stream}, "moto"))
        self.deliver(handed, shard.id)
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


def _lambda_handler(event: dict, local=None):
    """The stream's two functions in AWS, one after the other: the numbering's answer says what to hand over
    again."""
    from chalice.app import DynamoDBEvent

    from ..jobs import handlers

    answer = handlers.number_changes(DynamoDBEvent(event, None))
    handlers.on_table_change(DynamoDBEvent(event, None), local=local)
    return answer
