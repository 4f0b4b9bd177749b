"""Catalogue imports (decisions §12): the import item, its file rows in pieces, its error entries, its queue.

- The import item (keys.import_key) holds the status, the counts and the checkpoint `next_row` (the index of the
  first row not yet done). Counts and checkpoint change only together with the rows they count, in one chunk's
  transaction (store/import_chunks.py).
- The file's rows, as read at upload with their category decided, are stored as JSON text in pieces of at most
  PIECE_BYTES
  (keys.import_rows_key), `piece_starts` on the import item saying which row each piece begins with. They are
  deleted when the import ends.
- Error entries (the first IMPORT_LISTED_ERRORS of the file) are stored in items of at most
  import_chunks.ERROR_ITEM_BYTES, keyed by the index of their first entry, so they list in file order.
- Imports still to run carry GSI3PK = IMPORT#PENDING#<shard>, GSI3SK = <due iso>#<account>#<id>. A job claims one
  by moving GSI3SK to the end of its lease and writing a `lease` token; every later write is conditional on that
  token. Imports leave this module without their keys: a queued one as a QueuedImport, a claimed one as a
  ClaimedImport (its lease an opaque token), a record (get, list_page) as its attributes.
"""

import datetime as dt
import json
import secrets
from dataclasses import dataclass, field

from ..domain.timestamps import iso
from . import batch, keys, operations, table
from .operations import Operation
from .outcomes import LostLease, Stale
from .paging import Page, query_page

PIECE_BYTES = 300_000  # below DynamoDB's 400 KB item limit with room for the key and attribute names
COUNTS = ("created", "updated", "unchanged", "invalid", "categories_created", "error_count")
_LISTED = ("id", "#status", "dry_run", "#rows", "next_row", *COUNTS, "submitted_at", "finished_at", "reason")
_KEYS = ("PK", "SK", "GSI3PK", "GSI3SK", "lease")  # what never leaves this module


@dataclass(frozen=True)
class QueuedImport:
    """An import waiting in the queue, as a job finds it; `place` (where it waits) means something to the store only."""

    account: str
    id: str
    place: str


@dataclass(frozen=True)
class ClaimedImport:
    """An import a job holds until its lease ends: every write is conditional on `lease` (an opaque token).
    `counts`: COUNTS by name, as of the checkpoint `next_row`."""

    account: str
    id: str
    lease: str
    dry_run: bool
    rows: int
    piece_starts: tuple[int, ...]
    next_row: int
    stalls: int
    counts: dict = field(default_factory=dict)


def _claimed(item: dict) -> ClaimedImport:
    return ClaimedImport(
        item["account"], item["id"], item["lease"], bool(item["dry_run"]), int(item["rows"]),
        tuple(int(start) for start in item["piece_starts"]), int(item["next_row"]), int(item.get("stalls", 0)),
        {name: int(item.get(name, 0)) for name in COUNTS},
    )  # fmt: skip


def _record(item: dict) -> dict:
    """An import item as it leaves the store: its attributes, without the table's keys, numbers as JSON has them."""
    return table.plain({name: value for name, value in item.items() if name not in _KEYS})


def new_import_id(now: dt.datetime) -> str:
    """Sorts by submission time, so the newest import lists first: 12 hex digits of milliseconds, 8 random."""
    return f"{int(now.timestamp() * 1000):012x}{secrets.token_hex(4)}"


def split_pieces(rows: list[str]) -> tuple[list[str], list[int]]:
    """JSON row texts -> (piece texts, index of the first row of each piece)."""
    pieces, starts, current, size = [], [], [], 0
    for index, row in enumerate(rows):
        length = len(row.encode()) + 1
        if current and size + length > PIECE_BYTES:
            pieces.append("[" + ",".join(current) + "]")
            current, size = [], 0
        if not current:
            starts.append(index)
        current.append(row)
        size += length
    if current:
        pieces.append("[" + ",".join(current) + "]")
    return pieces, starts


