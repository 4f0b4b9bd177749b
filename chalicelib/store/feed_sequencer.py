"""The sequencer: the changes of one account's stream records (store/feed_marks.py) get their sequences
(docs/feed.md).

The feed queue hands one account's records to one numbering at a time, in the order the stream gave them. One
numbering is one TransactWriteItems per up to ~49 changes: the account's feed head moved from n to n+k (conditional
on it still being n), the entries n+1 … n+k, the webhook events they make (chained by previous_sequence), and for
each record a small item named by the record's id (conditional on its absence). A record handed over again, at any
age the stream or the queue keeps it, from any shard, in any order, finds its item and is skipped: every record is
numbered once, and the head stays a few numbers however large the table grows.
"""

import datetime as dt
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

from botocore.exceptions import ClientError

from ..domain.feed import RETENTION_DAYS, UNREADABLE_RESOURCE, UNREADABLE_TYPE, ChangeType, event_type_of
from ..domain.retry import back_off
from ..domain.timestamps import iso, parse_iso
from . import events, keys, table
from .feed import SELECTION, SELECTION_VERSION, Head, read_head
from .feed_marks import ENTRY_FIELDS, Marked, change_of

log = logging.getLogger("supplier-ordering.feed")

MAX_TRANSACTION_ITEMS = 100  # DynamoDB's bound: the head, then per record its item, per change its entry and event
MAX_ATTEMPTS = 8  # moves of the head by another numbering, or conflicts, before leaving the rest to a retry
# How long a record's item is kept, from the record's creation: longer than any hand-over can come (the stream keeps
# a record 24 hours, the feed queue a message 14 days), so a record is never numbered twice.
RECORD_KEPT_SECONDS = 16 * 86400


@dataclass(frozen=True)
class Numbered:
    count: int  # entries numbered now
    done: set[str] = field(default_factory=set)  # the records numbered now or before, by id
    head: Head | None = None  # the head as this numbering last saw or moved it


def _selected(account: str, head: Head) -> tuple[str, ...] | None:
    """The event types the webhook settings select (None: the default): kept on the head, or (settings put by an
    earlier release) read from them, and copied onto the head by the numbering's move."""
    return head.selection if head.selection_version is not None else _selection(account)


def _selection(account: str) -> tuple[str, ...] | None:
    """The event types the webhook settings item selects (None: the default)."""
    response = table.client().get_item(
        TableName=table.name(),
        Key=table.to_item(keys.webhooks_key(account)),
        ConsistentRead=True,
        ProjectionExpression="events",
    )
    selected = table.from_item(response["Item"]).get("events") if "Item" in response else None
    return tuple(sorted(selected)) if selected is not None else None


def entry_item(account: str, sequence: int, said: dict, unit: str | None = None) -> dict:
    item = {**keys.feed_entry_key(account, sequence), "sequence": sequence}
    item.update({name: said[name] for name in ("type", "resource", "id", "at")})
    item.update({name: said[name] for name in (*ENTRY_FIELDS, "reason") if name in said})
    if unit is not None:
        item["unit"] = unit
    # The table's TTL attribute, counted from the change (not from its numbering).
    item["expires_at"] = int(parse_iso(said["at"]).timestamp()) + RETENTION_DAYS * 86400
    return item


def _said(record: Marked) -> list[dict]:
    """The entries a record makes: its changes, or one that says it could not be read."""
    if record.unreadable is None:
        return record.changes
    at = iso(dt.datetime.fromtimestamp(record.created, dt.timezone.utc))
    return [
        {
            "type": UNREADABLE_TYPE,
            "resource": UNREADABLE_RESOURCE,
            "id": record.id,
            "at": at,
            "reason": record.unreadable,
        }
    ]


def _record_item(account: str, record: Marked, first_sequence: int) -> dict:
    item = {
        **keys.feed_record_key(account, record.id),
        "sequence": first_sequence,
        table.TTL_ATTRIBUTE: record.created + RECORD_KEPT_SECONDS,
    }
    return {
        "Put": {
            "TableName": table.name(),
            "Item": table.to_item(item),
            "ConditionExpression": "attribute_not_exists(PK)",
        }
    }


def _head_update(head: Head, account: str, moved: Head) -> dict:
    """The head's move, conditional on the sequence and on the selection the numbering used."""
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.feed_head_key(account)),
        # The per-shard positions of earlier releases go with the first move.
        "UpdateExpression": "SET #seq = :next, previous = :previous, last_event_sequence = :event "
        "REMOVE positions, clock",
        "ExpressionAttributeNames": {"#seq": "sequence"},
        "ExpressionAttributeValues": table.values(
            next=moved.sequence, previous=moved.previous, event=moved.last_event_sequence
        ),
    }
    if moved.last_event_at:
        update["UpdateExpression"] = update["UpdateExpression"].replace(" REMOVE", ", last_event_at = :at REMOVE")
        update["ExpressionAttributeValues"].update(table.values(at=moved.last_event_at))
    if moved.moved_at:
        update["UpdateExpression"] = update["UpdateExpression"].replace(" REMOVE", ", moved_at = :moved REMOVE")
        update["ExpressionAttributeValues"].update(table.values(moved=moved.moved_at))
    if head.exists:
        update["ConditionExpression"] = "#seq = :seen"
        update["ExpressionAttributeValues"].update(table.values(seen=head.sequence))
    else:
        update["ConditionExpression"] = "attribute_not_exists(#seq)"
    update["ExpressionAttributeNames"]["#version"] = SELECTION_VERSION
    if head.selection_version is not None:
        update["ConditionExpression"] += " AND #version = :version"
        update["ExpressionAttributeValues"].update(table.values(version=head.selection_version))
    else:  # the selection read from the settings, copied here unless a PUT kept one since
        update["ConditionExpression"] += " AND attribute_not_exists(#version)"
        update["UpdateExpression"] = update["UpdateExpression"].replace(
            " REMOVE", ", #events = :events, #version = :kept REMOVE"
        )
        update["ExpressionAttributeNames"]["#events"] = SELECTION
        update["ExpressionAttributeValues"].update(
            table.values(events=list(moved.selection) if moved.selection is not None else None, kept=0)
        )
    return {"Update": update}


