"""Use cases of the catalogue import (decisions §12): submit a file, read an import, advance one.

submit reads the file and decides each row's category among the account's categories (domain/catalogue_import.py);
the rows are stored, then the import that queues them in a unit of work with the Idempotency-Key answer, and each row
is mapped once, when it is written. advance_import claims a due import, works on it for one slice and gives it back
(or finishes it): the lease is taken and let go only here.
A slice takes the rows in chunks: it reads the chunk's stored products and categories in one request each,
checks each row with the product rules of PUT /products/:id, and hands the chunk to the store, which writes as
many rows as one transaction holds: products (each conditional on the revision read), the categories to create
again or anew, a check that every other category still exists, error entries and the checkpoint. When a product
or a category changed meanwhile the chunk is read and evaluated again, so nothing done meanwhile is lost.
"""

import datetime as dt
import enum
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from decimal import Decimal
from functools import partial
from typing import Callable

from ..domain import catalogue_import, import_file
from ..domain.catalogue_import import ImportRow, ImportStatus, Outcome
from ..domain.errors import NotFound, UnsupportedMediaType, ValidationFailed
from ..domain.feed import Change, ChangeType, product_change
from ..domain.field_order import IMPORT_SUMMARY_FIELDS
from ..domain.identifiers import is_identifier
from ..domain.limits import CATEGORIES, IMPORT_CHUNK_SECONDS
from ..domain.product import deposits_named, validate_product
from ..domain.standing_calendar import moves_moments
from ..domain.timestamps import iso
from ..domain.values import order_by_of
from ..store import categories, import_chunks, import_items, outcomes, product_images, standing_orders
from ..store.paging import Page
from ..store.unit_of_work import unit_of_work
from . import clock, contention
from .catalogue import levels_unfit
from .idempotency import IdempotencyClaim
from .paging import paged

log = logging.getLogger("supplier-ordering.imports")

LEASE_MARGIN = dt.timedelta(seconds=60)  # past a slice's end, before another job may take the import over
WINDOW_SLACK = 8  # rows read beyond what the last chunk's transaction held, so chunks grow back when they can
MAX_STALLS = 5  # claims in a row without progress before the import is failed
WRITE_ATTEMPTS = 8  # a chunk whose products or categories changed meanwhile is evaluated again at least this often
# What the file cannot express: kept from the stored product (decisions §12).
KEPT_FIELDS = ("delivery_days", "delivery_date_overrides", "dates_with_no_delivery", "pricing")


def view(record: dict, errors: list[dict] | None = None) -> dict:
    """The import as the API shows it (http/ lists its fields in domain/field_order.py's order)."""
    body = {name: record[name] for name in IMPORT_SUMMARY_FIELDS if record.get(name) is not None}
    body.update({name: record.get(name, 0) for name in ("rows", *import_items.COUNTS)})
    body.update(dry_run=bool(record["dry_run"]), processed=record.get("next_row", 0))
    if errors is not None:
        body["errors"] = [{"row": e["row"], "column": e["column"], "message": e["message"]} for e in errors]
    return body


def submit(
    account: str, body: bytes, charset: str | None, dry_run: bool, idempotency: IdempotencyClaim | None = None
) -> dict:
    """Queue the import of a CSV file (in `charset` if given, else utf-8), with the Idempotency-Key answer in
    the same write."""
    try:
        parsed = import_file.parse(body, charset)
    except import_file.UnknownCharset:
        raise UnsupportedMediaType(
            f"charset {import_file.quoted(str(charset))} is not supported: use {import_file.CHARSET_NAMES}"
        ) from None
    plan = catalogue_import.CategoryPlan.of(categories.all_names(account))
    rows = [plan.settle(record).as_json() for record in parsed.records]
    now = clock.now()
    record = {
        "id": import_items.new_import_id(now),
        "status": ImportStatus.RUNNING.value,
        "dry_run": dry_run,
        "submitted_at": iso(now),
        "encoding": parsed.encoding,
        "delimiter": parsed.delimiter,
    }
    report = view({**record, "rows": len(rows), "next_row": 0}, [])
    starts = import_items.storing_rows(account, record["id"], rows, clock.now)
    with unit_of_work(account, now) as uow:
        uow.add(import_items.queuing(account, record, len(rows), starts, now))
        if idempotency is not None:  # in the same write: a request that dies after queueing replays, never queues
            uow.answer(idempotency.completion(report))
        refused = uow.commit()
    if refused is not None:
        contention.raise_for(refused)  # a lost claim: its rows stay unreferenced, as those of an import never queued
    return report


