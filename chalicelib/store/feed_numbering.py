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
import time
import uuid
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.feed import RETENTION_DAYS, Change, ChangeType, event_type_of
from ..domain.retry import back_off
from ..domain.timestamps import iso, parse_iso
from . import events, keys, table
from .feed import Head, head_of

MAX_TRANSACTION_ITEMS = 100  # DynamoDB's bound: the head, then per pending entry its removal, per change ≤ 2
PENDING_READ = 1000  # pending entries one numbering orders at most (the oldest first, by when they began)
MAX_ATTEMPTS = 8  # lost races (another sequencer, a write appending) before leaving the rest to the next run
CLEARED_PER_TRANSACTION = 25  # emptied pending entries one clearing deletes


@dataclass(frozen=True)
class State:
    head: Head
    pending: list[dict]  # entries with changes to number, oldest first
    emptied: list[dict]  # entries a numbering emptied (kept: a write may append again; cleared when quiet)


@dataclass(frozen=True)
class Numbered:
    count: int  # entries numbered
    done: bool  # nothing was left pending when it stopped (or only changes younger than `settled_before`)
    head: Head  # the head as this numbering last saw or moved it: every entry up to it is readable


def read_state(account: str) -> State:
    """The feed head and the pending entries in one consistent Query (they sort next to each other)."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND SK BETWEEN :head AND :end",
        "ExpressionAttributeValues": table.values(
            pk=keys.account_pk(account), head=keys.FEED_HEAD_SK, end=keys.FEED_PENDING_END
        ),
        "ConsistentRead": True,
    }
    found: list[dict] = []
    while len(found) < PENDING_READ:
        response = table.client().query(**request)
        found += [table.from_item(item) for item in response.get("Items", [])]
        if "LastEvaluatedKey" not in response:
            break
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    head = head_of(found.pop(0) if found and found[0]["SK"] == keys.FEED_HEAD_SK else None)
    # Oldest first by the entry's first change (an emptied entry keeps the index key it began with, so that key
    # says nothing of what was appended since).
    pending = sorted((item for item in found if item.get("changes")), key=lambda item: (item["changes"][0]["at"], item["SK"]))
    return State(head, pending, [item for item in found if not item.get("changes")])


def _selection(account: str) -> tuple[str, ...] | None:
    """The event types the webhook settings select (None: the default)."""
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.webhooks_key(account)), ConsistentRead=True,
        ProjectionExpression="events",
    )
    selected = table.from_item(response["Item"]).get("events") if "Item" in response else None
    return tuple(sorted(selected)) if selected is not None else None


def _change(pending: dict) -> Change:
    return Change(ChangeType(pending["type"]), pending["id"], pending.get("status"), pending.get("customer_id"),
                  pending.get("integration"), pending.get("date"))


def entry_item(account: str, sequence: int, pending: dict) -> dict:
    item = {**keys.feed_entry_key(account, sequence), "sequence": sequence}
    item.update({name: pending[name] for name in ("type", "resource", "id", "at")})
    item.update({name: pending[name] for name in ("status", "customer_id", "integration", "date") if name in pending})
    # The table's TTL attribute, counted from the change (not from its numbering).
    item["expires_at"] = int(parse_iso(pending["at"]).timestamp()) + RETENTION_DAYS * 86400
    return item


def _head_update(account: str, head: Head, count: int, last_event: int) -> dict:
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.feed_head_key(account)),
        "UpdateExpression": "SET #seq = :next, last_event_sequence = :event",
        "ExpressionAttributeNames": {"#seq": "sequence"},
        "ExpressionAttributeValues": table.values(next=head.sequence + count, event=last_event),
    }
    if head.exists:
        update["ConditionExpression"] = "#seq = :seen"
        update["ExpressionAttributeValues"].update(table.values(seen=head.sequence))
    else:
        update["ConditionExpression"] = "attribute_not_exists(PK)"
    return {"Update": update}


def _removal(item: dict, taken: int, now: dt.datetime) -> dict:
    """Remove the `taken` first changes of a pending entry (a write may be appending behind them: its changes
    stay, in order, and neither refuses the other). An entry emptied so stays: deleting it here would refuse the
    whole numbering whenever a write appends meanwhile (a busy resource); `clear` deletes it once quiet."""
    key = table.to_item({"PK": item["PK"], "SK": item["SK"]})
    names = {"#changes": "changes"}
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


def _plan(account: str, pending: list[dict], head: Head, selected, now: dt.datetime) -> tuple[list[dict], Head, bool]:
    """The numbering transaction for as many pending changes as one transaction holds, oldest entries first and
    each entry's changes in their order; the head it moves to, and whether that is all of them."""
    room = MAX_TRANSACTION_ITEMS - 1
    sequence, last_event = head.sequence, head.last_event_sequence
    written: list[dict] = []
    everything = True
    for item in pending:
        changes, taken, own = item.get("changes", []), 0, []
        if room < 2:  # its removal and at least one change
            everything = False
            break
        room -= 1
        for pending_change in changes:
            event_type = event_type_of(ChangeType(pending_change["type"]), selected)
            cost = 1 + (event_type is not None)
            if cost > room:
                break
            room -= cost
            sequence += 1
            taken += 1
            own.append({"Put": {"TableName": table.name(), "Item": table.to_item(entry_item(account, sequence, pending_change)),
                                "ConditionExpression": "attribute_not_exists(PK)"}})
            if event_type is not None:
                own.append(events.feed_event(account, event_type, _change(pending_change), sequence, last_event, now))
                last_event = sequence
        if taken:
            written += [_removal(item, taken, now)] + own
        if taken < len(changes):
            everything = False
            break
    count = sequence - head.sequence
    return [_head_update(account, head, count, last_event)] + written, Head(sequence, True, last_event), everything


