"""The sequencer: pending entries (store/feed.py) get their sequences, in batches (docs/feed.md).

One numbering is one TransactWriteItems: the account's feed head moved from n to n+k (conditional on it still
being n), entries n+1 … n+k, the webhook events they make (chained by previous_sequence), and the changes they
came from removed from the front of their pending entries (writes appending behind them do not refuse it; an
entry left empty is deleted later, once it has stayed empty a while: `clear`). Two sequencers of one account at once are
harmless: the head's condition lets one win, the other reads again. A pending change is numbered once: the
transaction that numbers it removes it. The table stream (AWS), the background loop (`make run`) and every
reader of the feed (inline, before it reads) run it.
"""

import datetime as dt
import logging
import time
import uuid
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.feed import RETENTION_DAYS, Change, ChangeType, event_type_of
from ..domain.retry import back_off
from ..domain.timestamps import iso, parse_iso
from . import events, keys, table
from .feed import Head, head_of

log = logging.getLogger("supplier-ordering.feed")

MAX_TRANSACTION_ITEMS = 100  # DynamoDB's bound: the head, then per pending entry its removal, per change ≤ 2
PENDING_READ = 1000  # pending entries one numbering orders at most (the oldest first, by when they began)
READ_PAGES = 2  # Query pages (≤ 1 MB each) one read of the pending entries takes at most: its bound in bytes
PER_TRANSACTION = 50  # about the changes one numbering transaction takes: a numbering of k rounds reads k × this
MAX_ATTEMPTS = 8  # lost races (another sequencer, a write appending) before leaving the rest to the next run
CLEARED_PER_TRANSACTION = 25  # emptied pending entries one clearing deletes
# An entry a numbering empties is deleted by it when its newest change is older than this: a resource written
# that recently may be written again while the numbering is in flight, which a delete would refuse.
QUIET = dt.timedelta(seconds=1)


@dataclass(frozen=True)
class State:
    head: Head
    pending: list[dict]  # entries with changes to number, oldest first
    emptied: list[dict]  # entries a numbering emptied (kept: a write may append again; cleared when quiet)
    complete: bool = True  # the read reached the last pending entry


@dataclass(frozen=True)
class Numbered:
    count: int  # entries numbered
    done: bool  # nothing was left pending when it stopped (or only changes younger than `settled_before`)
    head: Head  # the head as this numbering last saw or moved it: every entry up to it is readable


