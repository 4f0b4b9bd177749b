"""Marks: how a write tells the table's stream the feed changes it makes (decisions §13; docs/feed.md).

The unit of work puts on the item that holds each changed resource (store/feed_resources.py) one small attribute,
`feed_mark`: the unit's id, the account and the changes (what their entries will say but the sequence). Nothing
else is written for the feed when a write commits. The stream's forwarder reads the marks back (`record_of`): a
record whose new image carries a mark its old image did not is a committed unit's changes; a write that leaves the
mark as it was (a claim, a counter, an image's bookkeeping) makes none. A resource's changes are always marked on
the same item, and the stream keeps one item's records in order, so they are numbered in the order they committed.
A delete leaves no item to mark: the REMOVE record of a feed item is its resource's deletion (feed_resources.py).

Every record that makes changes has an id of its own, the same however often and from wherever the stream hands it
over: the unit and the item for a mark, the last mark and the item for a deletion. The numbering keeps the ids it
numbered (store/feed_sequencer.py), so each record is numbered once.
"""

import datetime as dt
import hashlib
import logging
import re
import uuid
from dataclasses import asdict, dataclass, field

from ..domain.feed import Change, ChangeType
from ..domain.timestamps import iso, parse_iso
from . import keys, table
from .feed_resources import deletion_of, item_of

log = logging.getLogger("supplier-ordering.feed")

MARK = "feed_mark"
_SET = re.compile(r"(?<![#:\w])SET\s+", re.IGNORECASE)
# What a mark adds to its item, per change at most (store/import_chunks.py sizes its transactions with it).
BYTES_PER_CHANGE = 300
# The most changes one write marks on one item (a unit records one or two per resource); a record with more is
# not ours and is numbered as unreadable (store/feed_sequencer.py holds a record's changes in one transaction).
MAX_CHANGES_PER_RECORD = 10
ENTRY_FIELDS = ("status", "customer_id", "integration", "date", "by")  # what a change's entry may add


def new_unit() -> str:
    return uuid.uuid4().hex[:16]


def said(change: Change, now: dt.datetime) -> dict:
    """What the change's entry will say, but its sequence."""
    entry = {"type": str(change.type), "resource": str(change.resource), "id": change.id, "at": iso(now)}
    for name in ENTRY_FIELDS:
        if getattr(change, name, None) is not None:
            entry[name] = getattr(change, name)
    return entry


def marked(account: str, unit: str, items: list[dict], changes: list[Change], now: dt.datetime) -> list[dict]:
    """The transaction items with their changes marked: on the feed item's Put or Update; a ConditionCheck of it
    becomes an Update that keeps its condition; a feed item the unit does not write gets an Update of the mark
    alone (it must exist). A delete marks nothing: its REMOVE record says it."""
    by_item: dict[tuple[str, str], tuple[dict, list[Change]]] = {}
    for change in changes:
        key = item_of(account, change)
        by_item.setdefault(table.key_of(key), (key, []))[1].append(change)
    items = list(items)
    positions = {table.item_key(item): index for index, item in enumerate(items)}
    for item_key, (key, grouped) in by_item.items():
        if len(grouped) > MAX_CHANGES_PER_RECORD:
            raise ValueError(f"{len(grouped)} changes marked on {item_key}: at most {MAX_CHANGES_PER_RECORD}")
        mark = {"unit": unit, "account": account, "changes": [said(change, now) for change in grouped]}
        index = positions.get(item_key)
        if index is None:
            items.append(_mark_alone(table.to_item(key), mark))
            continue
        ((kind, request),) = items[index].items()
        if kind == "Delete":
            deletion = deletion_of(key)
            if deletion is None or any(change != deletion[1] for change in grouped):
                raise ValueError(f"a delete of {item_key} recorded as {[str(c.type) for c in grouped]}")
            continue
        items[index] = {kind if kind != "ConditionCheck" else "Update": _with_mark(kind, request, mark)}
    return items


def _with_mark(kind: str, request: dict, mark: dict) -> dict:
    request = dict(request)
    if kind == "Put":
        request["Item"] = {**request["Item"], MARK: table.to_attr(mark)}
        return request
    expression = request.get("UpdateExpression", "")
    found = _SET.search(expression)
    if found:
        expression = f"{expression[: found.end()]}#feed_mark = :feed_mark, {expression[found.end() :]}"
    else:
        expression = f"SET #feed_mark = :feed_mark {expression}".strip()
    request["UpdateExpression"] = expression
    request["ExpressionAttributeNames"] = {**request.get("ExpressionAttributeNames", {}), "#feed_mark": MARK}
    request["ExpressionAttributeValues"] = {
        **request.get("ExpressionAttributeValues", {}),
        ":feed_mark": table.to_attr(mark),
    }
    return request


