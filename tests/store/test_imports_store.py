"""The import's store on moto and DynamoDB Local: pieces, the queue and lease, and the chunk transaction whose
product writes are conditional on what was read (decisions §12)."""
import datetime as dt

from chalicelib.store import imports, products, table
from tests.store.conftest import ACCOUNT, sample_product

NOW = dt.datetime(2026, 5, 4, 10, 0, tzinfo=dt.timezone.utc)


def queued(engine, rows=3, pieces=("[]",)) -> dict:
    record = {"id": imports.new_import_id(NOW), "status": "RUNNING", "dry_run": False, "rows": rows,
              "submitted_at": "2026-05-04T10:00:00.000Z", "piece_starts": [0], "categories_ready": True}  # fmt: skip
    imports.create(ACCOUNT, record, list(pieces), NOW)
    [item] = imports.due(NOW + dt.timedelta(seconds=1), 10)
    return item


def claimed(engine, **kw) -> dict:
    found = imports.claim(queued(engine, **kw), NOW + dt.timedelta(minutes=1))
    assert found is not None
    return found


def write_of(stored: products.StoredProduct | None, data: dict) -> imports.ProductWrite:
    return imports.ProductWrite(data, stored.revision if stored else None)


def progress(claimed_import, **counts):
    return {"next_row": int(claimed_import["next_row"]) + 1, "created": 0, "updated": 0, **counts}


def test_rows_are_stored_in_pieces_below_the_item_limit(engine):
    rows = [f'[{n},{{"Item ID":"p{n}","Description":"{"x" * 5000}"}},null]' for n in range(200)]
    pieces, starts = imports.split_pieces(rows)
    assert len(pieces) > 1 and all(len(p.encode()) <= imports.PIECE_BYTES for p in pieces)
    assert starts[0] == 0 and starts == sorted(starts)
    item = queued(engine, rows=200, pieces=pieces)
    found = imports.pieces(ACCOUNT, item["id"], list(range(len(pieces))))
    assert [found[n] for n in range(len(pieces))] == pieces
    imports.delete_pieces(ACCOUNT, item["id"], len(pieces))
    assert imports.pieces(ACCOUNT, item["id"], [0]) == {}


def test_a_chunk_commits_its_products_errors_and_checkpoint_together(engine, drinks):
    job = claimed(engine)
    writes = [write_of(None, sample_product(f"p{n:03d}")) for n in range(98)]
    errors = [{"row": 2, "column": "Price", "message": "must be a decimal number"}]
    assert isinstance(imports.commit(job, writes, progress(job, created=98, error_count=1), errors), imports.Committed)
    stored = imports.stored_products(ACCOUNT, [f"p{n:03d}" for n in range(98)])
    assert len(stored) == 98
    record = imports.get(ACCOUNT, job["id"])
    assert (record["next_row"], record["created"], record["error_count"]) == (1, 98, 1)
    assert imports.listed_errors(ACCOUNT, job["id"], 10) == errors


def test_a_product_changed_since_it_was_read_cancels_the_chunk(engine, drinks):
    products.save(ACCOUNT, sample_product("cola"))
    products.save(ACCOUNT, sample_product("fanta"))
    read = imports.stored_products(ACCOUNT, ["cola", "fanta"])
    products.save(ACCOUNT, sample_product("fanta", name="Fanta patched"))  # a PATCH in between
    job = claimed(engine)
    writes = [write_of(read["cola"].product, sample_product("cola", price=5)),
              write_of(read["fanta"].product, sample_product("fanta", price=5))]  # fmt: skip
    assert imports.commit(job, writes, progress(job, updated=2), []) == imports.Conflicts([1])
    assert products.get(ACCOUNT, "cola").data["price"] == 2  # nothing of the chunk was written
    assert products.get(ACCOUNT, "fanta").data["name"] == "Fanta patched"
    assert imports.get(ACCOUNT, job["id"])["next_row"] == 0


def test_a_product_created_meanwhile_cancels_its_creation(engine, drinks):
    job = claimed(engine)
    products.save(ACCOUNT, sample_product("cola"))
    outcome = imports.commit(job, [write_of(None, sample_product("cola", price=9))], progress(job, created=1), [])
    assert outcome == imports.Conflicts([0])
    assert products.get(ACCOUNT, "cola").data["price"] == 2


def test_an_order_marking_a_product_used_in_between_is_kept(engine, drinks):
    products.save(ACCOUNT, sample_product("cola"))
    read = imports.stored_products(ACCOUNT, ["cola"])["cola"].product
    table.client().transact_write_items(TransactItems=[products.mark_used_operation(ACCOUNT, "cola")])
    job = claimed(engine)
    outcome = imports.commit(job, [write_of(read, sample_product("cola", price=7))], progress(job, updated=1), [])
    assert outcome == imports.Committed()
    after = products.get(ACCOUNT, "cola", consistent=True)
    assert after.data["price"] == 7 and after.used is True


def test_a_job_whose_lease_was_taken_over_writes_nothing(engine, drinks):
    item = queued(engine)
    first = imports.claim(item, NOW + dt.timedelta(seconds=30))
    [expired] = imports.due(NOW + dt.timedelta(minutes=5), 10)
    second = imports.claim(expired, NOW + dt.timedelta(minutes=6))
    assert first is not None and second is not None and second["stalls"] == 2
    assert imports.claim(expired, NOW) is None  # the same queue entry cannot be claimed twice
    outcome = imports.commit(first, [write_of(None, sample_product("cola"))], progress(first, created=1), [])
    assert outcome == imports.LostLease()
    assert products.get(ACCOUNT, "cola") is None
    assert imports.commit(first, [], progress(first), []) == imports.LostLease()
    assert not imports.release(first, NOW) and not imports.finish(first, "DONE", NOW)
    assert imports.commit(second, [], progress(second), []) == imports.Committed()
    assert imports.get(ACCOUNT, second["id"])["stalls"] == 0


def test_release_requeues_and_finish_dequeues(engine):
    job = claimed(engine)
    assert imports.due(NOW + dt.timedelta(seconds=1), 10) == []  # leased
    assert imports.release(job, NOW)
    [again] = imports.due(NOW + dt.timedelta(seconds=1), 10)
    assert "lease" not in again and again["stalls"] == 0  # a slice that gave it back did not crash
    job = imports.claim(again, NOW + dt.timedelta(minutes=1))
    assert imports.finish(job, "DONE", NOW)
    assert imports.due(NOW + dt.timedelta(hours=1), 10) == []
    record = imports.get(ACCOUNT, job["id"])
    assert record["status"] == "DONE" and "GSI3PK" not in record


def test_categories_are_created_only_where_missing(engine):
    assert imports.create_categories(ACCOUNT, {"beer": "Beer", "wine": "Wine"})
    assert imports.categories(ACCOUNT) == {"beer": "Beer", "wine": "Wine"}
    assert not imports.create_categories(ACCOUNT, {"beer": "Other beer"})
    assert imports.categories(ACCOUNT)["beer"] == "Beer"


def test_import_ids_sort_by_time_and_list_newest_first(engine):
    first = queued(engine)
    later = imports.new_import_id(NOW + dt.timedelta(milliseconds=5))
    assert later > first["id"]
    record = {"id": later, "status": "RUNNING", "dry_run": True, "rows": 0, "submitted_at": "x", "piece_starts": []}
    imports.create(ACCOUNT, record, [], NOW)
    page = imports.list_page(ACCOUNT, 1, None)
    assert [i["id"] for i in page.items] == [later] and page.cursor
    assert [i["id"] for i in imports.list_page(ACCOUNT, 1, page.cursor).items] == [first["id"]]