def _event_type(change_type: str, selected, by: str | None = None) -> str | None:
    """The event an entry makes. A type this code does not know (written by a newer release during a deploy) is
    numbered as it is and makes no event: it never blocks its account's numbering."""
    try:
        known = ChangeType(change_type)
    except ValueError:
        if change_type != UNREADABLE_TYPE:
            log.warning("feed change type %r unknown to this release: numbered without an event", change_type)
        return None
    return event_type_of(known, selected, by)


def _plan(
    account: str, records: list[Marked], head: Head, selected, moved_at: str
) -> tuple[list[dict], Head, list[Marked]]:
    """The numbering transaction for as many whole records as one transaction holds, in their order; the head it
    moves to, and the records it takes (each record's changes in one transaction, never split)."""
    room = MAX_TRANSACTION_ITEMS - 1
    sequence, last_event = head.sequence, head.last_event_sequence
    # The events listing sorts by when an event was made: at its change, but no earlier than the account's latest
    # event (a clock may be behind another's), so newest first follows the sequence.
    made_at = parse_iso(head.last_event_at) if head.last_event_at else None
    written: list[dict] = []
    taken: list[Marked] = []
    for record in records:
        said = _said(record)
        kinds = [_event_type(change["type"], selected, change.get("by")) for change in said]
        cost = 1 + sum(1 + (kind is not None) for kind in kinds)
        if cost > room:
            break
        room -= cost
        taken.append(record)
        written.append(_record_item(account, record, sequence + 1))
        for change, event_type in zip(said, kinds):
            sequence += 1
            written.append(
                {
                    "Put": {
                        "TableName": table.name(),
                        "Item": table.to_item(entry_item(account, sequence, change, record.unit)),
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                }
            )
            if event_type is not None:
                changed = parse_iso(change["at"])
                made_at = changed if made_at is None else max(made_at, changed)
                made_at = made_at.replace(microsecond=made_at.microsecond // 1000 * 1000)
                written.append(events.feed_event(account, event_type, change_of(change), sequence, last_event, made_at))
                last_event = sequence
    event_at = iso(made_at) if last_event != head.last_event_sequence else head.last_event_at
    moved = Head(sequence, True, last_event, event_at, head.sequence, selected, head.selection_version or 0, moved_at)
    return [_head_update(head, account, moved)] + written, moved, taken


def number(
    account: str, records: list[Marked], sleep: Callable[[float], None] | None = None, now: dt.datetime | None = None
) -> Numbered:
    """Number the account's `records` (in the order the stream gave them) that were not numbered before: as many
    transactions as they need. `done` holds the longest run of them from the first that is numbered (now or before):
    the rest are left to a retry when the head kept moving under this numbering (another numbering of the account,
    a replay) or its items kept being held by other writes; another failure raises. `now` is kept on the head as
    when it moved (reads tell an entry removed by its TTL from one still being written by it)."""
    todo, seen = [], set()
    for record in records:  # a record twice in one hand-over: once
        if record.id not in seen:
            seen.add(record.id)
            todo.append(record)
    numbered, lost, done = 0, 0, set()
    # Half the capacity of a consistent read: a stale head only loses the transaction's condition on its sequence,
    # and then it is read again consistently.
    head = read_head(account, consistent=False)
    selected = _selected(account, head) if todo else None
    while todo:
        items, moved, taken = _plan(account, todo, head, selected, iso(now) if now is not None else "")
        if not taken:
            raise ValueError(f"a stream record of account {account} makes more changes than one transaction holds")
        try:
            table.client().transact_write_items(TransactItems=items, ClientRequestToken=uuid.uuid4().hex)
        except ClientError as error:
            reasons = table.cancellation_reasons(error, items)
            if not reasons:
                raise
            before = {r.id for r in taken if reasons.get(_record_key(account, r)) == table.CONDITION_FAILED}
            if before:  # numbered before (handed over again): skipped, the rest tried at once
                done |= before
                todo = [record for record in todo if record.id not in before]
                continue
            if set(reasons.values()) - {table.CONDITION_FAILED, table.TRANSACTION_CONFLICT, "None"}:
                raise table.WriteFailed("the feed's numbering", reasons)
            lost += 1  # another numbering moved the head, or a conflict: read the head again
            if lost >= MAX_ATTEMPTS:
                return Numbered(numbered, done, head)
            back_off(lost, sleep or time.sleep, first=0.002, cap=0.05)
            head = read_head(account)
            selected = _selected(account, head)
            continue
        numbered += moved.sequence - head.sequence
        done |= {record.id for record in taken}
        head, todo = moved, todo[len(taken) :]
    return Numbered(numbered, done, head)


def _record_key(account: str, record: Marked) -> tuple[str, str]:
    return table.key_of(keys.feed_record_key(account, record.id))