def read_state(account: str, limit: int = PENDING_READ) -> State:
    """The feed head and at most `limit` pending entries in one consistent Query (they sort next to each other),
    of at most READ_PAGES pages: what a reader numbering inline reads is bounded in bytes too."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND SK BETWEEN :head AND :end",
        "ExpressionAttributeValues": table.values(
            pk=keys.account_pk(account), head=keys.FEED_HEAD_SK, end=keys.FEED_PENDING_END
        ),
        "ConsistentRead": True,
    }
    found: list[dict] = []
    complete, pages = False, 0
    while len(found) < limit + 1 and pages < READ_PAGES:
        pages += 1
        response = table.client().query(**request, Limit=limit + 1 - len(found))
        found += [table.from_item(item) for item in response.get("Items", [])]
        if "LastEvaluatedKey" not in response:
            complete = True
            break
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    head = head_of(found.pop(0) if found and found[0]["SK"] == keys.FEED_HEAD_SK else None)
    # Oldest first by the entry's first change.
    pending = sorted(
        (item for item in found if item.get("changes")), key=lambda item: (item["changes"][0]["at"], item["SK"])
    )
    return State(head, pending, [item for item in found if not item.get("changes")], complete)


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


def _change(pending: dict) -> Change:
    return Change(
        ChangeType(pending["type"]),
        pending["id"],
        pending.get("status"),
        pending.get("customer_id"),
        pending.get("integration"),
        pending.get("date"),
    )


def entry_item(account: str, sequence: int, pending: dict) -> dict:
    item = {**keys.feed_entry_key(account, sequence), "sequence": sequence}
    item.update({name: pending[name] for name in ("type", "resource", "id", "at")})
    item.update({name: pending[name] for name in ("status", "customer_id", "integration", "date") if name in pending})
    # The table's TTL attribute, counted from the change (not from its numbering).
    item["expires_at"] = int(parse_iso(pending["at"]).timestamp()) + RETENTION_DAYS * 86400
    return item


def _head_update(account: str, head: Head, count: int, last_event: int, last_event_at: str) -> dict:
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.feed_head_key(account)),
        "UpdateExpression": "SET #seq = :next, last_event_sequence = :event",
        "ExpressionAttributeNames": {"#seq": "sequence"},
        "ExpressionAttributeValues": table.values(next=head.sequence + count, event=last_event),
    }
    if last_event_at:
        update["UpdateExpression"] += ", last_event_at = :at"
        update["ExpressionAttributeValues"].update(table.values(at=last_event_at))
    if head.exists:
        update["ConditionExpression"] = "#seq = :seen"
        update["ExpressionAttributeValues"].update(table.values(seen=head.sequence))
    else:
        update["ConditionExpression"] = "attribute_not_exists(PK)"
    return {"Update": update}


def _removal(item: dict, taken: int, now: dt.datetime, quiet_before: str | None) -> dict:
    """Take the `taken` first changes of a pending entry. An entry emptied is deleted (conditional on holding
    exactly those: a write appending meanwhile refuses this numbering, which reads again), so it leaves the
    pending index and costs later reads nothing, unless its resource is busy: numbered before (`numbered_at`)
    with a change since `quiet_before`, or `quiet_before` is None (this numbering was refused once). Otherwise they
    are removed from the front (a write may be appending behind them: its changes stay, in order, and neither
    refuses the other); an entry so emptied stays, and `clear` deletes it once it stayed empty a while."""
    key = table.to_item({"PK": item["PK"], "SK": item["SK"]})
    names = {"#changes": "changes"}
    changes = item["changes"]
    busy = quiet_before is None or ("numbered_at" in item and changes[-1]["at"] >= quiet_before)
    if taken == len(changes) and not busy:
        return {
            "Delete": {
                "TableName": table.name(),
                "Key": key,
                "ConditionExpression": "size(#changes) = :n",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": table.values(n=taken),
            }
        }
    removed = ", ".join(f"#changes[{i}]" for i in range(taken))
    return {
        "Update": {
            "TableName": table.name(),
            "Key": key,
            "UpdateExpression": f"REMOVE {removed} SET numbered_at = :now",
            "ConditionExpression": "size(#changes) >= :n",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": table.values(n=taken, now=iso(now)),
        }
    }


def _event_type(change_type: str, selected) -> str | None:
    """The event an entry makes. A type this code does not know (written by a newer release during a deploy) is
    numbered as it is and makes no event: it never blocks its account's numbering."""
    try:
        known = ChangeType(change_type)
    except ValueError:
        log.warning("feed change type %r unknown to this release: numbered without an event", change_type)
        return None
    return event_type_of(known, selected)


