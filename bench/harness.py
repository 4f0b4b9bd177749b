"""Measuring tools for the benchmark: DynamoDB request/capacity counting and Lambda-entry-point invocation.

Requests are counted with botocore's event hooks on the service's own client, and every call is made to
return its consumed capacity, so the numbers are what the deployed code would do, not an estimate.
"""

import json
import statistics
import threading
import time
from dataclasses import dataclass, field

from bench import capacity


@dataclass
class Meter:
    requests: int = 0
    capacity: float = 0.0
    operations: list = field(default_factory=list)
    reported: float = 0.0  # as DynamoDB Local said (differs from capacity when transactions are recounted)
    recounting: bool = False  # transactions recounted now (the recount reads each item before and after: slower)
    parts: dict = field(default_factory=dict)  # capacity by part, as `attach`'s part_of names them

    def reset(self):
        self.requests, self.capacity, self.operations, self.reported, self.parts = 0, 0.0, [], 0.0, {}


def attach(client, recount_transactions: bool = False, part_of=None) -> Meter:
    """Count every DynamoDB call of this client and sum the capacity it consumed. DynamoDB Local 3.x reports one
    item's capacity for a whole TransactWriteItems (awslabs/amazon-dynamodb-local-samples#31): with
    `recount_transactions`, a transaction counts what Local charges each of its items alone (bench/capacity.py).
    `part_of(operation, key)` names the part a single-item call or a recounted transaction's item counts to."""
    meter = Meter(recounting=recount_transactions)
    recount = capacity.Recount(client) if recount_transactions else None
    local = threading.local()  # the call under way on this thread (the client is shared)
    lock = threading.Lock()  # calls made from several threads at once (the standing-order job's turns) all count

    def ask_for_capacity(params, model, **_):
        if "ReturnConsumedCapacity" in model.input_shape.members:
            params.setdefault("ReturnConsumedCapacity", "TOTAL")
        local.key = params.get("Key") or {name: params["Item"][name] for name in ("PK", "SK") if "Item" in params}
        local.recounted = bool(recount and meter.recounting and model.name == "TransactWriteItems")
        if local.recounted:
            recount.before(params["TransactItems"])

    def before(model, **_):
        with lock:
            meter.requests += 1
            meter.operations.append(model.name)

    def after(parsed, model, **_):
        consumed = parsed.get("ConsumedCapacity")
        said = sum(
            float(entry.get("CapacityUnits", 0))
            for entry in (consumed if isinstance(consumed, list) else [consumed] if consumed else [])
        )
        items = recount.after() if getattr(local, "recounted", False) and consumed else None
        spent = sum(units for _, units in items) if items is not None else said
        with lock:
            meter.reported += said
            meter.capacity += spent
            if part_of is not None:
                for key, units in items if items is not None else [(getattr(local, "key", {}), said)]:
                    name = part_of(model.name, key)
                    meter.parts[name] = meter.parts.get(name, 0.0) + units

    events = client.meta.events
    events.register("provide-client-params.dynamodb.*", ask_for_capacity)
    events.register("before-call.dynamodb.*", before)
    events.register("after-call.dynamodb.*", after)
    return meter


class LambdaCaller:
    """Invokes the Chalice app the way API Gateway's proxy integration does."""

    def __init__(self, app, token: str):
        from chalice.local import LambdaContext, LambdaEventConverter, RouteMatcher

        self._app = app
        self._converter = LambdaEventConverter(RouteMatcher(list(app.routes)))
        self._context = LambdaContext
        self._token = token

    def event(self, method: str, path: str, body=None, token=None, raw=None, content_type=None) -> dict:
        """The API Gateway proxy event of a request: body is sent as JSON; raw (bytes) as it is, with content_type."""
        headers = {"authorization": f"token {token or self._token}", "content-type": content_type or "application/json"}
        raw = raw if raw is not None else json.dumps(body).encode() if body is not None else None
        return self._converter.create_lambda_event(method, path, headers, raw)

    def __call__(self, method: str, path: str, body=None, token=None, raw=None, content_type=None) -> tuple[int, dict]:
        event = self.event(method, path, body, token, raw, content_type)
        context = self._context("bench", 512, 30000)
        response = self._app(event, context)
        return response["statusCode"], response


