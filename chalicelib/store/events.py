"""The webhook outbox: an event item written in the same transaction as the change that causes it.

Item: PK A#<account>#EVENT, SK <created iso>#<event id>; `body` is the JSON text that will be sent
({"type", "idempotency_key", "data"}), kept as text so numbers go out exactly as stored. Pending events carry
GSI1PK = OUTBOX#PENDING and GSI1SK = <next attempt iso>#<account>#<event id> (a sparse index of due work).
"""
import datetime as dt
import uuid

from . import keys, table
from .paging import Page, query_page

PENDING = "PENDING"
DELIVERED = "DELIVERED"
FAILED = "FAILED"


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


iso = _iso  # the same timestamps for the dispatcher and the image job


def new_event(account: str, event_type: str, data: dict, now: dt.datetime) -> dict:
    event_id = uuid.uuid4().hex
    created = _iso(now)
    body = table.json_text({"type": event_type, "idempotency_key": event_id, "data": data})
    return {
        **keys.event_key(account, f"{created}#{event_id}"),
        "event_id": event_id,
        "account": account,
        "type": event_type,
        "body": body,
        "status": PENDING,
        "attempts": 0,
        "created_at": created,
        "next_attempt_at": created,
        "delivery_id": data.get("id") if isinstance(data, dict) else None,  # absent when None (to_item)
        "GSI1PK": keys.OUTBOX_PENDING,
        "GSI1SK": f"{created}#{account}#{event_id}",
    }


def outbox_operation(account: str, event_type: str, data: dict, now: dt.datetime) -> dict:
    """A TransactWriteItems element that records the event; put it in the transaction of the change.

    `data` is the delivery exactly as the supplier API shows it (bundle id_override already in place).
    """
    return {"Put": {"TableName": table.name(), "Item": table.to_item(new_event(account, event_type, data, now))}}


# Sending (chalicelib/jobs/webhooks.py) adds to the item: `attempt_log` (the latest attempts, {at, status_code |
# error, duration_ms}), `first_attempt_at`, `finished_at`; `attempts` counts every attempt. A dispatcher claims
# an event by moving `next_attempt_at` (and GSI1SK) to the end of a lease, conditional on the values it read, so
# two dispatchers never send the same attempt; when a dispatcher dies its lease ends and the next one sends it.


def due(now: dt.datetime, limit: int) -> list[dict]:
    """Pending events whose next attempt is due, earliest first (one Query of the sparse index)."""
    return table.due_items(keys.GSI1, keys.OUTBOX_PENDING, keys.due_bound(iso(now)), limit)


def _key(event: dict) -> dict:
    return table.to_item({"PK": event["PK"], "SK": event["SK"]})


def claim(event: dict, lease_until: dt.datetime) -> dict | None:
    """Take the attempt for ourselves until lease_until; None when another dispatcher got it first.

    Returns the event as stored after the claim (fresh, whatever the index showed).
    """
    lease = iso(lease_until)
    try:
        response = table.client().update_item(
            TableName=table.name(),
            Key=_key(event),
            UpdateExpression="SET next_attempt_at = :lease, GSI1SK = :sk",
            ConditionExpression="#status = :pending AND next_attempt_at = :seen AND attempts = :attempts",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues=table.values(
                lease=lease,
                sk=keys.outbox_due(lease, event["account"], event["event_id"]),
                pending=PENDING,
                seen=event["next_attempt_at"],
                attempts=event["attempts"],
            ),
            ReturnValues="ALL_NEW",
        )
    except table.client().exceptions.ConditionalCheckFailedException:
        return None
    return table.from_item(response["Attributes"])


def record_attempt(
    claimed: dict, log: list[dict], first_attempt_at: str, status: str, next_attempt: dt.datetime | None, now: dt.datetime
) -> bool:
    """Store the outcome of the attempt we claimed: still PENDING until next_attempt, or DELIVERED/FAILED.

    Conditional on our claim still holding; False when the lease ran out and another dispatcher took over.
    """
    named = {
        "status": status,
        "n": claimed["attempts"] + 1,
        "log": log,
        "first": first_attempt_at,
        "pending": PENDING,
        "lease": claimed["next_attempt_at"],
        "seen": claimed["attempts"],
    }
    update = "SET #status = :status, attempts = :n, attempt_log = :log, first_attempt_at = :first"
    if status == PENDING:
        next_iso = iso(next_attempt)
        update += ", next_attempt_at = :next, GSI1SK = :sk"
        named.update(next=next_iso, sk=keys.outbox_due(next_iso, claimed["account"], claimed["event_id"]))
    else:
        update += ", finished_at = :finished REMOVE next_attempt_at, GSI1PK, GSI1SK"
        named["finished"] = iso(now)
    try:
        table.client().update_item(
            TableName=table.name(),
            Key=_key(claimed),
            UpdateExpression=update,
            ConditionExpression="#status = :pending AND next_attempt_at = :lease AND attempts = :seen",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues=table.values(**named),
        )
    except table.client().exceptions.ConditionalCheckFailedException:
        return False
    return True


_LISTED = ("PK", "SK", "event_id", "#type", "#status", "created_at", "attempt_log", "next_attempt_at", "delivery_id")


def list_page(account: str, limit: int, cursor: str | None) -> Page:
    """The account's events, newest first, without their bodies."""
    return query_page(
        account,
        "webhook-deliveries",
        limit,
        cursor,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.event_key(account, "")["PK"]),
        ExpressionAttributeNames={"#type": "type", "#status": "status"},
        ProjectionExpression=", ".join(_LISTED),
        ScanIndexForward=False,
    )