def get_import(account: str, import_id: str) -> dict:
    record = import_items.get(account, import_id) if is_identifier(import_id) else None
    if record is None:
        raise NotFound(f"import {import_id} does not exist")
    return view(record, import_items.listed_errors(account, import_id, import_file.MAX_LISTED_ERRORS))


@paged
def list_imports(account: str, limit: int, cursor: str | None) -> Page:
    page = import_items.list_page(account, limit, cursor)
    return Page([view(item) for item in page.items], page.cursor)


# --- running an import ---------------------------------------------------------------------------------------


def due_imports(limit: int) -> list[import_items.QueuedImport]:
    """Imports waiting for a turn now, earliest due first (at most `limit` per queue shard)."""
    return import_items.due(clock.now(), limit)


class TurnEnd(enum.StrEnum):
    """How an import's turn ended (the jobs count them by value)."""

    DONE = "done"
    FAILED = "failed"
    PAUSED = "paused"  # given back to the queue
    LOST = "lost"  # another job took it over
    CLAIMED_ELSEWHERE = "claimed_elsewhere"  # another job claimed it first
    CONTENDED = "contended"  # its rows kept changing: kept until its lease ends, then resumed (and counted a stall)


def advance_import(item: import_items.QueuedImport, until: dt.datetime) -> TurnEnd:
    """Give a due import one turn: claim it, work on it until `until` (a moment of the clock) is near, then
    give it back to the queue or finish it. The lease is claimed and let go only here."""
    now = clock.now()
    claimed = import_items.claim(item, until + LEASE_MARGIN)
    if isinstance(claimed, outcomes.Stale):
        return TurnEnd.CLAIMED_ELSEWHERE
    if claimed.stalls > MAX_STALLS:
        reason = f"processing stopped at row {claimed.next_row + 1} of the file repeatedly"
        import_items.finish(claimed, ImportStatus.FAILED.value, clock.now(), reason)
        return TurnEnd.FAILED
    rows = import_items.RowReader(claimed, clock.now)
    try:
        ran = _run(claimed, rows, now, until)
    except import_items.RowsMissing as error:
        import_items.finish(claimed, ImportStatus.FAILED.value, clock.now(), str(error))
        return TurnEnd.FAILED
    if isinstance(ran, outcomes.LostLease):
        return TurnEnd.LOST
    if isinstance(ran, outcomes.Contended):
        log.warning("rows of import %s of %s kept changing while they were imported", item.id, item.account)
        return TurnEnd.CONTENDED
    if ran.next_row < rows.total:
        import_items.release(ran, clock.now())
        return TurnEnd.PAUSED
    rows.delete()
    import_items.finish(ran, ImportStatus.DONE.value, clock.now())
    return TurnEnd.DONE


def _run(
    claimed: import_items.ClaimedImport, rows: import_items.RowReader, now: dt.datetime, until: dt.datetime
) -> import_items.ClaimedImport | outcomes.LostLease | outcomes.Contended:
    """Commit chunks until the file is done or `until` is near: the import item after them, LostLease if the
    lease was lost, Contended if a chunk's rows kept changing (_commit). The next chunk is read and checked while
    one is written: it holds other products (an id seen twice is an invalid row) and its own write is conditional
    like every other; the categories the chunk written created are no longer to be created by it."""
    window = import_chunks.MAX_CHUNK_ROWS  # rows read per chunk: about as many as the last transaction held
    with ThreadPoolExecutor(max_workers=1) as ahead:
        upcoming = None
        while claimed.next_row < rows.total:
            if clock.after(IMPORT_CHUNK_SECONDS) > until:
                return claimed
            start = claimed.next_row
            chunk = rows.take(start, window)
            if upcoming and upcoming[0] == start and upcoming[1] == len(chunk):
                evaluated = upcoming[2].result()
            else:
                evaluated = _evaluate(claimed, chunk, now)
            fits = import_chunks.fitting(claimed, evaluated)
            window = min(import_chunks.MAX_CHUNK_ROWS, fits + WINDOW_SLACK)
            upcoming = None
            if start + fits < rows.total:
                after = rows.take(start + fits, window)  # loaded here: the reader is not shared between threads
                upcoming = (start + fits, len(after), ahead.submit(_evaluate, claimed, after, now))
            outcome = _commit(claimed, evaluated, partial(_evaluate, claimed, chunk, now))
            if isinstance(outcome, (outcomes.LostLease, outcomes.Contended)):
                return outcome
            if upcoming and outcome.created:
                upcoming = (*upcoming[:2], ahead.submit(_now_existing, upcoming[2], outcome.created))
            claimed = outcome.claimed
    return claimed