def _mark_alone(key: dict, mark: dict) -> dict:
    return {
        "Update": {
            "TableName": table.name(),
            "Key": key,
            "UpdateExpression": "SET #feed_mark = :feed_mark",
            "ConditionExpression": "attribute_exists(PK)",
            "ExpressionAttributeNames": {"#feed_mark": MARK},
            "ExpressionAttributeValues": {":feed_mark": table.to_attr(mark)},
        }
    }


# Reading marks back from the stream.


@dataclass(frozen=True)
class Marked:
    """One stream record's changes (the entries they make, but their sequences), as the forwarder hands them to the
    numbering of their account (a message of the feed queue carries them as JSON: `asdict`)."""

    id: str  # the record's own id, the same whenever it is handed over
    account: str
    created: int  # the record's creation, epoch seconds
    changes: list[dict] = field(default_factory=list)
    unit: str | None = None  # the unit of work that made them (None: a deletion)
    seq: str | None = None  # the record's sequence number in its shard (for logs and make run's checkpoints)
    unreadable: str | None = None  # why its changes cannot be read as they are (they are numbered as one entry)

    def as_json(self) -> dict:
        return {name: value for name, value in asdict(self).items() if value is not None}


def marked_from(data: dict) -> Marked:
    return Marked(**{name: data[name] for name in Marked.__dataclass_fields__ if name in data})


def _mark_of(image: dict | None) -> object:
    if not image or MARK not in image:
        return None
    return table.from_item({MARK: image[MARK]})[MARK]


def _item_id(key: dict) -> str:
    return hashlib.blake2b(f"{key['PK']}\n{key['SK']}".encode(), digest_size=6).hexdigest()


def record_of(
    event_name: str,
    keys_image: dict,
    new_image: dict | None,
    old_image: dict | None,
    created: dt.datetime,
    event_id: str,
) -> Marked | None:
    """The changes a stream record shows (its images in DynamoDB's JSON), or None: a new mark on an INSERT or MODIFY,
    or the deletion a REMOVE of a feed item is. A record whose mark cannot be read is Marked `unreadable` (its
    account from the item's key), never dropped."""
    key = table.from_item(keys_image or {})
    stamp = int(created.timestamp())
    if event_name in ("INSERT", "MODIFY"):
        new, old = _mark_of(new_image), _mark_of(old_image)
        if new is None or (isinstance(old, dict) and isinstance(new, dict) and old.get("unit") == new.get("unit")):
            return None
        problem = _unreadable(new)
        if problem is None:
            record_id = f"{new['unit']}.{_item_id(key)}"
            return Marked(record_id, new["account"], stamp, list(new["changes"]), unit=new["unit"])
        return _unreadable_record(key, f"mark.{event_id}", stamp, problem)
    if event_name == "REMOVE" and old_image and table.TTL_ATTRIBUTE not in old_image:  # an expiry is no change
        deleted = deletion_of(key)
        if deleted is None:
            return None
        account, change = deleted
        old = _mark_of(old_image)
        last = old if isinstance(old, dict) and _unreadable(old) is None else None
        # The deletion follows its item's last change, whatever the stream's clock (to the second; the minute in
        # DynamoDB Local).
        at = max([created, *(parse_iso(c["at"]) for c in (last["changes"] if last else []))])
        record_id = f"{last['unit']}.{_item_id(key)}.gone" if last else f"gone.{event_id}"
        return Marked(record_id, account, stamp, [said(change, at)])
    return None


def _unreadable(mark: object) -> str | None:
    """Why a mark cannot be numbered as it is (None: it can)."""
    if not isinstance(mark, dict) or not isinstance(mark.get("unit"), str) or not isinstance(mark.get("account"), str):
        return "a mark without its unit or account"
    changes = mark.get("changes")
    if not isinstance(changes, list) or not changes or len(changes) > MAX_CHANGES_PER_RECORD:
        return "a mark without changes, or with more than one write makes"
    for change in changes:
        if not isinstance(change, dict) or not all(isinstance(change.get(n), str) for n in ("type", "id", "at")):
            return "a change without its type, id or time"
        try:
            parse_iso(change["at"])
        except ValueError:
            return f"a change whose time {change['at'][:40]!r} is not a time"
    return None


def _unreadable_record(key: dict, record_id: str, stamp: int, problem: str) -> Marked | None:
    pk = key.get("PK", "")
    if not pk.startswith(keys.ACCOUNT_PREFIX):
        log.error("a feed mark on %s outside any account cannot be numbered: %s", key, problem)
        return None
    account = keys.account_of_pk(pk).split("#", 1)[0]
    log.error("feed mark on %s unreadable (%s): numbered as one feed.unreadable entry", key, problem)
    return Marked(record_id, account, stamp, unreadable=f"{problem} on {pk} {key.get('SK', '')}"[:300])


def change_of(said_change: dict) -> Change:
    """The Change an entry's text says (of a type this release knows)."""
    return Change(ChangeType(said_change["type"]), said_change["id"], **{n: said_change.get(n) for n in ENTRY_FIELDS})
