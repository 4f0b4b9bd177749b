"""The change feed (decisions §13; why it holds is docs/feed.md): its pending entries, and reading it.

A service records the changes of a write in its unit of work (store/unit_of_work.py), which adds, to the same
TransactWriteItems, one pending entry per changed resource (pending_updates, built here): an item keyed by the
resource whose list `changes` gets the change appended. So a change and its pending entry commit together or not
at all, and no item is shared by writes of different resources (two writes of one resource are serialised by their
own conditions anyway, so the list holds that resource's changes in the order they committed). The sequencer
(store/feed_numbering.py) gives pending entries their sequences later, in one conditional move of the account's
feed head per batch.
"""

import datetime as dt
from dataclasses import dataclass

from ..domain.feed import Change
from ..domain.limits import FEED_PENDING_PER_RESOURCE
from ..domain.timestamps import iso
from . import keys, table
from .outcomes import Beyond, Expired

# A pending entry being numbered holds its item for a moment: a write of that resource tries again.
MAX_ATTEMPTS = 10

# What the unit of work adds to a transaction, for callers that size theirs (store/import_chunks.py): per change
# at most one pending-entry update (changes of one resource share it), of at most this many bytes.
HEAD_ITEMS = 0
ITEMS_PER_CHANGE = 1
BYTES_PER_CHANGE = 400


class FeedBusy(Exception):
    """The resource's pending entries stayed held, or hold FEED_PENDING_PER_RESOURCE changes that the sequencer has
    not numbered yet: nothing was written. A store exception (retries exhausted, store/outcomes.py); the service
    answers it as Busy in one place, service/contention.kept_losing_as_busy."""


class FeedBacklog(FeedBusy):
    """The resource holds FEED_PENDING_PER_RESOURCE changes not numbered yet: retrying before numbering runs
    cannot help."""


@dataclass(frozen=True)
class Head:
    sequence: int  # the last sequence used (0: no entry yet)
    exists: bool
    last_event_sequence: int = 0  # the sequence of the account's latest webhook event (0: none yet)
    last_event_at: str = ""  # when that event was made (iso): a later numbering's events are made no earlier


def head_key(account: str) -> dict:
    return keys.feed_head_key(account)


def head_of(item: dict | None) -> Head:
    if item is None:
        return Head(0, False)
    return Head(int(item["sequence"]), True, int(item.get("last_event_sequence", 0)), item.get("last_event_at", ""))


def read_head(account: str) -> Head:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.feed_head_key(account)), ConsistentRead=True
    )
    return head_of(table.from_item(response["Item"]) if "Item" in response else None)


def resource_key(change: Change) -> str:
    """The pending entry's sort key: one per resource (customer pricing is one per product and customer)."""
    key = f"{change.resource}#{change.id}"
    # (a customer's deposits are named by the customer's id already: their key stays as it was)
    return f"{key}#{change.customer_id}" if change.customer_id not in (None, change.id) else key


def pending_change(change: Change, now: dt.datetime) -> dict:
    """What the entry will say, but its sequence."""
    pending = {"type": str(change.type), "resource": str(change.resource), "id": change.id, "at": iso(now)}
    for name in ("status", "customer_id", "integration", "date"):
        if getattr(change, name) is not None:
            pending[name] = getattr(change, name)
    return pending


def _pending_update(account: str, key: str, changes: list[Change], now: dt.datetime) -> dict:
    """Append the changes to the resource's pending entry, refused (nothing written) when it would hold more
    than FEED_PENDING_PER_RESOURCE: the bound in bytes of an item nobody has numbered for a long time."""
    gsi = keys.feed_pending_gsi(account, key)
    return {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.feed_pending_key(account, key)),
            "UpdateExpression": "SET #changes = list_append(if_not_exists(#changes, :none), :new), "
            "GSI3PK = :queue, GSI3SK = :since",
            "ConditionExpression": "attribute_not_exists(#changes) OR size(#changes) <= :room",
            "ExpressionAttributeNames": {"#changes": "changes"},
            "ExpressionAttributeValues": table.values(
                none=[],
                new=[pending_change(change, now) for change in changes],
                queue=gsi["GSI3PK"],
                since=gsi["GSI3SK"],
                room=FEED_PENDING_PER_RESOURCE - len(changes),
            ),
        }
    }


def pending_updates(account: str, changes: list[Change], now: dt.datetime) -> list[dict]:
    """The transaction items that append `changes` to their resources' pending entries: one per resource, for the
    unit of work (store/unit_of_work.py) to write with the changes themselves."""
    by_resource: dict[str, list[Change]] = {}
    for change in changes:
        by_resource.setdefault(resource_key(change), []).append(change)
    return [_pending_update(account, key, grouped, now) for key, grouped in by_resource.items()]


# Reading the feed.


@dataclass(frozen=True)
class Entries:
    entries: list[dict]  # in sequence order, consecutive, starting at after + 1
    max_sequence: int


def _public(item: dict) -> dict:
    entry = {name: item[name] for name in ("sequence", "type", "resource", "id", "at")}
    entry["sequence"] = int(entry["sequence"])
    for name in ("status", "integration", "customer_id", "date"):
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


def read(
    account: str, after: int | None, limit: int, now: dt.datetime, newest: int | None = None
) -> Entries | Beyond | Expired:
    """Entries after `after` (None: the newest position), at most `limit`, up to the head `newest` (None: read it
    here; a reader that numbered first passes the head its numbering saw), with one consistent Query bounded by it,
    so nothing below max_sequence is still to come. A Query may see part of a numbering transaction; when the very
    next entry is missing it is read once more before it counts as gone."""
    if newest is None:
        newest = read_head(account).sequence
    if after is None or after == newest:
        return Entries([], newest)
    if after > newest:
        return Beyond(newest)
    entries, expired = _entries_from(account, after, newest, limit, now)
    if not entries and not expired:
        entries, expired = _entries_from(account, after, newest, limit, now)
    if not entries:
        return Expired()
    return Entries(entries, newest)
