"""The webhook outbox: an event item per feed entry that makes one, put by the sequencer (store/feed_sequencer.py).

Item: PK A#<account>#EVENT, SK <created iso>#<event id>. The event id starts with the creation time in
milliseconds, so the id alone finds the item (resend). The item is small and bounded: it holds no body, which is
built when the event is sent, from the resource as a GET shows it then (docs/jobs.md); events written before this
layout may still carry `body`, the text to send.

Sending state: `status` (PENDING, DELIVERED, FAILED), `attempts` (every try, resends included),
`attempt_log` (the latest attempts {at, status_code | error, duration_ms}), `last_status_code` /
`last_error`, `reason` (why it was given up), `next_attempt_at`, `resends` (accepted resend requests not yet
attempted: each makes its own attempt; an event written before the count carries the flag `resend`, one).
Pending events, and events with queued resends, carry GSI1PK = OUTBOX#PENDING#<shard of the account> and
GSI1SK = <next attempt iso>#<account>#<event id>: a sparse index of due work spread over partitions.
Events of a feed entry also carry, until their first attempt, GSI2PK = A#<account>#EFIRST and GSI2SK = their
`sequence` (keys.outbox_first): a due read that stops inside a backlog may hold a later sequence of an account
without an earlier one, so the dispatcher reads the account's first attempts from this index, in sequence order
(`first_attempts`). Events leave this module without their keys (rebuilt from `account`, `created_at`, `event_id`).

A dispatcher claims an event by moving `next_attempt_at` (and GSI1SK) to the end of a lease, conditional on the
values it read, so two dispatchers never send the same attempt; when a dispatcher dies its lease ends and the
next one sends it. The writes of the sending state are store/event_attempts.py's; an account's own state of
sending (its parked lane, its resend window) is in store/outbox_accounts.py.
"""

import datetime as dt
import secrets

from ..domain.event_policy import EventStatus
from ..domain.feed import Change, Resource
from ..domain.timestamps import iso
from . import keys, table

PENDING, DELIVERED, FAILED = EventStatus.PENDING, EventStatus.DELIVERED, EventStatus.FAILED
ID_TIME_DIGITS = 13  # milliseconds since 1970, zero-padded: the id sorts and finds its item


def _new_id(now: dt.datetime, sequence: int | None = None) -> str:
    # A feed event's id holds its sequence (8 hex digits, then 8 random): one millisecond's events list in order.
    tail = secrets.token_hex(8) if sequence is None else f"{sequence % 16**8:08x}{secrets.token_hex(4)}"
    return f"{int(now.timestamp() * 1000):0{ID_TIME_DIGITS}d}{tail}"


def _sort_key(event_id: str) -> str | None:
    """The SK of an event id; None when the text is not one of our ids (reads as missing)."""
    stamp = event_id[:ID_TIME_DIGITS]
    if (
        len(event_id) != ID_TIME_DIGITS + 16
        or not stamp.isdigit()
        or not all(c in "0123456789abcdef" for c in event_id[ID_TIME_DIGITS:])
    ):
        return None
    created = dt.datetime.fromtimestamp(int(stamp) / 1000, dt.timezone.utc)
    return f"{iso(created)}#{event_id}"


def new_event(account: str, event_type: str, data: dict | None, now: dt.datetime, sequence: int | None = None) -> dict:
    # The item keeps milliseconds only, so the id's time and the SK's time are the same instant.
    now = now.replace(microsecond=now.microsecond // 1000 * 1000)
    event_id = _new_id(now, sequence)
    created = iso(now)
    return {
        **keys.event_key(account, f"{created}#{event_id}"),
        "event_id": event_id,
        "account": account,
        "type": str(event_type),
        "delivery_id": data["id"] if data is not None else None,
        "status": PENDING.value,
        "attempts": 0,
        "created_at": created,
        "next_attempt_at": created,
        "GSI1PK": keys.outbox_pending(account),
        "GSI1SK": keys.outbox_due(created, account, event_id),
    }


_KEYS = ("PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK")


def event_of(item: dict) -> dict:
    """An event as it leaves the store: its attributes, without the table's keys."""
    return {name: value for name, value in item.items() if name not in _KEYS}


def feed_event(
    account: str, event_type: str, change: Change, sequence: int, previous_sequence: int, now: dt.datetime
) -> dict:
    """A TransactWriteItems element recording the event a feed entry makes (store/feed_sequencer.py puts it in the
    numbering's transaction): it names the entry's resource, its `sequence` and the account's previous event's."""
    about_delivery = change.resource in (Resource.DELIVERY, Resource.CLAIM)  # a claim's id starts with its delivery's
    delivery = {"id": int(change.id.split(":")[0])} if about_delivery else None
    item = new_event(account, event_type, delivery, now, sequence)
    item.update(
        sequence=sequence, previous_sequence=previous_sequence, resource=str(change.resource), resource_id=change.id
    )
    item.update(keys.outbox_first(account, sequence))
    item.update({name: getattr(change, name) for name in ("customer_id", "date") if getattr(change, name) is not None})
    return {"Put": {"TableName": table.name(), "Item": table.to_item(item)}}


def get(account: str, event_id: str) -> dict | None:
    sort_key = _sort_key(event_id)
    if sort_key is None:
        return None
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.event_key(account, sort_key)), ConsistentRead=True
    )
    return event_of(table.from_item(response["Item"])) if "Item" in response else None


def due(now: dt.datetime, limit: int) -> list[dict]:
    """Events waiting for an attempt (pending, or a queued resend) whose time has come, earliest first: at most
    `limit` from each queue shard. Parked accounts' events are postponed, so the due set holds fresh events,
    retries and resends."""
    return [event_of(item) for item in table.due_items(keys.GSI1, keys.OUTBOX_PENDING, keys.due_bound(iso(now)), limit)]


def queued_resends(event: dict) -> int:
    """Accepted resend requests of the event not yet attempted."""
    return int(event.get("resends") or 0) or (1 if event.get("resend") else 0)


def resends_as_read(event: dict) -> tuple[str, dict]:
    """A condition that the queued resends are still those of `event`."""
    if "resends" in event:
        return "resends = :seen_resends", {"seen_resends": event["resends"]}
    return "attribute_not_exists(resends)", {}


def first_attempts(account: str, limit: int) -> list[dict]:
    """The account's events not yet attempted, in sequence order: at most `limit`, the earliest (eventually
    consistent, as the due index)."""
    first = keys.outbox_first(account, 0)
    response = table.client().query(
        TableName=table.name(),
        IndexName=keys.GSI2,
        KeyConditionExpression="GSI2PK = :pk",
        ExpressionAttributeValues=table.values(pk=first["GSI2PK"]),
        Limit=limit,
    )
    return [event_of(table.from_item(item)) for item in response.get("Items", [])]


def is_due(event: dict, now: dt.datetime) -> bool:
    waiting = event.get("status") == PENDING or queued_resends(event) > 0
    return waiting and "next_attempt_at" in event and event["next_attempt_at"] <= iso(now)


def woken(record_name: str, image: dict) -> dict | None:
    """The event a stream record brings to send: a new pending event, or a resend just queued."""
    queued = keys.in_queue((image.get("GSI1PK") or {}).get("S"), keys.OUTBOX_PENDING)
    if queued and (record_name == "INSERT" or "resends" in image or "resend" in image):
        return event_of(table.from_item(image))
    return None
