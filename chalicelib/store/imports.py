"""Catalogue imports (decisions §12): the import item, its file rows in pieces, its error entries, its queue.

- The import item (keys.import_key) holds the status, the counts and the checkpoint `next_row` (the index of the
  first row not yet done). Counts and checkpoint change only together with the rows they count: a chunk's
  product writes, the categories it creates, a check that every other category it writes into exists, its error
  entries and the new checkpoint are one TransactWriteItems (chunk_items), so a crash never counts a row or a
  category twice or loses one, and no product names a category deleted meanwhile.
- The file's rows, as read at upload with their category decided, are stored as JSON text in pieces of at most PIECE_BYTES
  (keys.import_rows_key), `piece_starts` on the import item saying which row each piece begins with. They are
  deleted when the import ends.
- Error entries (the first IMPORT_LISTED_ERRORS of the file) are stored in items of at most ERROR_ITEM_BYTES,
  keyed by the index of their first entry, so they list in file order.
- Imports still to run carry GSI3PK = IMPORT#PENDING#<shard>, GSI3SK = <due iso>#<account>#<id>. A job claims one
  by moving GSI3SK to the end of its lease and writing a `lease` token; every later write is conditional on that
  token. Imports leave this module without their keys: a queued one as a QueuedImport, a claimed one as a
  ClaimedImport (its lease an opaque token), a record (get, list_page) as its attributes.
"""
import datetime as dt
import json
import secrets
from dataclasses import dataclass, field, replace
from functools import cached_property

from botocore.exceptions import ClientError

from ..domain.feed import Change, ChangeType, product_change
from ..domain.limits import IMPORT_LISTED_ERRORS
from ..domain.rendering import size_in_bytes
from ..domain.timestamps import iso
from . import batch, categories, deposits, feed, idempotency, keys, products, table
from .idempotency import Completion
from .outcomes import LostClaim, LostLease, Stale
from .paging import Page, query_page

PIECE_BYTES = 300_000  # below DynamoDB's 400 KB item limit with room for the key and attribute names
MAX_TRANSACTION_ITEMS = 100  # DynamoDB's TransactWriteItems limit
TRANSACTION_BYTES = 3_000_000  # TransactWriteItems takes at most 4 MB; JSON sizes run a little under DynamoDB's
ERROR_ITEM_BYTES = 300_000  # one item of error entries, below the 400 KB item limit
CATEGORY_ITEM_BYTES = 1_000  # what a category check or creation adds to a transaction, at most
MAX_CHUNK_ROWS = MAX_TRANSACTION_ITEMS - 2  # the most rows one chunk may hold (with its checkpoint and errors)
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
    """An import item as it leaves the store: its attributes, without the table's keys."""
    return {name: value for name, value in item.items() if name not in _KEYS}


@dataclass(frozen=True)
class ProductWrite:
    """A product to write: create it (revision None) or replace the one read with that revision.

    image_due: queue its image for download then (or forget an image it no longer has); None keeps the image
    state as it is (store/products.py write_operation)."""

    data: dict
    expected_revision: str | None
    image_due: dt.datetime | None = None
    deposits_before: frozenset = frozenset()  # the deposit types the stored product names (decisions §15)

    @cached_property
    def size(self) -> int:
        """Bytes of the product's JSON: what it adds to a transaction (measured once)."""
        return size_in_bytes(self.data)


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


