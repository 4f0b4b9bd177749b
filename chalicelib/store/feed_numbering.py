"""The sequencer: pending entries (store/feed.py) get their sequences, in batches (docs/feed.md).

One numbering is one TransactWriteItems: the account's feed head moved from n to n+k (conditional on it still
being n), entries n+1 … n+k, the webhook events they make (chained by previous_sequence), and the changes they
came from removed from the front of their pending entries (writes appending behind them do not refuse it; an
entry found empty is deleted by the next numbering). Two sequencers of one account at once are
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
from . import batch, events, keys, table
from .feed import Head, head_of

MAX_TRANSACTION_ITEMS = 100  # DynamoDB's bound: the head, then per pending entry its removal, per change ≤ 2
PENDING_READ = 1000  # pending entries one numbering orders at most (the oldest first, by when they began)
MAX_ATTEMPTS = 8  # lost races (another sequencer, a write appending) before leaving the rest to the next run


@dataclass(frozen=True)
class Numbered:
    count: int  # entries numbered
    done: bool  # nothing was left pending when it stopped


def _pending(account: str) -> list[dict]:
    """The account's pending entries (consistent), oldest first."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": table.values(pk=keys.feed_pending_pk(account)),
        "ConsistentRead": True,
    }
    found: list[dict] = []
    while len(found) < PENDING_READ:
        response = table.client().query(**request)
        found += [table.from_item(item) for item in response.get("Items", [])]
        if "LastEvaluatedKey" not in response:
            break
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    # Oldest first by the entry's first change (an entry emptied by a numbering keeps the index key it began with,
    # so that key says nothing of what was appended since); empty entries first, to be deleted.
    return sorted(found, key=lambda item: (item["changes"][0]["at"] if item.get("changes") else "", item["SK"]))


def _head_and_selection(account: str) -> tuple[Head, tuple[str, ...] | None]:
    """The head and the event types the webhook settings select (None: the default), in one BatchGetItem."""
    head_key, webhooks_key = keys.feed_head_key(account), keys.webhooks_key(account)
    found = batch.get_items([head_key, webhooks_key], consistent=True)
    selected = (batch.pick(found, webhooks_key) or {}).get("events")
    return head_of(batch.pick(found, head_key)), tuple(sorted(selected)) if selected is not None else None


def _change(pending: dict) -> Change:
    return Change(ChangeType(pending["type"]), pending["id"], pending.get("status"), pending.get("customer_id"), pending.get("integration"))


def entry_item(account: str, sequence: int, pending: dict) -> dict:
    item = {**keys.feed_entry_key(account, sequence), "sequence": sequence}
    item.update({name: pending[name] for name in ("type", "resource", "id", "at")})
    item.update({name: pending[name] for name in ("status", "customer_id", "integration") if name in pending})
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


def _removal(item: dict, taken: int) -> dict:
    """Remove the `taken` first changes of a pending entry (a write may be appending behind them: its changes
    stay, in order, and neither refuses the other); an entry found empty is deleted, unless one was appended."""
    key = table.to_item({"PK": item["PK"], "SK": item["SK"]})
    names = {"#changes": "changes"}
    if taken == 0:
        condition = {"ConditionExpression": "size(#changes) = :none", "ExpressionAttributeValues": table.values(none=0)}
        return {"Delete": {"TableName": table.name(), "Key": key, "ExpressionAttributeNames": names, **condition}}
    removed = ", ".join(f"#changes[{i}]" for i in range(taken))
    return {
        "Update": {
            "TableName": table.name(),
            "Key": key,
            "UpdateExpression": f"REMOVE {removed}",
            "ConditionExpression": "size(#changes) >= :n",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": table.values(n=taken),
        }
    }


def _plan(account: str, pending: list[dict], head: Head, selected, now: dt.datetime) -> tuple[list[dict], int, bool]:
    """The numbering transaction for as many pending changes as one transaction holds, oldest entries first and
    each entry's changes in their order; how many it numbers, and whether that is all of them."""
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
        if taken or not changes:
            written += [_removal(item, taken)] + own
        if taken < len(changes):
            everything = False
            break
    count = sequence - head.sequence
    return ([_head_update(account, head, count, last_event)] if count else []) + written, count, everything


def number(account: str, now: dt.datetime, rounds: int = 10) -> Numbered:
    """Number the account's pending entries: at most `rounds` transactions (each up to ~49 entries)."""
    numbered, lost = 0, 0
    for _ in range(rounds):
        pending = _pending(account)
        if not pending:
            return Numbered(numbered, True)
        head, selected = _head_and_selection(account)
        items, count, everything = _plan(account, pending, head, selected, now)
        if not items:
            return Numbered(numbered, True)
        try:
            table.client().transact_write_items(TransactItems=items, ClientRequestToken=uuid.uuid4().hex)
        except ClientError as error:
            if not table.cancellation_codes(error):
                raise
            # Another sequencer moved the head, or a write appended to an entry we read: read again.
            lost += 1
            if lost >= MAX_ATTEMPTS:
                return Numbered(numbered, False)
            back_off(lost, time.sleep, first=0.002, cap=0.05)
            continue
        numbered += count
        if everything and len(pending) < PENDING_READ:
            return Numbered(numbered, True)
    return Numbered(numbered, False)


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
