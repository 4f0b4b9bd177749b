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

    def reset(self):
        self.requests, self.capacity, self.operations, self.reported = 0, 0.0, [], 0.0


def attach(client, recount_transactions: bool = False) -> Meter:
    """Count every DynamoDB call of this client and sum the capacity it consumed. DynamoDB Local 3.x reports one
    item's capacity for a whole TransactWriteItems (awslabs/amazon-dynamodb-local-samples#31): with
    `recount_transactions`, a transaction counts what Local charges each of its items alone (bench/capacity.py)."""
    meter = Meter()
    recount = capacity.Recount(client) if recount_transactions else None
    lock = threading.Lock()  # calls made from several threads at once (the standing-order job's turns) all count

    def ask_for_capacity(params, model, **_):
        if "ReturnConsumedCapacity" in model.input_shape.members:
            params.setdefault("ReturnConsumedCapacity", "TOTAL")
        if recount and model.name == "TransactWriteItems":
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
        with lock:
            meter.reported += said
            meter.capacity += recount.after() if recount and model.name == "TransactWriteItems" and consumed else said

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


def numbering_feeder():
    """make run's stream feeder on the store's table, handing each batch to the numbering's handler alone (the
    Lambda the numbering's event source mapping runs in AWS): no events sent, no loops rung."""
    import boto3
    from chalice.app import DynamoDBEvent

    from chalicelib.jobs import handlers
    from chalicelib.localdev.stream import StreamFeeder
    from chalicelib.store import table

    client = table.client()
    streams = boto3.client(
        "dynamodbstreams", endpoint_url=client.meta.endpoint_url, region_name=client.meta.region_name
    )
    return StreamFeeder(
        client, streams, table.name(), lambda event: handlers.number_changes(DynamoDBEvent(event, None))
    )


def drain(feeder) -> int:
    """Every record the stream holds handed over until none is left (the numbering's own writes' included)."""
    handed = 0
    while count := feeder.poll_once():
        handed += count
    return handed
