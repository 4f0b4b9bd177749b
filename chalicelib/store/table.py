"""The DynamoDB client and the item codec. The client is made on first use, not at import: making it reads the
environment (tests and `make run` set the endpoint first) and loads DynamoDB's service model."""

import secrets
import threading
import time
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from .. import config
from ..domain.rendering import json_text  # noqa: F401  (callers in store/ and jobs/ import it from here)
from ..domain.retry import attempts, back_off
from . import keys

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()
_client = None
_lock = threading.Lock()


def client():
    global _client
    if _client is None:
        with _lock:
            if _client is None:
                _client = config.aws_client("dynamodb")
    return _client


def reset_client() -> None:
    """Forget the client (tests point the service at another endpoint or a new mock)."""
    global _client
    _client = None


def name() -> str:
    return config.table_name()


def to_attr(value: Any) -> dict:
    return _serializer.serialize(value)


def to_item(data: dict) -> dict:
    return {k: _serializer.serialize(v) for k, v in data.items() if v is not None}


def from_item(item: dict) -> dict:
    return {k: _deserializer.deserialize(v) for k, v in item.items()}


def values(**named: Any) -> dict:
    """ExpressionAttributeValues from keyword arguments: values(v=1) -> {':v': {'N': '1'}}."""
    return {f":{k}": _serializer.serialize(v) for k, v in named.items()}


def plain(value: Any) -> Any:
    """Stored numbers back to JSON-friendly ones: Decimal 2 -> int 2, Decimal 1.5 -> 1.5 (never 2.0)."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, set):
        return sorted(plain(v) for v in value)
    return value


def json_numbers(value: Any) -> Any:
    """Stored numbers as a JSON body parses them (int when whole, Decimal otherwise), so a stored document
    passes the same validation as a request: strict integer fields refuse Decimal('2')."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value
    if isinstance(value, dict):
        return {k: json_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_numbers(v) for v in value]
    return value


CONDITION_FAILED = "ConditionalCheckFailed"  # a transaction item's cancellation code when its condition failed


def new_revision() -> str:
    """A fresh revision for an item written with conditional writes (ETags of products)."""
    return secrets.token_hex(8)


def is_conditional_failure(error: Exception) -> bool:
    code = getattr(error, "response", {}).get("Error", {}).get("Code")
    return code == "ConditionalCheckFailedException"


TRANSACTION_CONFLICT = "TransactionConflict"  # a transaction item's code when another transaction held the item


def is_transaction_conflict(error: Exception) -> bool:
    """A single write refused because a transaction was changing the same item: try again."""
    return getattr(error, "response", {}).get("Error", {}).get("Code") == "TransactionConflictException"


def is_too_large(error: Exception) -> bool:
    """DynamoDB refused the write because the item would exceed 400 KB."""
    details = getattr(error, "response", {}).get("Error", {})
    return details.get("Code") == "ValidationException" and "size" in details.get("Message", "").lower()


def cancellation_codes(error: Exception) -> list[str]:
    """Per-item reasons of a cancelled transaction ('None', 'ConditionalCheckFailed', ...)."""
    response = getattr(error, "response", {})
    if response.get("Error", {}).get("Code") != "TransactionCanceledException":
        return []
    reasons = response.get("CancellationReasons")
    if reasons:
        return [r.get("Code", "None") for r in reasons]
    # Some endpoints only put the reasons in the message: "... [None, ConditionalCheckFailed]"
    message = response.get("Error", {}).get("Message", "")
    if "[" in message:
        return [part.strip() for part in message[message.rindex("[") + 1 : message.rindex("]")].split(",")]
    return []


def key_of(key: dict) -> tuple[str, str]:
    """(PK, SK) of a key as keys.py makes it: what cancellation_reasons answers by."""
    return key["PK"], key["SK"]


def item_key(operation: dict) -> tuple[str, str]:
    """(PK, SK) of the item a transaction operation (Put, Update, Delete, ConditionCheck) writes or checks."""
    ((kind, request),) = operation.items()
    key = request["Item"] if kind == "Put" else request["Key"]
    return key["PK"]["S"], key["SK"]["S"]


class WriteFailed(Exception):
    """A write refused for a reason its caller has no outcome for (a throttled or invalid item of a transaction,
    say): a fault, not a refusal, so it is raised rather than answered. `reasons`: the cancelled transaction's
    codes by item (cancellation_reasons), {} when it was not cancelled item by item."""

    def __init__(self, what: str, reasons: dict[tuple[str, str], str]):
        super().__init__(f"{what} failed: {sorted(set(reasons.values())) or 'not a cancelled transaction'}")
        self.reasons = reasons