def _commit(
    claimed: import_items.ClaimedImport,
    rows: list[import_chunks.ChunkRow],
    read_again: Callable[[], list[import_chunks.ChunkRow]],
) -> import_chunks.Committed | outcomes.LostLease | outcomes.Contended:
    """Commit the leading rows that fit one transaction; when something they read changed meanwhile,
    `read_again()` evaluates the same rows anew, so nothing done meanwhile is lost: at least WRITE_ATTEMPTS
    times and for as long as contention lasts (service/contention.py), then Contended."""
    tried = False

    def attempt() -> import_chunks.Committed | outcomes.Refusal:
        nonlocal rows, tried
        if tried:
            rows = read_again()
        tried = True
        return commit_chunk(claimed, rows, clock.now())

    again = (outcomes.Stale,)
    return contention.retried(attempt, again=again, minimum=WRITE_ATTEMPTS, exhausted=outcomes.Contended())


def _now_existing(evaluating: Future, created: frozenset) -> list[import_chunks.ChunkRow]:
    """An evaluation made while categories were being created, with those categories to check, not create."""
    return [
        replace(row, new_category=None) if row.new_category and row.new_category[0] in created else row
        for row in evaluating.result()
    ]


def _with_kept_fields(body: dict, existing: import_chunks.Existing | None) -> dict:
    if existing is None:
        return body
    stored = existing.product.document()
    merged = {**body, **{name: stored[name] for name in KEPT_FIELDS if name in stored}}
    image = stored.get("image")
    if image and body.get("image", {}).get("url") == image["url"]:
        merged["image"] = image  # the same picture: its etag and last_modified stay
    return _with_kept_deposits(merged, stored)


def _with_kept_deposits(merged: dict, stored: dict) -> dict:
    """The deposit of the vessel, and of each bundle whose type and size the row keeps (decisions §15)."""
    kept_vessel = (stored.get("vessel") or {}).get("deposit")
    if kept_vessel and merged.get("vessel"):
        merged["vessel"] = {**merged["vessel"], "deposit": kept_vessel}
    stored_bundles = [b for b in stored.get("bundles") or () if b.get("deposit")]
    bundles = []
    for bundle in merged.get("bundles") or ():
        same = next(
            (
                b
                for b in stored_bundles
                if b["type"] == bundle["type"] and Decimal(str(b["size"])) == Decimal(str(bundle["size"]))
            ),
            None,
        )
        bundles.append({**bundle, "deposit": same["deposit"]} if same is not None else bundle)
    if bundles:
        merged["bundles"] = bundles
    return merged


def _image_due(data: dict, existing: import_chunks.Existing | None, now: dt.datetime) -> dt.datetime | None:
    """Queue the image for download (now) when it is new or its last download did not succeed; keep it (None)
    otherwise."""
    if "image" in data and existing is not None:
        before = existing.product.data.get("image") or {}
        if before.get("url") == data["image"]["url"] and existing.image_status != product_images.FAILED:
            return None
    return now


def _category_of(target: catalogue_import.CategoryTarget, present: set[str]) -> tuple[str, bool]:
    """(the category a row's product goes into, whether the import must create it): the one the row named if it
    is still there, else the one the import would create, made again if it is gone."""
    if target.existing is not None and target.existing in present:
        return target.existing, False
    return target.create_id, target.create_id not in present