def number(account: str, now: dt.datetime, rounds: int = 10, settled_before: dt.datetime | None = None,
           clear_before: dt.datetime | None = None) -> Numbered:
    """Number the account's pending entries: at most `rounds` transactions (each up to ~49 entries).
    `settled_before`: leave them (done) while every pending change is younger, to a reader numbering inline.
    `clear_before`: when nothing is left, delete the entries emptied before then (`clear`)."""
    numbered, lost, head = 0, 0, None
    for _ in range(rounds):
        state = read_state(account)
        head = state.head
        if not state.pending:
            if clear_before is not None:
                clear([item for item in state.emptied if item.get("numbered_at", "") < iso(clear_before)])
            return Numbered(numbered, True, state.head)
        if settled_before is not None and state.pending[0]["changes"][0]["at"] > iso(settled_before):
            return Numbered(numbered, True, state.head)
        items, moved, everything = _plan(account, state.pending, state.head, _selection(account), now)
        try:
            table.client().transact_write_items(TransactItems=items, ClientRequestToken=uuid.uuid4().hex)
        except ClientError as error:
            if not table.cancellation_codes(error):
                raise
            # Another sequencer moved the head, or a write appended to an entry we read: read again.
            lost += 1
            if lost >= MAX_ATTEMPTS:
                return Numbered(numbered, False, state.head)
            back_off(lost, time.sleep, first=0.002, cap=0.05)
            continue
        numbered += moved.sequence - state.head.sequence
        head = moved
        if everything and len(state.pending) < PENDING_READ:
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
                {"Delete": {"TableName": table.name(), "Key": table.to_item({"PK": item["PK"], "SK": item["SK"]}),
                            "ConditionExpression": "size(#changes) = :none",
                            "ExpressionAttributeNames": {"#changes": "changes"},
                            "ExpressionAttributeValues": table.values(none=0)}}
                for item in chunk
            ]
            try:
                table.client().transact_write_items(TransactItems=deletes)
            except ClientError as error:
                if not table.cancellation_codes(error):
                    raise
                reasons = table.cancellation_reasons(error, deletes)
                chunk = [item for item, delete in zip(chunk, deletes) if reasons.get(table.item_key(delete)) in ("None", "")]
                if not chunk:
                    break
                continue
            cleared += len(chunk)
            break
    return cleared


def accounts_pending(now: dt.datetime, limit: int) -> list[str]:
    """Accounts with pending entries (from the sparse index, which lags a little), oldest first, each once."""
    found = table.due_items(keys.GSI3, keys.FEED_PENDING, keys.due_bound(iso(now)), limit)
    return list(dict.fromkeys(item["GSI3SK"].split("#", 1)[1] for item in found))


def woken(record_name: str, image: dict) -> str | None:
    """The account a stream record of a pending entry asks to number (a write appended to it)."""
    if record_name not in ("INSERT", "MODIFY"):
        return None
    if not keys.in_queue((image.get("GSI3PK") or {}).get("S"), keys.FEED_PENDING) or not (image.get("changes") or {}).get("L"):
        return None
    return (image.get("GSI3SK") or {}).get("S", "#").split("#", 1)[1] or None