def cancellation_reasons(error: Exception, operations: list[dict]) -> dict[tuple[str, str], str]:
    """The cancellation code of each of `operations` (the transaction's items, in its order) by its item's key
    (item_key), so callers ask about an item, not a position. {} when the error is not a cancelled transaction."""
    codes = cancellation_codes(error)
    return {item_key(operation): code for operation, code in zip(operations, codes)}


READ_TOGETHER_ATTEMPTS = 10


def read_together(item_keys: list[dict]) -> list[dict]:
    """The items of `item_keys` (at most 100) as one serialisable snapshot (TransactGetItems), {} for a missing one.
    A write in flight on one of them cancels the read: it is tried again after a short pause."""
    request = [{"Get": {"TableName": name(), "Key": to_item(key)}} for key in item_keys]
    for attempt in attempts(None, READ_TOGETHER_ATTEMPTS, 0):  # bounded by count: the store reads no clock
        try:
            responses = client().transact_get_items(TransactItems=request)["Responses"]
            return [from_item(found["Item"]) if "Item" in found else {} for found in responses]
        except ClientError as error:
            if not cancellation_codes(error) or attempt == READ_TOGETHER_ATTEMPTS - 1:
                raise
        back_off(attempt, time.sleep, first=0.005, cap=0.1)
    raise AssertionError("unreachable")


def first_in_index(index: str, partition: str) -> dict | None:
    """The first item of one index partition (one Query, Limit 1), or None when it is empty."""
    found = (
        client()
        .query(
            TableName=name(),
            IndexName=index,
            KeyConditionExpression=f"{index}PK = :pk",
            ExpressionAttributeValues=values(pk=partition),
            Limit=1,
        )
        .get("Items", [])
    )
    return from_item(found[0]) if found else None


def due_items(index: str, prefix: str, bound: str, limit: int) -> list[dict]:
    """Work queued in a sparse index (outbox events, image downloads, imports) whose sort key is below `bound`,
    earliest first: at most `limit` from each partition of the queue (keys.queue_partitions), so one account's
    backlog fills only its own shard's share of a read."""
    found: list[dict] = []
    for partition in keys.queue_partitions(prefix):
        request = {
            "TableName": name(),
            "IndexName": index,
            "KeyConditionExpression": f"{index}PK = :pk AND {index}SK < :bound",
            "ExpressionAttributeValues": values(pk=partition, bound=bound),
        }
        taken = 0
        while taken < limit:
            response = client().query(**request, Limit=limit - taken)
            items = response.get("Items", [])
            found += [from_item(item) for item in items]
            taken += len(items)
            if "LastEvaluatedKey" not in response:
                break
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    return sorted(found, key=lambda item: item[f"{index}SK"])


TTL_ATTRIBUTE = "expires_at"  # epoch seconds; DynamoDB deletes the item some time after


def table_definition(table_name: str) -> dict:
    """CreateTable arguments; the deploy template describes the same table."""
    attrs = ["PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK"]
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"} for a in attrs],
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": index,
                "KeySchema": [
                    {"AttributeName": f"{index}PK", "KeyType": "HASH"},
                    {"AttributeName": f"{index}SK", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
            for index in (keys.GSI1, keys.GSI2, keys.GSI3)
        ],
        # NEW_AND_OLD_IMAGES: a write's mark is a change only when the old image did not carry it (store/feed_marks.py).
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    }


def create_table(table_name: str | None = None) -> bool:
    """Create the table if missing; True when it was created."""
    ddb = client()
    table_name = table_name or name()
    try:
        ddb.create_table(**table_definition(table_name))
    except ddb.exceptions.ResourceInUseException:
        _enable_ttl(ddb, table_name)  # a table made before the change feed gets its TTL too
        _stream_with_old_images(ddb, table_name)
        return False
    ddb.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    _enable_ttl(ddb, table_name)
    return True


def _stream_with_old_images(ddb, table_name: str) -> None:
    """A table made before the feed came from the stream (its stream NEW_IMAGE): the stream is turned off and on
    again with both images (a stream's view type cannot change in place). Development tables only: in AWS the deploy
    template says the view type."""
    wanted = table_definition(table_name)["StreamSpecification"]
    current = ddb.describe_table(TableName=table_name)["Table"].get("StreamSpecification") or {}
    if current.get("StreamEnabled") and current.get("StreamViewType") == wanted["StreamViewType"]:
        return
    if current.get("StreamEnabled"):
        ddb.update_table(TableName=table_name, StreamSpecification={"StreamEnabled": False})
    ddb.update_table(TableName=table_name, StreamSpecification=wanted)


def _enable_ttl(ddb, table_name: str) -> None:
    """Idempotency records and change-feed entries carry their end of life in TTL_ATTRIBUTE (as the deploy
    template says)."""
    current = ddb.describe_time_to_live(TableName=table_name).get("TimeToLiveDescription", {})
    if current.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        return
    ddb.update_time_to_live(
        TableName=table_name, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE}
    )
