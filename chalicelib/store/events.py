"""The webhook outbox: an event item written in the same transaction as the change that causes it.

Item: PK A#<account>#EVENT, SK <created iso>#<event id>; `body` is the JSON text that will be sent
({"type", "idempotency_key", "data"}), kept as text so numbers go out exactly as stored. Pending events carry
GSI1PK = OUTBOX#PENDING and GSI1SK = <next attempt iso>#<account>#<event id> (a sparse index of due work).
"""
import datetime as dt
import uuid

from . import keys, table

PENDING = "PENDING"
DELIVERED = "DELIVERED"
FAILED = "FAILED"


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
        "GSI1PK": keys.OUTBOX_PENDING,
        "GSI1SK": f"{created}#{account}#{event_id}",
    }


def outbox_operation(account: str, event_type: str, data: dict, now: dt.datetime) -> dict:
    """A TransactWriteItems element that records the event; put it in the transaction of the change."""
    return {"Put": {"TableName": table.name(), "Item": table.to_item(new_event(account, event_type, data, now))}}