def create(
    account: str, record: dict, rows: list, now: dt.datetime, claim: Completion | None = None, clock: batch.Clock | None = None
) -> None | LostClaim:
    """Store the rows (JSON values of strings, numbers and lists), then the import item that queues them (an item is only visible once its
    rows are there), with the Idempotency-Key answer `claim` in the same write (decisions §11): a request that
    dies after queueing replays its answer and never queues the import again. LostClaim: another request took
    the key over, nothing is queued. `clock`: the caller's, bounding retries of throttled writes (store/batch.py)."""
    import_id = record["id"]
    pieces, starts = split_pieces([json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in rows])
    batch.write_items(
        [
            {"PutRequest": {"Item": table.to_item({**keys.import_rows_key(account, import_id, n), "rows": text})}}
            for n, text in enumerate(pieces)
        ],
        clock,
    )
    item = {
        **keys.import_key(account, import_id),
        **keys.import_due(iso(now), account, import_id),
        **record,
        "rows": len(rows),
        "piece_starts": starts,
        "account": account,
        "next_row": 0,
        "stalls": 0,
        **{name: 0 for name in COUNTS},
    }
    queued = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    if claim is None:
        table.client().put_item(**queued)
        return None
    answer = idempotency.complete_operation(claim)
    operations = [{"Put": queued}, answer]
    try:
        table.client().transact_write_items(TransactItems=operations)
    except ClientError as error:
        if table.cancellation_reasons(error, operations).get(table.item_key(answer)) == table.CONDITION_FAILED:
            return LostClaim()  # its rows stay unreferenced, as those of an import whose put never ran
        raise
    return None


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
    return found[:limit]


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


@dataclass(frozen=True)
class Existing:
    product: products.StoredProduct
    image_status: str | None  # the image job's state (store/product_images.py)


def stored_products(account: str, product_ids: list[str], clock: batch.Clock | None = None) -> dict[str, Existing]:
    """The products with these ids that exist, read consistently (their revision guards the write)."""
    found = batch.get_items([keys.product_key(account, pid) for pid in product_ids], consistent=True, clock=clock)
    result = {}
    for item in found.values():
        stored = products.from_item(item)
        result[stored.data["id"]] = Existing(stored, item.get("image_status"))
    return result


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


@dataclass(frozen=True)
class ChunkRow:
    """What one row adds to its chunk: the count it goes to (created, updated, unchanged, invalid), its error
    entries, the product to write (None in a dry run and for rows that change nothing), and the category that
    must be created for it (id, name), counted in categories_created (written only when the import is real)."""

    counted: str
    errors: list[dict] = field(default_factory=list)
    write: ProductWrite | None = None
    new_category: tuple[str, str] | None = None


@dataclass(frozen=True)
class Committed:
    """The first `rows` rows given were committed; `claimed` is the import as it is now; `created` the
    categories the chunk created."""

    rows: int
    claimed: ClaimedImport
    created: frozenset = frozenset()


