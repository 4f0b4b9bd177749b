"""The change feed (decisions §13; why it holds is docs/feed.md): the unit of work every write goes through.

A write hands `commit` its own transaction items and the changes they make. `commit` adds, to the same
TransactWriteItems, the account's feed head moved from the sequence it read to the next ones (conditional on
it still being that sequence) and one entry item per change. So a change and its entry commit together or not
at all, and entry n+1 can only commit after entry n: the feed has no gaps and never fills in behind a reader.

When only the head moved (another write of the account committed first), the same items are sent again with
the new head, after a short random pause; the write's own conditions decide everything else. Other refusals
come back as the ClientError DynamoDB raised, with the cancellation reasons of the caller's items only, so the
caller reads them by the positions it knows.
"""
import datetime as dt
import random
import time
import uuid
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.errors import Busy
from ..domain.feed import RETENTION_DAYS, Change, event_type_of
from ..domain.limits import CONTENTION_SECONDS
from ..domain.timestamps import iso
from . import keys, table
from .outcomes import Beyond, Expired

# Lost races on the head, each followed by a short random pause (at most 50 ms, so a waiting write keeps its
# chances against new ones): after 5 s of contention (or that many attempts), Busy (409: nothing was written).
MAX_ATTEMPTS = 200
TRANSACTION_CONFLICT = "TransactionConflict"  # DynamoDB's code when transactions on one item collide

# What `commit` adds to a caller's transaction, for callers that size theirs (store/imports.py): the head, and for
# each change its entry and, when the webhook selection takes its type, its event (§13: at most one). The
# selection may change between a caller's sizing and the commit, so every change counts its event.
HEAD_ITEMS = 1
ITEMS_PER_CHANGE = 2
BYTES_PER_CHANGE = 1_000  # an entry and an event item, at most


class FeedBusy(Busy):
    """The account's feed head kept moving for about 5 s: so many writes at once that ours did not get in."""

    def __init__(self):
        super().__init__("the account is being changed by many requests at once; try again")


@dataclass(frozen=True)
class Head:
    sequence: int  # the last sequence used (0: no entry yet)
    exists: bool
    last_event_sequence: int = 0  # the sequence of the account's latest webhook event (0: none yet)
    events: tuple[str, ...] | None = None  # the event types the webhook settings select (None: the default)


def head_key(account: str) -> dict:
    """For callers that read the head in a BatchGetItem of their own (consistent), with `head_of`."""
    return keys.feed_head_key(account)


def head_of(item: dict | None) -> Head:
    if item is None:
        return Head(0, False)
    events = item.get("events")
    return Head(
        int(item["sequence"]),
        True,
        int(item.get("last_event_sequence", 0)),
        tuple(sorted(events)) if events is not None else None,
    )


def read_head(account: str) -> Head:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.feed_head_key(account)), ConsistentRead=True
    )
    return head_of(table.from_item(response["Item"]) if "Item" in response else None)


