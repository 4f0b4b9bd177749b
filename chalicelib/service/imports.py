"""Use cases of the catalogue import (decisions §12): submit a file, read an import, run a slice of one.

A slice (run_slice) reads the categories once, then takes the rows in chunks: it maps each row, reads the
chunk's stored products in one request, validates each row with the product rules of PUT /products/:id, and
writes the chunk's changed products, its error entries and the new checkpoint in one transaction, each product
conditional on the revision read. A product changed meanwhile (a PATCH, an order marking it used) cancels the
transaction; the chunk is read and evaluated again, so nothing done meanwhile is lost.
"""
import datetime as dt
import json
import logging
import time
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass

from ..domain import catalogue_import
from ..domain.catalogue_import import ImportStatus, Outcome, RowError
from ..domain.errors import NotFound, UnsupportedMediaType, ValidationFailed
from ..domain.identifiers import is_identifier
from ..domain.product import validate_product
from ..store import imports
from ..store import product_images, table
from ..store.events import iso
from ..store.paging import Page
from .paging import paged
from . import clock

log = logging.getLogger("supplier-ordering.imports")

CHUNK_ROWS = imports.MAX_TRANSACTION_ITEMS - 2  # with the checkpoint and the error entries, one transaction
CHUNK_BYTES = 3_000_000  # TransactWriteItems takes at most 4 MB
CHUNK_SECONDS = 5.0  # the longest a chunk may take; no chunk starts with less time than this left
MAX_STALLS = 5  # claims in a row without progress before the import is failed
# What the file cannot express: kept from the stored product (decisions §12).
KEPT_FIELDS = ("delivery_days", "delivery_date_overrides", "dates_with_no_delivery", "pricing")
ORDER = ("id", "status", "dry_run", "rows", "processed", *imports.COUNTS[:4], "categories_created", "error_count")


def view(record: dict, errors: list[dict] | None = None) -> dict:
    """The import as the API shows it, fields in a fixed order."""
    body = {name: record.get(name, 0) for name in ORDER}
    body.update(id=record["id"], status=record["status"], dry_run=bool(record["dry_run"]))
    body["processed"] = record.get("next_row", 0)
    body["submitted_at"] = record["submitted_at"]
    for optional in ("finished_at", "reason"):
        if record.get(optional) is not None:
            body[optional] = record[optional]
    if errors is not None:  # stored maps come back in any order; show row, column, message
        body["errors"] = [{"row": e["row"], "column": e["column"], "message": e["message"]} for e in errors]
    return table.plain(body)


def submit(account: str, body: bytes, charset: str | None, dry_run: bool) -> dict:
    """Queue the import of a CSV file (sent as text/csv, in `charset` if given)."""
    try:
        parsed = catalogue_import.parse(body, charset)
    except catalogue_import.UnknownCharset:
        raise UnsupportedMediaType(f"charset {charset} is not supported: use utf-8 or latin1 (iso-8859-1)") from None
    rows = [json.dumps(r.as_json(), ensure_ascii=False, separators=(",", ":")) for r in parsed.records]
    pieces, starts = imports.split_pieces(rows)
    now = clock.now()
    record = {
        "id": imports.new_import_id(now),
        "status": ImportStatus.RUNNING.value,
        "dry_run": dry_run,
        "rows": len(rows),
        "submitted_at": iso(now),
        "encoding": parsed.encoding,
        "delimiter": parsed.delimiter,
        "piece_starts": starts,
        "categories_ready": False,
    }
    imports.create(account, record, pieces, now)
    return view({**record, "next_row": 0}, [])


def get_import(account: str, import_id: str) -> dict:
    record = imports.get(account, import_id) if is_identifier(import_id) else None
    if record is None:
        raise NotFound(f"import {import_id} does not exist")
    return view(record, imports.listed_errors(account, import_id, catalogue_import.MAX_LISTED_ERRORS))


@paged
def list_imports(account: str, limit: int, cursor: str | None) -> Page:
    page = imports.list_page(account, limit, cursor)
    return Page([view(item) for item in page.items], page.cursor)


# --- running an import ---------------------------------------------------------------------------------------


