"""The sequencer: the changes the table's stream shows (store/feed_marks.py) get their sequences (docs/feed.md).

The stream hands over one shard's records at a time, in the shard's order. For one account, one numbering is one
TransactWriteItems per up to ~49 changes: the account's feed head moved from n to n+k (conditional on it still
being n) with the position of the last record it takes in that shard, the entries n+1 … n+k, and the webhook events
they make (chained by previous_sequence). A record at or before the head's position for its shard was numbered
already (the stream hands a batch over again after a failure): it is skipped, so every change is numbered once.
Two sequencers of one account at once (two shards) are harmless: the head's condition lets one win, the other
reads the head again.
"""

import logging
import time
import uuid
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.feed import RETENTION_DAYS, ChangeType, event_type_of
from ..domain.retry import back_off
from ..domain.timestamps import iso, parse_iso
from . import events, keys, table
from .feed import Head, read_head
from .feed_marks import change_of

log = logging.getLogger("supplier-ordering.feed")

MAX_TRANSACTION_ITEMS = 100  # DynamoDB's bound: the head, then per change its entry and at most one event
MAX_ATTEMPTS = 8  # lost races (another shard's sequencer of the account) before leaving the rest to a retry
# The numbering's event source hands a record over again until it is this old (its MaximumRecordAgeInSeconds:
# deploy_stream.py). A shard's position is kept while the account's own records are at most that much newer
# than its last one, and an hour more (record creation times are approximate), so a batch handed over again late
# is still numbered once.
REDELIVERED_WITHIN_SECONDS = 6 * 3600
POSITION_KEPT_SECONDS = REDELIVERED_WITHIN_SECONDS + 3600


@dataclass(frozen=True)
class Marked:
    """One stream record's changes for one account (the entries they make, but their sequences)."""

    sequence_number: str  # the record's, in its shard
    created: int  # the record's creation, epoch seconds
    changes: list[dict]


@dataclass(frozen=True)
class Numbered:
    count: int  # entries numbered
    done: bool  # every record was numbered (now or before)
    head: Head  # the head as this numbering last saw or moved it


def _selection(account: str) -> tuple[str, ...] | None:
    """The event types the webhook settings select (None: the default)."""
    response = table.client().get_item(
        TableName=table.name(),
        Key=table.to_item(keys.webhooks_key(account)),
        ConsistentRead=True,
        ProjectionExpression="events",
    )
    selected = table.from_item(response["Item"]).get("events") if "Item" in response else None
    return tuple(sorted(selected)) if selected is not None else None


def entry_item(account: str, sequence: int, said: dict) -> dict:
    item = {**keys.feed_entry_key(account, sequence), "sequence": sequence}
    item.update({name: said[name] for name in ("type", "resource", "id", "at")})
    item.update({name: said[name] for name in ("status", "customer_id", "integration", "date", "by") if name in said})
    # The table's TTL attribute, counted from the change (not from its numbering).
    item["expires_at"] = int(parse_iso(said["at"]).timestamp()) + RETENTION_DAYS * 86400
    return item


def _unnumbered(records: list[Marked], head: Head, shard: str) -> list[Marked]:
    position = head.positions.get(shard)
    if position is None:
        return records
    return [record for record in records if int(record.sequence_number) > int(position["seq"])]


def _head_update(head: Head, account: str, moved: Head) -> dict:
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.feed_head_key(account)),
        "UpdateExpression": "SET #seq = :next, last_event_sequence = :event, positions = :positions, clock = :clock",
        "ExpressionAttributeNames": {"#seq": "sequence"},
        "ExpressionAttributeValues": table.values(
            next=moved.sequence, event=moved.last_event_sequence, positions=moved.positions, clock=moved.clock
        ),
    }
    if moved.last_event_at:
        update["UpdateExpression"] += ", last_event_at = :at"
        update["ExpressionAttributeValues"].update(table.values(at=moved.last_event_at))
    if head.exists:
        update["ConditionExpression"] = "#seq = :seen"
        update["ExpressionAttributeValues"].update(table.values(seen=head.sequence))
    else:
        update["ConditionExpression"] = "attribute_not_exists(PK)"
    return {"Update": update}


