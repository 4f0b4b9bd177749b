"""The change feed (decisions §13; why it holds is docs/feed.md): its head, and reading it.

A write marks the item of each resource it changes (store/feed_marks.py, in its unit of work); the table's stream
brings the marked records, through the feed queue of their account, to the numbering (store/feed_sequencer.py),
which gives them their sequences in one conditional move of the account's feed head per transaction. The head is
small and stays so: the last sequence, where the move before it ended, and the account's event chain.
"""

import datetime as dt
from dataclasses import dataclass

from ..domain.timestamps import parse_iso
from . import keys, table
from .operations import Operation
from .outcomes import Beyond, Expired


@dataclass(frozen=True)
class Head:
    sequence: int  # the last sequence used (0: no entry yet)
    exists: bool
    last_event_sequence: int = 0  # the sequence of the account's latest webhook event (0: none yet)
    last_event_at: str = ""  # when that event was made (iso): a later numbering's events are made no earlier
    # The sequence before the head's last move: entries up to it were written by transactions that had ended when
    # that move began (one numbering of an account at a time), so a reader that misses one of them knows it is gone.
    previous: int = 0
    # The webhook settings' selection of event types (None: the default), kept here by each PUT of them so that the
    # numbering reads one item; `selection_version` None: not kept here yet (settings put by an earlier release).
    selection: tuple[str, ...] | None = None
    selection_version: int | None = None
    # When the head last moved (iso; "" for a head moved before it was kept): long after it, an entry of that move a
    # read does not find was removed by its TTL, not still being written.
    moved_at: str = ""


def head_of(item: dict | None) -> Head:
    if item is None:
        return Head(0, False)
    kept = item.get(SELECTION_VERSION)
    selected = item.get(SELECTION)
    selection = {
        "selection": tuple(sorted(selected)) if selected is not None else None,
        "selection_version": int(kept) if kept is not None else None,
    }
    if "sequence" not in item:  # a selection put before the account's first change
        return Head(0, False, **selection)
    sequence = int(item["sequence"])
    return Head(
        sequence,
        True,
        int(item.get("last_event_sequence", 0)),
        item.get("last_event_at", ""),
        # A head moved before `previous` was kept: every earlier move is long over.
        int(item.get("previous", sequence)),
        **selection,
        moved_at=item.get("moved_at", ""),
    )


SELECTION, SELECTION_VERSION = "events", "events_version"  # on the head item


def selecting(account: str, selected: list[str] | None) -> Operation:
    """The head keeps the webhook settings' new selection (in their PUT's unit of work); the version moves, so a
    numbering that read the head before fails its condition and reads it again."""
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.feed_head_key(account)),
        "UpdateExpression": "SET #events = :events ADD #version :one",
        "ExpressionAttributeNames": {"#events": SELECTION, "#version": SELECTION_VERSION},
        "ExpressionAttributeValues": table.values(events=selected, one=1),
    }
    return Operation({"Update": update})


def read_head(account: str, consistent: bool = True) -> Head:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.feed_head_key(account)), ConsistentRead=consistent
    )
    return head_of(table.from_item(response["Item"]) if "Item" in response else None)


# Reading the feed.


@dataclass(frozen=True)
class Entries:
    entries: list[dict]  # in sequence order, consecutive, starting at after + 1
    max_sequence: int


PUBLIC_FIELDS = ("status", "integration", "customer_id", "date", "by", "reason", "unit")  # after sequence … at


def _public(item: dict) -> dict:
    entry = {name: item[name] for name in ("sequence", "type", "resource", "id", "at")}
    entry["sequence"] = int(entry["sequence"])
    for name in PUBLIC_FIELDS:
        if name in item:
            entry[name] = item[name]
    return entry


def _entries_from(account: str, after: int, newest: int, limit: int, now: dt.datetime) -> tuple[list[dict], bool]:
    """The unbroken run of entries after `after` (one consistent Query bounded by the head), and whether the
    first one is there but past its expiry."""
    response = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk AND SK BETWEEN :first AND :last",
        ExpressionAttributeValues=table.values(
            pk=keys.feed_pk(account), first=keys.padded_id(after + 1), last=keys.padded_id(newest)
        ),
        ConsistentRead=True,
        Limit=limit,
    )
    entries, expected, cutoff = [], after + 1, int(now.timestamp())
    for raw in response.get("Items", []):
        item = table.from_item(raw)
        if int(item["sequence"]) != expected:
            break  # a missing number: stop there, never skip it
        if int(item.get("expires_at", cutoff + 1)) <= cutoff:
            # TTL deletes late: an entry past `expires_at` counts as gone already, whether or not it was deleted.
            return entries, not entries
        entries.append(_public(item))
        expected += 1
    return entries, False


MOVE_SETTLED = dt.timedelta(minutes=1)  # far longer than a numbering transaction takes to be seen whole


def _settled(head: Head, now: dt.datetime) -> bool:
    """Whether the head's last move is long over, so every entry it wrote is readable unless its TTL removed it."""
    return bool(head.moved_at) and now - parse_iso(head.moved_at) > MOVE_SETTLED


def read(account: str, after: int | None, limit: int, now: dt.datetime) -> Entries | Beyond | Expired:
    """Entries after `after` (None: the newest position), at most `limit`, up to the head read here, with one
    consistent Query bounded by it. A Query may see part of the numbering transaction that moved the head last (its
    entries after `previous`): a missing one of those ends the page there, and `max_sequence` with it, so nothing
    below max_sequence is still to come; a missing one at or before `previous` is gone for good (410)."""
    head = read_head(account)
    newest = head.sequence
    if after is None or after == newest:
        return Entries([], newest)
    if after > newest:
        return Beyond(newest)
    entries, expired = _entries_from(account, after, newest, limit, now)
    if expired:
        return Expired()
    if not entries and (after + 1 <= head.previous or _settled(head, now)):
        return Expired()
    readable = after + len(entries)
    if readable < newest and len(entries) < limit:
        return Entries(entries, readable)  # the head's last move is still being written: the rest comes next read
    return Entries(entries, newest)
