"""The table's stream in tests: each commit is handed to the numbering right after it, as if the event source
mapping had just polled (docs/feed.md): make run's own feeders (chalicelib/localdev/stream.py), on DynamoDB Local
the streams API's, on moto its shard in memory."""

import boto3

from chalicelib.localdev.stream import MotoStreamFeeder, StreamFeeder
from chalicelib.store import table

_feeders: dict[tuple[int, str], object] = {}


def _numbering_only(event):
    from chalice.app import DynamoDBEvent

    from chalicelib.jobs import handlers

    return handlers.number_changes(DynamoDBEvent(event, None))


def feeder(handler=_numbering_only):
    client = table.client()
    key = (id(client), table.name())
    found = _feeders.get(key)
    if found is None or found.handler is not handler:
        endpoint = client.meta.endpoint_url
        if "amazonaws.com" in endpoint:
            found = MotoStreamFeeder(table.name(), client.meta.region_name, handler)
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