def fitting(claimed: ClaimedImport, rows: list[ChunkRow]) -> int:
    """How many leading rows fit one transaction (at least one): items and bytes, error entries included."""
    # The checkpoint and what the feed adds (store/feed.py: the head; per change its entry and event). Each write
    # is a product and a change; each first-seen category its check or creation and (when created) a change; the
    # first write with deposits the types' reference counts.
    items, size, seen, listed, error_bytes = 1 + feed.HEAD_ITEMS, 0, set(), claimed.counts.get("error_count", 0), 0
    references = False
    for count, row in enumerate(rows):
        extra_items, extra_size = 0, 0
        if row.write is not None:
            extra_items, extra_size = 1 + feed.ITEMS_PER_CHANGE, row.write.size + feed.BYTES_PER_CHANGE
            if not references and (row.write.deposits_before or products.deposits_named(row.write.data)):
                extra_items, references = extra_items + 1, True
            category = row.write.data.get("category")
            if category is not None and category not in seen:
                extra_items += 1 + feed.ITEMS_PER_CHANGE
                extra_size += CATEGORY_ITEM_BYTES + feed.BYTES_PER_CHANGE
        kept = row.errors[: max(0, IMPORT_LISTED_ERRORS - listed)]
        new_error_bytes = error_bytes + sum(size_in_bytes(e) + 1 for e in kept)
        error_items = -(-new_error_bytes // (ERROR_ITEM_BYTES - 2_000)) if new_error_bytes else 0
        if count and (items + extra_items + error_items > MAX_TRANSACTION_ITEMS or size + extra_size + new_error_bytes > TRANSACTION_BYTES):
            return count
        items, size, error_bytes = items + extra_items, size + extra_size, new_error_bytes
        listed += len(row.errors)
        if row.write is not None and row.write.data.get("category") is not None:
            seen.add(row.write.data["category"])
    return len(rows)


def _progress(claimed: ClaimedImport, rows: list[ChunkRow]) -> tuple[dict, list[list[dict]], dict[str, str]]:
    """(the counts and checkpoint after the rows, the listed error entries in items, the categories to create)."""
    progress = {name: claimed.counts.get(name, 0) for name in COUNTS}
    progress["next_row"] = claimed.next_row + len(rows)
    new_categories: dict[str, str] = {}
    entries: list[dict] = []
    for row in rows:
        progress[row.counted] += 1
        if row.new_category is not None and row.new_category[0] not in new_categories:
            new_categories[row.new_category[0]] = row.new_category[1]
        for error in row.errors:
            if progress["error_count"] < IMPORT_LISTED_ERRORS:
                entries.append(error)
            progress["error_count"] += 1
    progress["categories_created"] += len(new_categories)
    return progress, _error_items(entries), new_categories


def _error_items(entries: list[dict]) -> list[list[dict]]:
    """Error entries in groups of at most ERROR_ITEM_BYTES of JSON each, in file order."""
    groups, current, size = [], [], 0
    for entry in entries:
        length = size_in_bytes(entry) + 1
        if current and size + length > ERROR_ITEM_BYTES - 2_000:
            groups.append(current)
            current, size = [], 0
        current.append(entry)
        size += length
    return groups + [current] if current else groups


def _checkpoint_update(claimed: ClaimedImport, progress: dict) -> dict:
    """The import item update that moves the checkpoint, if our lease holds and nobody moved it first."""
    names = {f"#f{i}": name for i, name in enumerate(progress)}
    sets = ", ".join(f"#f{i} = :f{i}" for i in range(len(progress)))
    return {
        "TableName": table.name(),
        "Key": table.to_item(keys.import_key(claimed.account, claimed.id)),
        "UpdateExpression": f"SET {sets}, stalls = :zero",
        "ConditionExpression": "lease = :token AND next_row = :seen",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": {
            **table.values(**{f"f{i}": value for i, value in enumerate(progress.values())}),
            **table.values(token=claimed.lease, seen=claimed.next_row, zero=0),
        },
    }


def _feed_changes(rows: list[ChunkRow], new_categories: dict[str, str]) -> list[Change]:
    changes = [
        product_change("updated" if row.write.expected_revision is not None else "created", row.write.data["id"])
        for row in rows
        if row.write is not None
    ]
    return changes + [Change(ChangeType.CATEGORY_CREATED, category) for category in new_categories]


def chunk_items(claimed: ClaimedImport, rows: list[ChunkRow], progress: dict, error_items: list[list[dict]], new_categories: dict[str, str]) -> list[dict]:
    """The chunk's transaction, all or nothing, in this order: the checkpoint and counts; each product write
    (conditional on the revision read); each category created for it (which must not exist yet); a check that
    every other category written into exists when the transaction commits; the error entries."""
    account, dry_run = claimed.account, claimed.dry_run
    items = [{"Update": _checkpoint_update(claimed, progress)}]
    if dry_run:
        return items + _error_puts(claimed, progress, error_items)
    writes = [row.write for row in rows if row.write is not None]
    for write in writes:
        update = products.write_operation(
            account, write.data, table.new_revision(), create_only=write.expected_revision is None,
            expected_revision=write.expected_revision, image_due=write.image_due,
        )  # fmt: skip
        items.append({"Update": update})
    items += [categories.create_operation(account, c, name) for c, name in new_categories.items()]
    checked = sorted({w.data["category"] for w in writes if w.data.get("category") is not None} - set(new_categories))
    items += [categories.exists_check(account, c) for c in checked]
    refs = _deposit_references(account, writes)
    return items + ([refs] if refs is not None else []) + _error_puts(claimed, progress, error_items)


