"""The table's stream read from its start through the streams API (ListStreams, DescribeStream, GetShardIterator at
TRIM_HORIZON, GetRecords): every record it still holds (24 hours), each shard's in order and a child shard after its
parent, as Lambda reads them, so one item's records come in the order they were written. The feed's replay reads it
here (service/feed_replay.py); make run's feeder (localdev/stream.py) takes its shard order and record shape from here.
"""

import datetime as dt
import os
from typing import Iterator

from botocore.config import Config

from . import table

BATCH = 1000  # GetRecords' most
# An open shard has no end: it is read until this many reads in a row bring nothing (the streams API may answer an
# empty page before the records that follow it; what is written after the replay is the forwarder's anyway).
EMPTY_READS_AT_END = 5


def client():
    """A streams client on the store's endpoint (DynamoDB Local serves both APIs on one; in AWS, the region's)."""
    import boto3

    return boto3.client(
        "dynamodbstreams",
        endpoint_url=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or None,
        region_name=table.client().meta.region_name,
        config=Config(retries={"mode": "standard", "max_attempts": 8}),  # GetRecords: 5 a second a shard
    )


def stream_arns(streams) -> list[str]:
    """The table's streams the API still lists (an older one is readable for 24 hours after it was replaced), oldest
    first."""
    found, start = [], None
    while True:
        page = streams.list_streams(TableName=table.name(), **({"ExclusiveStartStreamArn": start} if start else {}))
        found += page.get("Streams", [])
        start = page.get("LastEvaluatedStreamArn")
        if not start:
            return [stream["StreamArn"] for stream in sorted(found, key=lambda stream: stream.get("StreamLabel", ""))]


def shards(streams, stream_arn: str) -> list[dict]:
    """Every shard of the stream (DescribeStream pages through them 100 at a time)."""
    found, start = [], None
    while True:
        described = streams.describe_stream(
            StreamArn=stream_arn, **({"ExclusiveStartShardId": start} if start else {})
        )["StreamDescription"]
        found += described.get("Shards", [])
        start = described.get("LastEvaluatedShardId")
        if not start:
            return found


def ready(listed: list[dict], done: set[str]) -> list[str]:
    """The shards to read next: those not `done` whose parent is done or no longer listed (trimmed away). An item's
    records move to a child shard when its parent closes, so the child waits for the parent's end."""
    ids = {shard["ShardId"] for shard in listed}
    return [
        shard["ShardId"]
        for shard in listed
        if shard["ShardId"] not in done and (shard.get("ParentShardId") not in ids or shard["ParentShardId"] in done)
    ]


def lambda_record(record: dict, stream_arn: str) -> dict:
    """A GetRecords record as Lambda hands it over (the creation time in epoch seconds, the stream's ARN)."""
    stream = dict(record["dynamodb"])
    created = stream.get("ApproximateCreationDateTime")
    if isinstance(created, dt.datetime):
        stream["ApproximateCreationDateTime"] = created.timestamp()
    stream.setdefault("ApproximateCreationDateTime", 0)
    return {"eventSourceARN": stream_arn, **record, "dynamodb": stream}


def batches(streams=None) -> Iterator[tuple[str, list[dict]]]:
    """(shard id, its next records as Lambda hands them over) from the start of every stream of the table, oldest
    stream first, each shard to its end (an open one: EMPTY_READS_AT_END), a child after its parent."""
    streams = streams or client()
    for stream_arn in stream_arns(streams):
        listed, done = shards(streams, stream_arn), set()
        while True:
            waiting = ready(listed, done)
            if not waiting:
                break
            for shard_id in waiting:
                yield from _shard(streams, stream_arn, shard_id)
                done.add(shard_id)


def _shard(streams, stream_arn: str, shard_id: str) -> Iterator[tuple[str, list[dict]]]:
    iterator = streams.get_shard_iterator(StreamArn=stream_arn, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON")[
        "ShardIterator"
    ]
    empty = 0
    while iterator and empty < EMPTY_READS_AT_END:
        page = streams.get_records(ShardIterator=iterator, Limit=BATCH)
        records = page.get("Records", [])
        empty = 0 if records else empty + 1
        if records:
            yield shard_id, [lambda_record(record, stream_arn) for record in records]
        iterator = page.get("NextShardIterator")  # none: a closed shard read to its end