class Rows:
    """The file's rows, read piece by piece as the import reaches them."""

    def __init__(self, claimed: dict):
        self.account, self.id = claimed["account"], claimed["id"]
        self.starts = [int(s) for s in claimed["piece_starts"]]
        self.total = int(claimed["rows"])
        self.loaded: dict[int, list[catalogue_import.Record]] = {}

    def _load(self, numbers: list[int]) -> None:
        wanted = [n for n in numbers if n not in self.loaded]
        if not wanted:
            return
        found = imports.pieces(self.account, self.id, wanted)
        missing = set(wanted) - set(found)
        if missing:
            raise LookupError(f"rows of the file are missing (pieces {sorted(missing)})")
        for n, text in found.items():
            self.loaded[n] = [catalogue_import.Record.from_json(row) for row in json.loads(text)]

    def _piece_of(self, index: int) -> int:
        return max(n for n, start in enumerate(self.starts) if start <= index)

    def take(self, start: int, count: int) -> list[catalogue_import.Record]:
        end = min(start + count, self.total)
        if start >= end:
            return []
        numbers = list(range(self._piece_of(start), self._piece_of(end - 1) + 1))
        self._load(numbers)
        records = [record for n in numbers for record in self.loaded[n]]
        offset = self.starts[numbers[0]]
        return records[start - offset : end - offset]

    def all(self) -> list[catalogue_import.Record]:
        return self.take(0, self.total)


@dataclass
class RowResult:
    outcome: Outcome
    errors: list[RowError]
    write: imports.ProductWrite | None = None
    size: int = 0


def _same(stored: dict, data: dict) -> bool:
    return table.json_numbers(stored) == table.json_numbers(data)


def _with_kept_fields(body: dict, existing: imports.Existing | None) -> dict:
    if existing is None:
        return body
    stored = table.json_numbers(existing.product.data)
    merged = {**body, **{name: stored[name] for name in KEPT_FIELDS if name in stored}}
    image = stored.get("image")
    if image and body.get("image", {}).get("url") == image["url"]:
        merged["image"] = image  # the same picture: its etag and last_modified stay
    return merged


def _image_due(data: dict, existing: imports.Existing | None, now: dt.datetime) -> dt.datetime | None:
    """Queue the image for download (now) when it is new or its last download did not succeed; keep it (None)
    otherwise."""
    if "image" in data and existing is not None:
        before = existing.product.data.get("image") or {}
        if before.get("url") == data["image"]["url"] and existing.image_status != product_images.FAILED:
            return None
    return now


def _evaluate(account: str, records: list[catalogue_import.Record], plan: catalogue_import.CategoryPlan, now: dt.datetime) -> list[RowResult]:
    mapped = [catalogue_import.map_record(record) for record in records]
    ids = [row.product_id for row in mapped if row.body is not None and is_identifier(row.product_id)]
    existing = imports.stored_products(account, ids) if ids else {}
    results = []
    for row in mapped:
        if row.body is None:
            results.append(RowResult(Outcome.INVALID, row.errors))
            continue
        body = dict(row.body)
        category = plan.resolve(row.category)
        if category is None and row.category.name is not None:
            message = plan.refused.get(row.category.name.strip(), "does not name a category")
            results.append(RowResult(Outcome.INVALID, [RowError(row.line, catalogue_import.CATEGORY_NAME, message)]))
            continue
        if category is not None:
            if not plan.exists(category):
                error = RowError(row.line, catalogue_import.CATEGORY_ID, "does not name an existing category")
                results.append(RowResult(Outcome.INVALID, [error]))
                continue
            body["category"] = category
        current = existing.get(row.product_id)
        try:
            data = validate_product(_with_kept_fields(body, current))
        except ValidationFailed as failed:
            results.append(RowResult(Outcome.INVALID, catalogue_import.row_errors(row.line, failed)))
            continue
        if current is not None and _same(current.product.data, data):
            results.append(RowResult(Outcome.UNCHANGED, []))
            continue
        image_due = _image_due(data, current, now)
        write = imports.ProductWrite(data, current.product.revision if current else None, image_due)
        outcome = Outcome.UPDATED if current else Outcome.CREATED
        results.append(RowResult(outcome, [], write, len(table.json_text(data).encode())))
    return results


def _fitting(results: list[RowResult]) -> list[RowResult]:
    """The longest prefix whose writes fit one transaction (at least one row)."""
    size = 0
    for count, result in enumerate(results):
        size += result.size
        if count and size > CHUNK_BYTES:
            return results[:count]
    return results


def _progress(claimed: dict, results: list[RowResult]) -> tuple[dict, list[dict]]:
    progress = {name: int(claimed.get(name, 0)) for name in imports.COUNTS}
    progress["next_row"] = int(claimed["next_row"]) + len(results)
    stored_errors = []
    for result in results:
        progress[result.outcome.value] += 1
        for error in result.errors:
            if progress["error_count"] < catalogue_import.MAX_LISTED_ERRORS:
                stored_errors.append(error.as_dict())
            progress["error_count"] += 1
    return progress, stored_errors


def _categories(claimed: dict, rows: Rows) -> dict | None:
    """Once per import: find every row's category and create the missing ones (none in a dry run).

    Returns the progress to record, or None when a category was created meanwhile by someone else."""
    plan = catalogue_import.CategoryPlan.of(imports.categories(claimed["account"]))
    for record in rows.all():
        mapped = catalogue_import.map_record(record)
        if mapped.body is not None:
            plan.resolve(mapped.category)
    if not claimed["dry_run"] and plan.created:
        new = {category_id: name for name, category_id in plan.created.items()}
        if not imports.create_categories(claimed["account"], new):
            return None
    return {"categories_ready": True, "categories_created": len(plan.created), "next_row": int(claimed["next_row"])}


