"""The table's stream in tests: each commit is handed to the numbering right after it, as if the event source
mapping had just polled (docs/feed.md). On DynamoDB Local the feeder is make run's own (chalicelib/localdev/
stream.py); moto's streams API does not answer under mock_aws, so there its shard's records are read in memory and
handed over the same way, one shard's batch with its `shardId`."""

import datetime as dt

import boto3

from chalicelib.localdev.stream import StreamFeeder, _as_lambda_record
from chalicelib.store import table

_feeders: dict[tuple[int, str], object] = {}


def _numbering_only(event):
    from chalice.app import DynamoDBEvent

    from chalicelib.jobs import handlers

    return handlers.number_changes(DynamoDBEvent(event, None))


class MotoFeeder:
    """moto's shard read from where the last drain stopped (a refused transaction leaves no record:
    tests/moto_transactions.py)."""

    def __init__(self, handler):
        self.handler, self.read = handler, 0

    def poll_once(self) -> int:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        shard = (
            dynamodb_backends[DEFAULT_ACCOUNT_ID][table.client().meta.region_name].get_table(table.name()).stream_shard
        )
        records = [record.to_json() for record in shard.items[self.read :]]
        if not records:
            return 0
        self.read += len(records)
        lambda_records = []
        for record in records:
            record = {**record, "dynamodb": dict(record["dynamodb"])}
            created = record["dynamodb"]["ApproximateCreationDateTime"]
            if isinstance(created, dt.datetime) and created.tzinfo is None:
                record["dynamodb"]["ApproximateCreationDateTime"] = created.replace(tzinfo=dt.timezone.utc)
            lambda_records.append(_as_lambda_record(record, "moto-stream"))
        StreamFeeder.deliver(self, lambda_records, shard.id)
        return len(records)


def feeder(handler=_numbering_only):
    client = table.client()
    key = (id(client), table.name())
    found = _feeders.get(key)
    if found is None or found.handler is not handler:
        endpoint = client.meta.endpoint_url
        if "amazonaws.com" in endpoint:
            found = MotoFeeder(handler)
        else:
            streams = boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name=client.meta.region_name)
            found = StreamFeeder(client, streams, table.name(), handler)
        _feeders.clear()
        _feeders[key] = found
    return found


def drain(handler=_numbering_only, polls: int = 20) -> int:
    """Hand every record the stream holds to `handler` (the numbering), until none is left (the numbering's own
    writes included); how many were handed."""
    handed, found = 0, feeder(handler)
    for _ in range(polls):
        found.polls = 0  # read the shards on every poll: a test may have made the table a moment ago
        count = found.poll_once()
        handed += count
        if not count:
            break
    return handed


def forget() -> None:
    _feeders.clear()