def _event_type(change_type: str, selected, by: str | None = None) -> str | None:
    """The event an entry makes. A type this code does not know (written by a newer release during a deploy) is
    numbered as it is and makes no event: it never blocks its account's numbering."""
    try:
        known = ChangeType(change_type)
    except ValueError:
        log.warning("feed change type %r unknown to this release: numbered without an event", change_type)
        return None
    return event_type_of(known, selected, by)


def _plan(account: str, shard: str, records: list[Marked], head: Head, selected) -> tuple[list[dict], Head, int]:
    """The numbering transaction for as many whole records as one transaction holds, in their order; the head it
    moves to, and how many records it takes."""
    room = MAX_TRANSACTION_ITEMS - 1
    sequence, last_event = head.sequence, head.last_event_sequence
    # The events listing sorts by when an event was made: at its change, but no earlier than the account's latest
    # event (a clock may be behind another's), so newest first follows the sequence.
    made_at = parse_iso(head.last_event_at) if head.last_event_at else None
    written: list[dict] = []
    taken = 0
    for record in records:
        kinds = [_event_type(said["type"], selected, said.get("by")) for said in record.changes]
        cost = sum(1 + (kind is not None) for kind in kinds)
        if cost > room:
            break
        room -= cost
        taken += 1
        for said, event_type in zip(record.changes, kinds):
            sequence += 1
            written.append(
                {
                    "Put": {
                        "TableName": table.name(),
                        "Item": table.to_item(entry_item(account, sequence, said)),
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                }
            )
            if event_type is not None:
                changed = parse_iso(said["at"])
                made_at = changed if made_at is None else max(made_at, changed)
                made_at = made_at.replace(microsecond=made_at.microsecond // 1000 * 1000)
                written.append(events.feed_event(account, event_type, change_of(said), sequence, last_event, made_at))
                last_event = sequence
    if not taken:
        raise ValueError(f"a stream record of account {account} makes more changes than one transaction holds")
    last = records[taken - 1]
    clock = max(head.clock, max(record.created for record in records[:taken]))
    positions = {
        other: position for other, position in head.positions.items() if position["at"] >= clock - POSITION_KEPT_SECONDS
    }
    positions[shard] = {"seq": last.sequence_number, "at": last.created}
    event_at = iso(made_at) if last_event != head.last_event_sequence else head.last_event_at
    moved = Head(sequence, True, last_event, event_at, positions, clock)
    return [_head_update(head, account, moved)] + written, moved, taken


def number(account: str, shard: str, records: list[Marked]) -> Numbered:
    """Number the account's changes of `records` (one shard's, in its order) that the head has not numbered yet:
    as many transactions as they need. Not done when other sequencers of the account kept winning."""
    numbered, lost = 0, 0
    head = read_head(account)
    todo = _unnumbered(records, head, shard)
    selected = _selection(account) if any(record.changes for record in todo) else None
    while todo:
        items, moved, taken = _plan(account, shard, todo, head, selected)
        try:
            table.client().transact_write_items(TransactItems=items, ClientRequestToken=uuid.uuid4().hex)
        except ClientError as error:
            if not table.cancellation_codes(error):
                raise
            lost += 1  # another shard's sequencer moved the head: read it again
            if lost >= MAX_ATTEMPTS:
                return Numbered(numbered, False, head)
            back_off(lost, time.sleep, first=0.002, cap=0.05)
            head = read_head(account)
            todo = _unnumbered(todo, head, shard)
            continue
        numbered += moved.sequence - head.sequence
        head, todo = moved, todo[taken:]
    return Numbered(numbered, True, head)
