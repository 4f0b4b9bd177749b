"""One chunk of a catalogue import (decisions §12): the rows' product writes, the categories they create or
check, their error entries and the import's new checkpoint, as the operations of one unit of work (Chunk), so a
crash never counts a row or a category twice or loses one, and no product names a category deleted meanwhile.
service/importing.py commits it with its feed changes. The import item, its rows and its queue are
store/import_items.py's.
"""

import datetime as dt
from dataclasses import dataclass, field, replace
from functools import cached_property

from ..domain.limits import IMPORT_LISTED_ERRORS
from ..domain.product import deposits_named
from ..domain.rendering import size_in_bytes
from . import batch, categories, deposits, feed_marks, keys, products, table
from .import_items import COUNTS, ClaimedImport
from .operations import Operation
from .outcomes import LostLease

MAX_TRANSACTION_ITEMS = 100  # DynamoDB's TransactWriteItems limit
TRANSACTION_BYTES = 3_000_000  # TransactWriteItems takes at most 4 MB; JSON sizes run a little under DynamoDB's
ERROR_ITEM_BYTES = 300_000  # one item of error entries, below the 400 KB item limit
CATEGORY_ITEM_BYTES = 1_000  # what a category check or creation adds to a transaction, at most
MAX_CHUNK_ROWS = MAX_TRANSACTION_ITEMS - 2  # the most rows one chunk may hold (with its checkpoint and errors)


@dataclass(frozen=True)
class ProductWrite:
    """A product to write: create it (revision None) or replace the one read with that revision.

    image_due: queue its image for download then (or forget an image it no longer has); None keeps the image
    state as it is (store/products.py write_operation)."""

    data: dict
    expected_revision: str | None
    image_due: dt.datetime | None = None
    deposits_before: frozenset = frozenset()  # the deposit types the stored product names (decisions §15)
    rules_changed: bool = False  # its standing orders' placing moments are looked at again (decisions §17)

    @cached_property
    def size(self) -> int:
        """Bytes of the product's JSON: what it adds to a transaction (measured once)."""
        return size_in_bytes(self.data)


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
    # The checkpoint. Each write is a product with its change's mark (store/feed_marks.py: bytes, no item); each
    # first-seen category its check or creation (when created, with a mark); the deposit type a write names or
    # named its reference count (store/deposits.py).
    items, size, seen, listed, error_bytes = 1, 0, set(), claimed.counts.get("error_count", 0), 0
    referenced: set[str] = set()
    creates = rechecks = False  # the category count moves once, and the standing orders' look again is one item
    for count, row in enumerate(rows):
        extra_items, extra_size, types = 0, 0, set()
        if row.new_category is not None and not creates:
            extra_items, extra_size = 1, CATEGORY_ITEM_BYTES
        if row.write is not None and row.write.rules_changed and not rechecks:
            extra_items, extra_size = extra_items + 1, extra_size + CATEGORY_ITEM_BYTES
        if row.write is not None:
            extra_items, extra_size = 1, row.write.size + feed_marks.BYTES_PER_CHANGE
            types = (row.write.deposits_before | deposits_named(row.write.data)) - referenced
            extra_items += len(types)
            category = row.write.data.get("category")
            if category is not None and category not in seen:
                extra_items += 1
                extra_size += CATEGORY_ITEM_BYTES + feed_marks.BYTES_PER_CHANGE
        kept = row.errors[: max(0, IMPORT_LISTED_ERRORS - listed)]
        new_error_bytes = error_bytes + sum(size_in_bytes(e) + 1 for e in kept)
        error_items = -(-new_error_bytes // (ERROR_ITEM_BYTES - 2_000)) if new_error_bytes else 0
        if count and (
            items + extra_items + error_items > MAX_TRANSACTION_ITEMS
            or size + extra_size + new_error_bytes > TRANSACTION_BYTES
        ):
            return count
        items, size, error_bytes = items + extra_items, size + extra_size, new_error_bytes
        creates = creates or row.new_category is not None
        rechecks = rechecks or (row.write is not None and row.write.rules_changed)
        listed += len(row.errors)
        referenced |= types
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


def _checkpoint_update(claimed: ClaimedImport, progress: dict) -> Operation:
    """The import item update that moves the checkpoint, if our lease holds and nobody moved it first (LostLease,
    answered before any other refusal)."""
    names = {f"#f{i}": name for i, name in enumerate(progress)}
    sets = ", ".join(f"#f{i} = :f{i}" for i in range(len(progress)))
    update = {
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
    return Operation({"Update": update}, LostLease(), rank=3)


@dataclass(frozen=True)
class Chunk:
    """The leading rows that fit one transaction and what committing them writes: the checkpoint and counts; each
    product write (products.saving: conditional on the revision read); each category created for it (which must
    not exist yet); a check that every other category written into exists when the transaction commits; the
    deposit types' reference counts; the error entries. All or nothing, so a crash never counts a row or a category
    twice or loses one, and no product names a category deleted meanwhile."""

    rows: list[ChunkRow]
    progress: dict
    new_categories: dict[str, str]  # id -> name, created by the chunk (in a real import)
    operations: list[Operation]


def chunk(claimed: ClaimedImport, rows: list[ChunkRow]) -> Chunk:
    """As many leading rows as one transaction holds (at least one), and their operations."""
    rows = rows[: fitting(claimed, rows)]
    progress, error_items, new_categories = _progress(claimed, rows)
    operations = [_checkpoint_update(claimed, progress)]
    if claimed.dry_run:
        return Chunk(rows, progress, {}, operations + _error_puts(claimed, progress, error_items))
    account = claimed.account
    writes = [row.write for row in rows if row.write is not None]
    for write in writes:
        operations.append(
            products.saving(
                account, write.data, create_only=write.expected_revision is None,
                expected_revision=write.expected_revision, image_due=write.image_due,
            ).operation
        )  # fmt: skip
    operations += [categories.creating(account, c, name) for c, name in new_categories.items()]
    checked = sorted({w.data["category"] for w in writes if w.data.get("category") is not None} - set(new_categories))
    operations += [categories.exists_check(account, c) for c in checked]
    operations += _deposit_references(account, writes) + _error_puts(claimed, progress, error_items)
    return Chunk(rows, progress, new_categories, operations)


def _deposit_references(account: str, writes: list[ProductWrite]) -> list[Operation]:
    """The reference counts the chunk's writes move, one item per deposit type (store/deposits.py)."""
    deltas = {}
    for write in writes:
        after = deposits_named(write.data)
        for deposit_id in after - write.deposits_before:
            deltas[deposit_id] = deltas.get(deposit_id, 0) + 1
        for deposit_id in write.deposits_before - after:
            deltas[deposit_id] = deltas.get(deposit_id, 0) - 1
    return deposits.refs_operations(account, deltas)


def _error_puts(claimed: ClaimedImport, progress: dict, error_items: list[list[dict]]) -> list[Operation]:
    first = min(progress["error_count"], IMPORT_LISTED_ERRORS) - sum(len(group) for group in error_items)
    puts = []
    for group in error_items:
        key = keys.import_errors_key(claimed.account, claimed.id, first)
        puts.append(Operation({"Put": {"TableName": table.name(), "Item": table.to_item({**key, "errors": group})}}))
        first += len(group)
    return puts


def committed(claimed: ClaimedImport, done: Chunk) -> Committed:
    """The import as it is after the chunk committed."""
    progress = done.progress
    after = replace(claimed, next_row=progress["next_row"], stalls=0, counts={name: progress[name] for name in COUNTS})
    return Committed(len(done.rows), after, frozenset(done.new_categories))