def storing_rows(account: str, import_id: str, rows: list, clock: batch.Clock | None = None) -> list[int]:
    """Store the rows (JSON values of strings, numbers and lists) in pieces, before the import item that queues them
    (`queuing`: an import is only visible once its rows are there): the index of each piece's first row. `clock`:
    the caller's, bounding retries of throttled writes (store/batch.py). Rows of an import never queued stay
    unreferenced."""
    pieces, starts = split_pieces([json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in rows])
    batch.write_items(
        [
            {"PutRequest": {"Item": table.to_item({**keys.import_rows_key(account, import_id, n), "rows": text})}}
            for n, text in enumerate(pieces)
        ],
        clock,
    )
    return starts


def queuing(account: str, record: dict, rows: int, starts: list[int], now: dt.datetime) -> Operation:
    """The import item that queues its stored rows (`storing_rows`), written once: the service commits it in a unit of
    work with the request's Idempotency-Key answer (decisions §11), so a request that dies after queueing replays
    its answer and never queues the import again."""
    item = {
        **keys.import_key(account, record["id"]),
        **keys.import_due(iso(now), account, record["id"]),
        **record,
        "rows": rows,
        "piece_starts": starts,
        "account": account,
        "next_row": 0,
        "stalls": 0,
        **{name: 0 for name in COUNTS},
    }
    condition = "attribute_not_exists(PK)"  # a new id: a refusal is a fault, raised (no outcome declared)
    return Operation(
        {"Put": {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": condition}}
    )


def get(account: str, import_id: str, consistent: bool = True) -> dict | None:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.import_key(account, import_id)), ConsistentRead=consistent
    )
    return _record(table.from_item(response["Item"])) if "Item" in response else None


def list_page(account: str, limit: int, cursor: str | None) -> Page:
    """The account's imports, newest first, without their rows or errors."""
    return query_page(
        account,
        "imports",
        limit,
        cursor,
        decode=lambda raw: _record(table.from_item(raw)),
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.imports_pk(account)),
        ExpressionAttributeNames={"#status": "status", "#rows": "rows"},
        ProjectionExpression=", ".join(("PK", "SK", *_LISTED)),
        ScanIndexForward=False,
    )


def listed_errors(account: str, import_id: str, limit: int) -> list[dict]:
    """The first `limit` error entries, in file order."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
        "ExpressionAttributeValues": table.values(
            pk=keys.import_parts_pk(account, import_id), prefix=keys.IMPORT_ERRORS_PREFIX
        ),
    }
    found: list[dict] = []
    while len(found) < limit:
        response = table.client().query(**request)
        for item in response.get("Items", []):
            found += table.from_item(item)["errors"]
        if "LastEvaluatedKey" not in response:
            break
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    return table.plain(found[:limit])


class RowsMissing(LookupError):
    """A piece of the file's rows is gone (deleted by hand, or by a job that finished the import meanwhile)."""


class RowReader:
    """The rows of a claimed import, read piece by piece as the import reaches them (not shared between threads)."""

    def __init__(self, claimed: ClaimedImport, clock: batch.Clock | None = None):
        self.account, self.id, self.clock = claimed.account, claimed.id, clock
        self.starts = list(claimed.piece_starts)
        self.total = claimed.rows
        self.loaded: dict[int, list] = {}

    def _load(self, numbers: list[int]) -> None:
        wanted = {n: keys.import_rows_key(self.account, self.id, n) for n in numbers if n not in self.loaded}
        if not wanted:
            return
        found = batch.get_items(list(wanted.values()), consistent=True, clock=self.clock)
        for n, key in wanted.items():
            item = batch.pick(found, key)
            if item is None:
                raise RowsMissing(f"rows of the file are missing (piece {n})")
            self.loaded[n] = json.loads(item["rows"])

    def _piece_of(self, index: int) -> int:
        return max(n for n, start in enumerate(self.starts) if start <= index)

    def take(self, start: int, count: int) -> list:
        """Rows start .. start + count - 1 (fewer at the end of the file)."""
        end = min(start + count, self.total)
        if start >= end:
            return []
        numbers = list(range(self._piece_of(start), self._piece_of(end - 1) + 1))
        self._load(numbers)
        rows = [row for n in numbers for row in self.loaded[n]]
        offset = self.starts[numbers[0]]
        return rows[start - offset : end - offset]

    def delete(self) -> None:
        delete_pieces(self.account, self.id, len(self.starts), self.clock)