def _head_update(account: str, head: Head, count: int, extra_sets: dict) -> dict:
    sets = {"sequence": head.sequence + count, **extra_sets}
    names = {f"#h{i}": name for i, name in enumerate(sets)}
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.feed_head_key(account)),
        "UpdateExpression": "SET " + ", ".join(f"#h{i} = :h{i}" for i in range(len(sets))),
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": table.values(**{f"h{i}": value for i, value in enumerate(sets.values())}),
    }
    # A failed condition hands back the head as it is, so a retry needs no second read.
    update["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    if head.exists:
        update["ConditionExpression"] = "#seq = :seen"
        update["ExpressionAttributeNames"]["#seq"] = "sequence"
        update["ExpressionAttributeValues"].update(table.values(seen=head.sequence))
    else:
        update["ConditionExpression"] = "attribute_not_exists(PK)"
    return {"Update": update}


def entry_item(account: str, sequence: int, change: Change, now: dt.datetime) -> dict:
    item = {
        **keys.feed_entry_key(account, sequence),
        "sequence": sequence,
        "type": str(change.type),
        "resource": str(change.resource),
        "id": change.id,
        "at": iso(now),
        "expires_at": int(now.timestamp()) + RETENTION_DAYS * 86400,  # the table's TTL attribute
    }
    if change.status is not None:
        item["status"] = str(change.status)
    if change.customer_id is not None:
        item["customer_id"] = change.customer_id
    if change.integration is not None:
        item["integration"] = change.integration
    return item


def _entry_put(item: dict) -> dict:
    return {"Put": {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}}


def _events(account: str, head: Head, changes: list[Change], now: dt.datetime) -> tuple[list[dict], int]:
    """The webhook events the entries make under the selection on the head (at most one each), chained by
    previous_sequence; and the sequence of the last one (the head's last_event_sequence after the write)."""
    from . import events  # events reads deliveries, which write through this module

    outbox, last_event = [], head.last_event_sequence
    for sequence, change in enumerate(changes, head.sequence + 1):
        event_type = event_type_of(change.type, head.events)
        if event_type is not None:
            outbox.append(events.feed_event(account, event_type, change, sequence, last_event, now))
            last_event = sequence
    return outbox, last_event


def _only_head_moved(codes: list[str], operations: int) -> bool:
    """True when the caller's items would have gone through: the head (or a collision on it) stopped us."""
    own = codes[:operations]
    if table.CONDITION_FAILED in own:
        return False
    return any(code in (table.CONDITION_FAILED, TRANSACTION_CONFLICT) for code in codes[operations:])


def _head_in(error: ClientError, position: int) -> Head | None:
    """The head as the failed condition saw it (DynamoDB returns it with ALL_OLD); None: read it again."""
    reasons = error.response.get("CancellationReasons") or []
    if position >= len(reasons) or reasons[position].get("Code") != table.CONDITION_FAILED:
        return None
    item = reasons[position].get("Item")
    return head_of(table.from_item(item)) if item else None


def _trimmed(error: ClientError, codes: list[str], operations: int) -> ClientError:
    """The error with the cancellation reasons of the caller's items only."""
    error.response["CancellationReasons"] = [{"Code": code} for code in codes[:operations]]
    return error


def commit(
    account: str,
    operations: list[dict],
    changes: list[Change],
    now: dt.datetime,
    head: Head | None = None,
    head_sets: dict | None = None,
) -> int:
    """Run the caller's transaction items with one feed entry per change; the last sequence written.

    `head` when the caller already read it (consistently) with its own items; `head_sets`: further attributes the
    head takes (the webhook event selection). Raises the ClientError of a refusal of the caller's own items.
    """
    if not changes and not head_sets:
        if operations:
            table.client().transact_write_items(TransactItems=operations)
        return head.sequence if head is not None else 0
    give_up_at = time.monotonic() + CONTENTION_SECONDS
    for attempt in range(MAX_ATTEMPTS):
        if head is None:
            head = read_head(account)
        entries = [entry_item(account, head.sequence + i, change, now) for i, change in enumerate(changes, 1)]
        outbox, last_event = _events(account, head, changes, now)
        sets = {**(head_sets or {}), **({"last_event_sequence": last_event} if outbox else {})}
        items = operations + [_head_update(account, head, len(changes), sets)]
        items += [_entry_put(entry) for entry in entries] + outbox
        try:
            # A fresh token per attempt: botocore's own retries of this call are then idempotent (a commit whose
            # answer was lost is not made twice), while our next attempt, with another head, is a new request.
            table.client().transact_write_items(TransactItems=items, ClientRequestToken=uuid.uuid4().hex)
            return head.sequence + len(changes)
        except ClientError as error:
            codes = table.cancellation_codes(error)
            if not codes or not _only_head_moved(codes, len(operations)):
                if codes:
                    raise _trimmed(error, codes, len(operations))
                raise
            head = _head_in(error, len(operations))
        if time.monotonic() > give_up_at:
            break
        time.sleep(random.uniform(0, min(0.001 * 2**attempt, 0.05)))
    raise FeedBusy()


# Reading the feed.


@dataclass(frozen=True)
class Entries:
    entries: list[dict]  # in sequence order, consecutive, starting at after + 1
    max_sequence: int


def _public(item: dict) -> dict:
    entry = {name: item[name] for name in ("sequence", "type", "resource", "id", "at")}
    entry["sequence"] = int(entry["sequence"])
    for name in ("status", "integration", "customer_id"):
        if name in item:
            entry[name] = item[name]
    return entry


def read(account: str, after: int | None, limit: int, now: dt.datetime) -> Entries | Beyond | Expired:
    """Entries after `after` (None: the newest position), at most `limit`: one GetItem of the head, then one
    consistent Query bounded by it, so nothing below max_sequence can still be missing."""
    newest = read_head(account).sequence
    if after is None or after == newest:
        return Entries([], newest)
    if after > newest:
        return Beyond(newest)
    response = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk AND SK BETWEEN :first AND :last",
        ExpressionAttributeValues=table.values(
            pk=keys.feed_pk(account), first=keys.padded_id(after + 1), last=keys.padded_id(newest)
        ),
        ConsistentRead=True,
        Limit=limit,
    )
    entries = []
    expected = after + 1
    cutoff = int(now.timestamp())
    for raw in response.get("Items", []):
        item = table.from_item(raw)
        # TTL deletes late: an entry past `expires_at` counts as gone already, whether or not it was deleted.
        if int(item["sequence"]) != expected or int(item.get("expires_at", cutoff + 1)) <= cutoff:
            break
        entries.append(_public(item))
        expected += 1
    if not entries:
        return Expired()
    return Entries(entries, newest)