def _plan(
    account: str, pending: list[dict], head: Head, selected, now: dt.datetime, quiet_before: str | None = None
) -> tuple[list[dict], Head, list[int]]:
    """The numbering transaction for as many pending changes as one transaction holds, oldest entries first and
    each entry's changes in their order; the head it moves to, and how many changes it takes of each entry."""
    room = MAX_TRANSACTION_ITEMS - 1
    sequence, last_event = head.sequence, head.last_event_sequence
    # The events listing sorts by when an event was made: a numbering's events are made no earlier than the
    # account's latest (another sequencer's clock may be ahead), so newest first follows the sequence.
    made_at = max(now, parse_iso(head.last_event_at)) if head.last_event_at else now
    made_at = made_at.replace(microsecond=made_at.microsecond // 1000 * 1000)
    written: list[dict] = []
    took: list[int] = []
    for item in pending:
        changes, taken, own = item.get("changes", []), 0, []
        if room < 2:  # its removal and at least one change
            break
        room -= 1
        for pending_change in changes:
            event_type = _event_type(pending_change["type"], selected)
            cost = 1 + (event_type is not None)
            if cost > room:
                break
            room -= cost
            sequence += 1
            taken += 1
            own.append(
                {
                    "Put": {
                        "TableName": table.name(),
                        "Item": table.to_item(entry_item(account, sequence, pending_change)),
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                }
            )
            if event_type is not None:
                own.append(
                    events.feed_event(account, event_type, _change(pending_change), sequence, last_event, made_at)
                )
                last_event = sequence
        if taken:
            written += [_removal(item, taken, now, quiet_before)] + own
            took.append(taken)
        if taken < len(changes):
            break
    count = sequence - head.sequence
    event_at = iso(made_at) if last_event != head.last_event_sequence else head.last_event_at
    moved = Head(sequence, True, last_event, event_at)
    return [_head_update(account, head, count, last_event, event_at)] + written, moved, took


def _left(pending: list[dict], took: list[int]) -> list[dict]:
    """The pending entries as a committed numbering left them (the first ones emptied or shortened)."""
    left = [{**item, "changes": item["changes"][taken:]} for item, taken in zip(pending, took)]
    return [item for item in left if item["changes"]] + pending[len(took) :]


def number(
    account: str,
    now: dt.datetime,
    rounds: int = 10,
    settled_before: dt.datetime | None = None,
    clear_before: dt.datetime | None = None,
    quiet: dt.timedelta = QUIET,
) -> Numbered:
    """Number the account's pending entries: at most `rounds` transactions (each up to ~49 changes), as many as
    one read of the pending entries holds before reading again (a backlog of thousands is read once per
    PENDING_READ entries, not once per transaction). `settled_before`: leave them (done) while every pending
    change is younger, to a reader numbering inline. `clear_before`: delete the entries emptied before then
    (`clear`). `quiet`: a resource numbered before and changed again within it is busy (`_removal`)."""
    numbered, lost, done_rounds, head = 0, 0, 0, None
    quiet_before: str | None = iso(now - quiet)
    while done_rounds < rounds:
        state = read_state(account, min(PENDING_READ, (rounds - done_rounds) * PER_TRANSACTION))
        head = state.head
        if clear_before is not None:
            clear([item for item in state.emptied if item.get("numbered_at", "") < iso(clear_before)])
            clear_before = None
        if not state.pending:  # (a read that stopped at its bound among emptied entries has not seen them all)
            return Numbered(numbered, state.complete, state.head)
        if settled_before is not None and state.pending[0]["changes"][0]["at"] > iso(settled_before):
            return Numbered(numbered, True, state.head)
        selected, pending, complete = _selection(account), state.pending, state.complete
        while pending and done_rounds < rounds:
            items, moved, took = _plan(account, pending, head, selected, now, quiet_before)
            done_rounds += 1
            try:
                table.client().transact_write_items(TransactItems=items, ClientRequestToken=uuid.uuid4().hex)
            except ClientError as error:
                if not table.cancellation_codes(error):
                    raise
                # Another sequencer moved the head, or a write appended to an entry we read: read again, and
                # from now on keep what we empty (a delete would be refused by the next append again).
                lost += 1
                quiet_before = None
                if lost >= MAX_ATTEMPTS:
                    return Numbered(numbered, False, head)
                back_off(lost, time.sleep, first=0.002, cap=0.05)
                break
            numbered += moved.sequence - head.sequence
            head = moved
            pending = _left(pending, took)
        else:
            if not pending and complete:
                return Numbered(numbered, True, head)
    return Numbered(numbered, False, head)  # a head read or committed, never one only planned


def clear(emptied: list[dict]) -> int:
    """Delete pending entries a numbering emptied, each only if still empty (a write that appended meanwhile
    keeps its entry): one transaction per CLEARED_PER_TRANSACTION, an entry refused dropped and the rest tried
    once more. How many were deleted."""
    cleared = 0
    for start in range(0, len(emptied), CLEARED_PER_TRANSACTION):
        chunk = emptied[start : start + CLEARED_PER_TRANSACTION]
        for _ in range(2):
            deletes = [
                {
                    "Delete": {
                        "TableName": table.name(),
                        "Key": table.to_item({"PK": item["PK"], "SK": item["SK"]}),
                        "ConditionExpression": "size(#changes) = :none",
                        "ExpressionAttributeNames": {"#changes": "changes"},
                        "ExpressionAttributeValues": table.values(none=0),
                    }
                }
                for item in chunk
            ]
            try:
                table.client().transact_write_items(TransactItems=deletes)
            except ClientError as error:
                if not table.cancellation_codes(error):
                    raise
                reasons = table.cancellation_reasons(error, deletes)
                chunk = [
                    item for item, delete in zip(chunk, deletes) if reasons.get(table.item_key(delete)) in ("None", "")
                ]
                if not chunk:
                    break
                continue
            cleared += len(chunk)
            break
    return cleared


def woken(record_name: str, image: dict) -> str | None:
    """The account a stream record of a pending entry asks to number (a write appended to it)."""
    if record_name not in ("INSERT", "MODIFY"):
        return None
    if not keys.in_queue((image.get("GSI3PK") or {}).get("S"), keys.FEED_PENDING) or not (
        image.get("changes") or {}
    ).get("L"):
        return None
    return keys.account_of_pk((image.get("PK") or {}).get("S", "")) or None