def _evaluate(claimed: import_items.ClaimedImport, stored_rows: list, now: dt.datetime) -> list[import_chunks.ChunkRow]:
    """What each row of a chunk comes to, against the products and categories as they are now."""
    account, dry_run = claimed.account, claimed.dry_run
    kept = [ImportRow.from_json(value) for value in stored_rows]
    mapped = [row.mapped() for row in kept]
    ids = [row.product_id for row in mapped if row.body is not None and is_identifier(row.product_id)]
    existing = import_chunks.stored_products(account, ids, clock.now) if ids else {}
    wanted = {c for row in kept if row.target for c in (row.target.existing, row.target.create_id) if c}
    present = categories.existing(account, sorted(wanted), clock.now) if wanted else set()
    room = _CategoryRoom(claimed)
    results = []
    for row, decided in zip(mapped, kept):
        if row.body is None:
            category = _category_of(decided.target, present)[0] if decided.target is not None else None
            errors = catalogue_import.problems(row, category)
            results.append(import_chunks.ChunkRow(Outcome.INVALID.value, [e.as_dict() for e in errors]))
            continue
        body, new_category = dict(row.body), None
        if decided.target is not None:
            body["category"], create = _category_of(decided.target, present)
            if create and not room.takes(decided):
                results.append(import_chunks.ChunkRow(Outcome.INVALID.value, [room.refusal(row).as_dict()]))
                continue
            if create:
                new_category = (decided.target.create_id, decided.target.create_name)
        current = existing.get(row.product_id)
        try:
            data = validate_product(_with_kept_fields(body, current))
        except ValidationFailed as failed:
            errors = [e.as_dict() for e in import_file.row_errors(row.line, failed, row.body)]
            results.append(import_chunks.ChunkRow(Outcome.INVALID.value, errors))
            continue
        if current is not None and current.product.same_as(data):
            results.append(import_chunks.ChunkRow(Outcome.UNCHANGED.value))
            continue
        if current is not None and order_by_of(current.product.data) != order_by_of(data):
            unfit = levels_unfit(account, row.product_id, current.product.born, order_by_of(data))
            if unfit is not None:
                error = catalogue_import.RowError(row.line, import_file.ORDER_BY, unfit)
                results.append(import_chunks.ChunkRow(Outcome.INVALID.value, [error.as_dict()]))
                continue
        outcome = Outcome.UPDATED if current else Outcome.CREATED
        if dry_run:
            # Nothing is written, so a category to create is counted once: at the first row that needs it.
            results.append(
                import_chunks.ChunkRow(outcome.value, new_category=new_category if decided.first_use else None)
            )
            continue
        before = frozenset(deposits_named(current.product.data)) if current else frozenset()
        write = import_chunks.ProductWrite(
            data,
            current.product.revision if current else None,
            _image_due(data, current, now),
            deposits_before=before,
            rules_changed=moves_moments(current.product.data if current else None, data),
        )
        results.append(import_chunks.ChunkRow(outcome.value, write=write, new_category=new_category))
    return results


class _CategoryRoom:
    """The categories an import may still create in the account (decisions §4: at most CATEGORIES), read when a row
    of the chunk first needs one. A real import's chunk takes its room in the account's count when it commits (a
    chunk evaluated with room another write took since is evaluated again); a dry run, which creates nothing,
    counts each category it would create at the row that first needs it."""

    def __init__(self, claimed: import_items.ClaimedImport):
        self.claimed, self.left, self.taken = claimed, None, set()

    def takes(self, row: ImportRow) -> bool:
        category_id = row.target.create_id
        if category_id in self.taken or (self.claimed.dry_run and not row.first_use):
            return True
        if self.left is None:
            dry = self.claimed.counts.get("categories_created", 0) if self.claimed.dry_run else 0
            self.left = CATEGORIES - categories.held(self.claimed.account) - dry
        if self.left <= 0:
            return False
        self.left -= 1
        self.taken.add(category_id)
        return True

    @staticmethod
    def refusal(row) -> import_file.RowError:
        column = import_file.CATEGORY_NAME if row.category.name is not None else import_file.CATEGORY_ID
        message = f"would be a new category, and an account holds at most {CATEGORIES:,}"
        return import_file.RowError(row.line, column, message)


def chunk_changes(chunk: import_chunks.Chunk) -> list[Change]:
    """What a chunk changes, as the feed tells it: each product written, then each category created."""
    written = [row.write for row in chunk.rows if row.write is not None]
    return [
        product_change("updated" if write.expected_revision is not None else "created", write.data["id"])
        for write in written
    ] + [Change(ChangeType.CATEGORY_CREATED, category) for category in chunk.new_categories]


def commit_chunk(
    claimed: import_items.ClaimedImport, rows: list[import_chunks.ChunkRow], now: dt.datetime
) -> import_chunks.Committed | outcomes.Stale | outcomes.LostLease:
    """Commit as many leading rows as one transaction holds (at least one), with their feed entries. LostLease: the
    checkpoint's condition, our lease; Stale: a product or category they read changed meanwhile, or an item was
    busy (the caller evaluates the rows again and retries)."""
    chunk = import_chunks.chunk(claimed, rows)
    # The account's count of categories: Full (evaluated with room another write has taken since) or Stale (no count
    # kept yet: the evaluation keeps one) make the chunk evaluated again.
    counted = categories.counting(claimed.account, len(chunk.new_categories)) if chunk.new_categories else None
    rechecking = [row for row in chunk.rows if row.write is not None and row.write.rules_changed]
    with unit_of_work(claimed.account, now) as uow:
        uow.add(*chunk.operations, counted)
        uow.add(*([standing_orders.rechecking(claimed.account, now)] if rechecking else []))
        uow.record(*chunk_changes(chunk))
        refused = uow.commit()
    if refused is None:
        return import_chunks.committed(claimed, chunk)
    return refused if isinstance(refused, outcomes.LostLease) else outcomes.Stale()
