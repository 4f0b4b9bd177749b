"""The table's stream and the feed queue in tests: each commit is forwarded and numbered right after it, as if the
event source mappings had just polled (docs/feed.md): make run's own feeders (chalicelib/localdev/stream.py), on
DynamoDB Local the streams API's, on moto its shard in memory, and make run's own queue poller
(chalicelib/localdev/queue.py) on the feed queue: moto's SQS, in memory under mock_aws, served on a local port beside
DynamoDB Local."""

import os

import boto3

from chalicelib.adapters import feed_queue
from chalicelib.localdev import queue as local_queue
from chalicelib.localdev.stream import MotoStreamFeeder, StreamFeeder
from chalicelib.store import table

_feeders: dict[tuple, object] = {}
_pollers: dict[tuple, local_queue.QueuePoller] = {}
_local_sqs: list[str] = []  # the endpoint of the SQS served beside DynamoDB Local (one per test process)


def _forward_only(event):
    from chalice.app import DynamoDBEvent

    from chalicelib.jobs import handlers

    return handlers.forward_changes(DynamoDBEvent(event, None))


def _number(event):
    from chalice.app import SQSEvent

    from chalicelib.jobs import handlers

    return handlers.number_changes(SQSEvent(event, None))


def _on_moto() -> bool:
    return "amazonaws.com" in table.client().meta.endpoint_url


def _key() -> tuple:
    client = table.client()
    return (id(getattr(client, "_real", client)), table.name())


def poller() -> local_queue.QueuePoller:
    """The feed queue of this test's table (made on first use), with make run's poller on it. Its URL and endpoint
    are put in the environment on every call: Chalice's test client runs each request with a copy of it."""
    key = _key()
    if _on_moto():
        os.environ.pop("AWS_ENDPOINT_URL_SQS", None)
    else:
        if not _local_sqs:
            _local_sqs.append(local_queue.serve()[0])
        os.environ["AWS_ENDPOINT_URL_SQS"] = _local_sqs[0]
    found = _pollers.get(key)
    if found is None:
        feed_queue.reset_client()
        sqs = feed_queue.client()
        found = local_queue.QueuePoller(sqs, local_queue.create_queues(sqs, f"{table.name()}.fifo"), _number)
        _pollers.clear()
        _pollers[key] = found
    os.environ["FEED_QUEUE_URL"] = found.queue_url
    return found


def feeder(handler=_forward_only):
    key = _key()
    found = _feeders.get(key)
    if found is None or found.handler is not handler:
        client = table.client()
        endpoint = client.meta.endpoint_url
        if "amazonaws.com" in endpoint:
            found = MotoStreamFeeder(table.name(), client.meta.region_name, handler)
        else:
            streams = boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name=client.meta.region_name)
            found = StreamFeeder(client, streams, table.name(), handler)
        _feeders.clear()
        _feeders[key] = found
    return found


def drain(handler=_forward_only, polls: int = 20) -> int:
    """Hand every record the stream holds to `handler` (the forwarder) and every message of the feed queue to the
    numbering, until neither has any left (the numbering's own writes included); how many records were handed."""
    handed, found = 0, feeder(handler)
    queue = poller()
    queue.numbered = found.numbered
    progress = found.progress
    found.polls = 0  # read the shards first: a test may have made the table a moment ago
    for _ in range(polls):
        before = progress.records_forwarded
        handed += found.poll_once()
        forwarded = progress.records_forwarded > before
        numbered = 0
        while forwarded or progress.waiting():  # the queue holds what was forwarded: numbered until none waits
            count = queue.poll_once()
            numbered += count
            if not count or not progress.waiting():
                break
        if not forwarded and not numbered:
            queue.drain()  # and whatever else the queue holds (sent by another feeder, a replay)
            return handed
    return handed


def lose_queue() -> None:
    """The feed queue and all it held gone, as make run's in-memory queue is after a kill -9."""
    found = _pollers.get(_key())
    if found is not None:
        found.sqs.delete_queue(QueueUrl=found.queue_url)
    _pollers.clear()


def forget() -> None:
    _feeders.clear()
    _pollers.clear()
    feed_queue.reset_client()
    os.environ.pop("FEED_QUEUE_URL", None)