def due(now: dt.datetime, limit: int) -> list[QueuedImport]:
    """Imports waiting for a job whose time has come, earliest first: at most `limit` from each queue shard."""
    found = table.due_items(keys.GSI3, keys.IMPORTS_PENDING, keys.due_bound(iso(now)), limit)
    return [QueuedImport(item["account"], item["id"], item["GSI3SK"]) for item in found]


def woken(record_name: str, image: dict) -> bool:
    """A stream record of an import waiting for a job: queued, or given back after a slice (not one leased)."""
    return keys.in_queue((image.get("GSI3PK") or {}).get("S"), keys.IMPORTS_PENDING) and "lease" not in image


def claim(queued: QueuedImport, lease_until: dt.datetime) -> ClaimedImport | Stale:
    """Take the import until lease_until; Stale when another job took it first. Counts the claim in `stalls`
    (a committed chunk or a release sets it back to 0), so an import that crashes its jobs again and again can
    be failed."""
    lease = keys.import_due(iso(lease_until), queued.account, queued.id)["GSI3SK"]
    claimed = _update_if(
        keys.import_key(queued.account, queued.id),
        "SET GSI3SK = :lease, lease = :token, stalls = stalls + :one",
        "GSI3SK = :seen",
        lease=lease,
        token=secrets.token_hex(8),
        one=1,
        seen=queued.place,
    )
    return _claimed(claimed) if claimed is not None else Stale()


def release(claimed: ClaimedImport, due_at: dt.datetime) -> None | LostLease:
    """Give the import back to the queue, due at due_at (the next job continues from the checkpoint)."""
    return _conditional_update(
        claimed,
        "SET GSI3SK = :due, stalls = :zero REMOVE lease",
        due=keys.import_due(iso(due_at), claimed.account, claimed.id)["GSI3SK"],
        zero=0,
    )


def finish(
    claimed: ClaimedImport, status: str, finished_at: dt.datetime, reason: str | None = None
) -> None | LostLease:
    """End the import (DONE or FAILED) and take it off the queue."""
    update = "SET #status = :status, finished_at = :at"
    named = {"status": status, "at": iso(finished_at)}
    if reason is not None:
        update += ", reason = :reason"
        named["reason"] = reason
    return _conditional_update(claimed, update + " REMOVE lease, GSI3PK, GSI3SK", names={"#status": "status"}, **named)


def _conditional_update(
    claimed: ClaimedImport, expression: str, names: dict | None = None, **named
) -> None | LostLease:
    """An update of the import item while our lease holds; LostLease when it no longer does."""
    key = keys.import_key(claimed.account, claimed.id)
    written = _update_if(key, expression, "lease = :token", names, token=claimed.lease, **named)
    return None if written is not None else LostLease()


def _update_if(key: dict, expression: str, condition: str, names: dict | None = None, **named) -> dict | None:
    """Update the import item if `condition` holds: the item as it is now, or None when it did not hold."""
    request = {
        "TableName": table.name(),
        "Key": table.to_item(key),
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeValues": table.values(**named),
    }
    if names:
        request["ExpressionAttributeNames"] = names
    written = operations.write(Operation({"Update": request}, Stale()), "ALL_NEW")
    return None if isinstance(written, Stale) else written


def delete_pieces(account: str, import_id: str, count: int, clock: batch.Clock | None = None) -> None:
    batch.write_items(
        [{"DeleteRequest": {"Key": table.to_item(keys.import_rows_key(account, import_id, n))}} for n in range(count)],
        clock,
    )