def _deposit_references(account: str, writes: list[ProductWrite]) -> dict | None:
    """The reference counts the chunk's writes move, in one item (store/deposits.py)."""
    deltas, named = {}, set()
    for write in writes:
        after = products.deposits_named(write.data)
        for deposit_id in after - write.deposits_before:
            deltas[deposit_id] = deltas.get(deposit_id, 0) + 1
            named.add(deposit_id)
        for deposit_id in write.deposits_before - after:
            deltas[deposit_id] = deltas.get(deposit_id, 0) - 1
    return deposits.refs_operation(account, deltas, named)


def _error_puts(claimed: ClaimedImport, progress: dict, error_items: list[list[dict]]) -> list[dict]:
    first = min(progress["error_count"], IMPORT_LISTED_ERRORS) - sum(len(group) for group in error_items)
    puts = []
    for group in error_items:
        key = keys.import_errors_key(claimed.account, claimed.id, first)
        puts.append({"Put": {"TableName": table.name(), "Item": table.to_item({**key, "errors": group})}})
        first += len(group)
    return puts


def commit(claimed: ClaimedImport, rows: list[ChunkRow], now: dt.datetime) -> Committed | Stale | LostLease:
    """Commit as many leading rows as one transaction holds (at least one): see chunk_items. Stale: a product or
    category they read changed meanwhile (the service evaluates the rows again and retries)."""
    rows = rows[: fitting(claimed, rows)]
    progress, error_items, new_categories = _progress(claimed, rows)
    items = chunk_items(claimed, rows, progress, error_items, new_categories)
    changes = [] if claimed.dry_run else _feed_changes(rows, new_categories)
    try:
        if len(items) == 1:
            table.client().update_item(**items[0]["Update"])
        else:
            # Each written row and each created category is one feed entry, in the chunk's own transaction.
            feed.commit(claimed.account, items, changes, now)
    except ClientError as error:
        if len(items) == 1 and table.is_conditional_failure(error):
            return LostLease()
        reasons = table.cancellation_reasons(error, items)
        if not reasons:
            raise
        if reasons.get(table.key_of(keys.import_key(claimed.account, claimed.id))) == table.CONDITION_FAILED:
            return LostLease()  # the checkpoint's condition: our lease
        return Stale()  # a product or category changed, or an item was busy: read the chunk again
    created = frozenset() if claimed.dry_run else frozenset(new_categories)
    after = replace(claimed, next_row=progress["next_row"], stalls=0, counts={name: progress[name] for name in COUNTS})
    return Committed(len(rows), after, created)


def release(claimed: ClaimedImport, due_at: dt.datetime) -> None | LostLease:
    """Give the import back to the queue, due at due_at (the next job continues from the checkpoint)."""
    return _conditional_update(
        claimed,
        "SET GSI3SK = :due, stalls = :zero REMOVE lease",
        due=keys.import_due(iso(due_at), claimed.account, claimed.id)["GSI3SK"],
        zero=0,
    )


def finish(claimed: ClaimedImport, status: str, finished_at: dt.datetime, reason: str | None = None) -> None | LostLease:
    """End the import (DONE or FAILED) and take it off the queue."""
    update = "SET #status = :status, finished_at = :at"
    named = {"status": status, "at": iso(finished_at)}
    if reason is not None:
        update += ", reason = :reason"
        named["reason"] = reason
    return _conditional_update(claimed, update + " REMOVE lease, GSI3PK, GSI3SK", names={"#status": "status"}, **named)


def _conditional_update(claimed: ClaimedImport, expression: str, names: dict | None = None, **named) -> None | LostLease:
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
        "ReturnValues": "ALL_NEW",
    }
    if names:
        request["ExpressionAttributeNames"] = names
    try:
        response = table.client().update_item(**request)
    except ClientError as error:
        if table.is_conditional_failure(error):
            return None
        raise
    return table.from_item(response["Attributes"])


def delete_pieces(account: str, import_id: str, count: int, clock: batch.Clock | None = None) -> None:
    batch.write_items(
        [{"DeleteRequest": {"Key": table.to_item(keys.import_rows_key(account, import_id, n))}} for n in range(count)],
        clock,
    )