def _advance(claimed: dict, progress: dict) -> dict:
    return {**claimed, **progress, "stalls": 0}


def run_slice(claimed: dict, deadline: dt.datetime, now: dt.datetime | None = None) -> str:
    """Work on one claimed import until it is done or `deadline` (a moment of the clock) is near.

    Returns "done", "failed", "paused" (given back to the queue) or "lost" (another job took it over)."""
    account = claimed["account"]
    now = now or clock.now()
    if int(claimed.get("stalls", 0)) > MAX_STALLS:
        reason = f"processing stopped at row {int(claimed['next_row']) + 1} of the file repeatedly"
        imports.finish(claimed, ImportStatus.FAILED.value, now, reason)
        return "failed"
    rows = Rows(claimed)
    try:
        if not claimed.get("categories_ready"):
            for _ in range(imports.WRITE_ATTEMPTS):
                progress = _categories(claimed, rows)
                if progress is not None:
                    break
            else:
                raise RuntimeError("categories kept changing while the import created its own")
            if not isinstance(imports.commit(claimed, [], progress, []), imports.Committed):
                return "lost"
            claimed = _advance(claimed, progress)
        plan = catalogue_import.CategoryPlan.of(imports.categories(account))
        with ThreadPoolExecutor(max_workers=1) as ahead:
            upcoming = None
            while int(claimed["next_row"]) < rows.total:
                if clock.after(CHUNK_SECONDS) > deadline:
                    imports.release(claimed, clock.now())
                    return "paused"
                outcome, upcoming = _chunk(claimed, rows, plan, now, ahead, upcoming)
                if outcome is None:
                    return "lost"
                claimed = outcome
    except LookupError as error:
        imports.finish(claimed, ImportStatus.FAILED.value, clock.now(), str(error))
        return "failed"
    imports.delete_pieces(account, claimed["id"], len(rows.starts))
    imports.finish(claimed, ImportStatus.DONE.value, clock.now())
    return "done"


def _chunk(claimed: dict, rows: Rows, plan: catalogue_import.CategoryPlan, now: dt.datetime, ahead: Executor, upcoming):
    """Evaluate and commit the next chunk of rows: (the import record after it, or None if the lease was lost;
    the evaluation of the chunk after it, started while this one is written)."""
    start = int(claimed["next_row"])

    def evaluate(first: int) -> list[RowResult]:
        return _fitting(_evaluate(claimed["account"], rows.take(first, CHUNK_ROWS), plan, now))

    results = upcoming[1].result() if upcoming and upcoming[0] == start else evaluate(start)
    upcoming = None
    for attempt in range(imports.WRITE_ATTEMPTS):
        progress, errors = _progress(claimed, results)
        following = progress["next_row"]
        if upcoming is None and following < rows.total:
            rows.take(following, CHUNK_ROWS)  # load its piece here: Rows is not shared between threads
            # The next chunk holds other products (an id seen twice is an invalid row), so reading and checking
            # it while this chunk is written changes nothing; its own write is conditional like every other.
            upcoming = (following, ahead.submit(evaluate, following))
        writes = [] if claimed["dry_run"] else [r.write for r in results if r.write is not None]
        outcome = imports.commit(claimed, writes, progress, errors)
        if isinstance(outcome, imports.Committed):
            return _advance(claimed, progress), upcoming
        if isinstance(outcome, imports.LostLease):
            return None, None
        log.info("import %s: rows from %s changed while being imported; reading them again", claimed["id"], start)
        time.sleep(min(0.02 * 2**attempt, 0.5))
        if upcoming:
            upcoming[1].result()  # one evaluation at a time: they share the category plan
        results = evaluate(start)
        if upcoming and upcoming[0] != start + len(results):
            upcoming = None
    raise RuntimeError(f"products kept changing while rows from {start + 1} were imported")


LEASE_MARGIN = dt.timedelta(seconds=60)  # past the slice's deadline, before another job may take over


def due_imports(limit: int) -> list[dict]:
    """Imports waiting for a slice whose time has come, earliest first (at most `limit` per queue shard)."""
    return imports.due(clock.now(), limit)


def advance(item: dict, until: dt.datetime) -> str:
    """One slice of a queued import: claim it, work on it until `until`, give it back (or finish it).
    Returns "done", "failed", "paused", "lost" or "claimed_elsewhere"."""
    claimed = imports.claim(item, until + LEASE_MARGIN)
    if claimed is None:
        return "claimed_elsewhere"
    return run_slice(claimed, until)