def timings(action, runs: int) -> dict:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {
        "median_ms": round(statistics.median(samples), 3),
        "p95_ms": round(samples[max(0, int(len(samples) * 0.95) - 1)], 3),
    }


_local_sqs: list[str] = []  # the endpoint of moto's SQS served in this process (one per process)


def local_sqs() -> str:
    """make run's feed queue engine: moto's SQS served in this process (localdev/queue.py); its endpoint, which
    boto3 takes from AWS_ENDPOINT_URL_SQS for the feed queue's client (adapters/feed_queue.py)."""
    import os

    from chalicelib.adapters import feed_queue
    from chalicelib.localdev import queue

    if not _local_sqs:
        _local_sqs.append(queue.serve()[0])
    os.environ["AWS_ENDPOINT_URL_SQS"] = _local_sqs[0]
    feed_queue.reset_client()
    return _local_sqs[0]


def feed_queue(name: str) -> str:
    """A new feed queue and its dead letters (as make run and the deploy template make them) on the local SQS, set
    as FEED_QUEUE_URL: its URL."""
    import os

    from chalicelib.adapters import feed_queue as adapter
    from chalicelib.localdev import queue

    local_sqs()
    url = queue.create_queues(adapter.client(), name if name.endswith(".fifo") else f"{name}.fifo")
    os.environ["FEED_QUEUE_URL"] = url
    return url


def forward(event: dict) -> dict:
    """One stream batch (Lambda's event: {"Records": [...]}) handed to the forwarder's handler, as the table_feed
    mapping does."""
    from chalice.app import DynamoDBEvent

    from chalicelib.jobs import handlers

    return handlers.forward_changes(DynamoDBEvent(event, None))


def number(event: dict) -> dict:
    """One hand-over of the feed queue (Lambda's SQS event) to the numbering's handler, as feed_numbering does."""
    from chalice.app import SQSEvent

    from chalicelib.jobs import handlers

    return handlers.number_changes(SQSEvent(event, None))


def stream_feeder(handler):
    """make run's stream feeder (localdev/stream.StreamFeeder) on the store's table, handing each batch to
    `handler`. Its own DynamoDB client: what it asks of the table (DescribeTable) is not metered with the store's."""
    import boto3

    from chalicelib.localdev.stream import StreamFeeder
    from chalicelib.store import table

    client = table.client()
    endpoint, region = client.meta.endpoint_url, client.meta.region_name
    tables = boto3.client("dynamodb", endpoint_url=endpoint, region_name=region)
    streams = boto3.client("dynamodbstreams", endpoint_url=endpoint, region_name=region)
    return StreamFeeder(tables, streams, table.name(), handler)


class FeedPipeline:
    """The feed as make run runs it, step by step: the table's stream read by make run's feeder and handed to the
    forwarder (jobs/handlers.forward_changes), which sends each account's changes to the feed queue (moto's SQS in
    this process, localdev/queue.py), whose poller hands them to the numbering (jobs/handlers.number_changes).
    `poll_once` reads the stream once and hands over every message the queue then holds."""

    def __init__(self, queue_name: str = "bench-feed"):
        from chalicelib.adapters import feed_queue as adapter
        from chalicelib.localdev import queue

        self.queue_url = feed_queue(queue_name)
        self.feeder = stream_feeder(forward)
        self.poller = queue.QueuePoller(adapter.client(), self.queue_url, number, self.feeder.numbered)

    def poll_once(self) -> int:
        """The records the stream handed over (their changes forwarded and numbered)."""
        handed = self.feeder.poll_once()
        self.poller.drain()
        return handed


def numbering_feeder() -> FeedPipeline:
    """The stream's records forwarded and numbered as make run does it (FeedPipeline); `drain` empties it."""
    return FeedPipeline()


def drain(feeder) -> int:
    """Every record the stream holds handed over until none is left (the numbering's own writes' included)."""
    handed = 0
    while count := feeder.poll_once():
        handed += count
    return handed
