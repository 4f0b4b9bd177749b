"""The import's store on moto and DynamoDB Local: pieces, the queue and lease, and the chunk transaction whose
product writes are conditional on what was read (decisions §12)."""

import datetime as dt

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.service import deposits as deposit_uses
from chalicelib.service import importing
from chalicelib.store import categories, feed, import_chunks, import_items, outcomes, products, table
from chalicelib.store.unit_of_work import unit_of_work
from tests.store.conftest import ACCOUNT, committed, sample_product, save_product

NOW = dt.datetime(2026, 5, 4, 10, 0, tzinfo=dt.timezone.utc)


def create(account: str, record: dict, rows: list, now: dt.datetime) -> None:
    """The import queued as the submit use case writes it: its rows, then its item in a unit of work."""
    starts = import_items.storing_rows(account, record["id"], rows)
    with unit_of_work(account, now) as uow:
        uow.add(import_items.queuing(account, record, len(rows), starts, now))
        assert uow.commit() is None


def queued(engine, rows=(), dry_run=False) -> import_items.QueuedImport:
    record = {"id": import_items.new_import_id(NOW), "status": "RUNNING", "dry_run": dry_run,
              "submitted_at": "2026-05-04T10:00:00.000Z"}  # fmt: skip
    create(ACCOUNT, record, list(rows), NOW)
    [item] = import_items.due(NOW + dt.timedelta(seconds=1), 10)
    return item


def claimed(engine, **kw) -> import_items.ClaimedImport:
    found = import_items.claim(queued(engine, **kw), NOW + dt.timedelta(minutes=1))
    assert isinstance(found, import_items.ClaimedImport)
    return found


def raw(import_id: str) -> dict:
    """The import item as stored, keys and lease included (the store hands them to no one)."""
    key = table.to_item(import_items.keys.import_key(ACCOUNT, import_id))
    return table.from_item(table.client().get_item(TableName=table.name(), Key=key, ConsistentRead=True)["Item"])


def write_of(stored: products.StoredProduct | None, data: dict) -> import_chunks.ProductWrite:
    return import_chunks.ProductWrite(data, stored.revision if stored else None)


def created(data: dict, stored=None, **kw) -> import_chunks.ChunkRow:
    return import_chunks.ChunkRow("updated" if stored else "created", write=write_of(stored, data), **kw)


def test_rows_are_stored_in_pieces_below_the_item_limit(engine):
    rows = [[n, {"Item ID": f"p{n}", "Description": "x" * 5000}, None] for n in range(200)]
    pieces, starts = import_items.split_pieces([table.json_text(row) for row in rows])
    assert len(pieces) > 1 and all(len(p.encode()) <= import_items.PIECE_BYTES for p in pieces)
    item = claimed(engine, rows=rows)
    assert item.piece_starts == tuple(starts) and item.rows == 200
    reader = import_items.RowReader(item)
    assert reader.take(0, 200) == rows and reader.take(150, 100) == rows[150:]
    reader.delete()
    try:
        import_items.RowReader(item).take(0, 1)
        raise AssertionError("the rows are gone")
    except import_items.RowsMissing as error:
        assert "missing" in str(error)


PRODUCT_EVENTS = ["product.created", "product.updated", "product.deleted", "category.created"]


def events_of(account: str) -> list[dict]:
    found, request = [], {
        "TableName": table.name(), "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": table.values(pk=import_items.keys.events_pk(account)),
    }  # fmt: skip
    while True:
        response = table.client().query(**request)
        found += [table.from_item(item) for item in response["Items"]]
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def test_a_chunk_commits_its_products_errors_and_checkpoint_together(engine, drinks):
    # Every product event selected: a written row adds only its change's mark to its product's item; the stream's
    # numbering puts the entries and events, in transactions of its own (issue 24 point 1).
    table.client().transact_write_items(TransactItems=[feed.selecting(ACCOUNT, PRODUCT_EVENTS).item])  # as a PUT
    job = claimed(engine, rows=[[n] for n in range(49)])
    rows = [created(sample_product(f"p{n:03d}")) for n in range(48)]
    errors = [{"row": 2, "column": "Price", "message": "must be a decimal number"}]
    outcome = importing.commit_chunk(job, rows + [import_chunks.ChunkRow("invalid", errors)], NOW)
    # 48 products with their marks, the category's check, the error item and the checkpoint: 51 items.
    assert isinstance(outcome, import_chunks.Committed) and outcome.rows == 49
    record = import_items.get(ACCOUNT, job.id)
    assert (record["next_row"], record["created"], record["invalid"], record["error_count"]) == (49, 48, 1, 1)
    assert len(import_chunks.stored_products(ACCOUNT, [f"p{n:03d}" for n in range(48)])) == 48
    assert import_items.listed_errors(ACCOUNT, job.id, 10) == errors
    made = events_of(ACCOUNT)
    assert sorted(e["resource_id"] for e in made) == [f"p{n:03d}" for n in range(48)]
    assert {e["type"] for e in made} == {"product.created"}
    assert sorted(int(e["sequence"]) for e in made) == list(range(2, 50))  # one event per entry (1: the category)


def test_a_product_changed_since_it_was_read_cancels_the_chunk(engine, drinks):
    save_product(ACCOUNT, sample_product("cola"), now=NOW)
    save_product(ACCOUNT, sample_product("fanta"), now=NOW)
    read = import_chunks.stored_products(ACCOUNT, ["cola", "fanta"])
    save_product(ACCOUNT, sample_product("fanta", name="Fanta patched"), now=NOW)  # a PATCH in between
    job = claimed(engine, rows=[[0], [1]])
    rows = [created(sample_product("cola", price=5), read["cola"].product),
            created(sample_product("fanta", price=5), read["fanta"].product)]  # fmt: skip
    assert importing.commit_chunk(job, rows, NOW) == outcomes.Stale()
    assert products.get(ACCOUNT, "cola").data["price"] == 2  # nothing of the chunk was written
    assert products.get(ACCOUNT, "fanta").data["name"] == "Fanta patched"
    assert import_items.get(ACCOUNT, job.id)["next_row"] == 0


def test_a_product_created_meanwhile_cancels_its_creation(engine, drinks):
    job = claimed(engine, rows=[[0]])
    save_product(ACCOUNT, sample_product("cola"), now=NOW)
    assert importing.commit_chunk(job, [created(sample_product("cola", price=9))], NOW) == outcomes.Stale()
    assert products.get(ACCOUNT, "cola").data["price"] == 2


def test_a_category_deleted_between_read_and_write_cancels_the_chunk(engine, drinks):
    job = claimed(engine, rows=[[0]])
    committed(
        ACCOUNT, categories.deleting(ACCOUNT, drinks), changes=[Change(ChangeType.CATEGORY_DELETED, drinks)]
    )  # after the chunk read it, before it is written
    assert importing.commit_chunk(job, [created(sample_product("cola"))], NOW) == outcomes.Stale()
    assert products.get(ACCOUNT, "cola") is None and import_items.get(ACCOUNT, job.id)["next_row"] == 0


def test_a_chunk_creates_the_categories_its_products_need_and_counts_them_once(engine):
    job = claimed(engine, rows=[[0], [1], [2]])
    beer = ("beer", "Beer")
    rows = [created(sample_product(p, category="beer"), new_category=beer) for p in ("b1", "b2")]
    # An account without its count of categories yet (decisions §4): the chunk writes nothing and is evaluated
    # again, and the evaluation (categories.held, when a row needs a new category) keeps the count.
    assert importing.commit_chunk(job, rows + [import_chunks.ChunkRow("invalid", [])], NOW) == outcomes.Stale()
    assert categories.get(ACCOUNT, "beer") is None and import_items.get(ACCOUNT, job.id)["next_row"] == 0
    assert categories.held(ACCOUNT) == 0
    outcome = importing.commit_chunk(job, rows + [import_chunks.ChunkRow("invalid", [])], NOW)
    assert isinstance(outcome, import_chunks.Committed) and outcome.rows == 3
    assert categories.held(ACCOUNT) == 1
    assert categories.get(ACCOUNT, "beer") == {"id": "beer", "name": "Beer"}
    record = import_items.get(ACCOUNT, job.id)
    assert (record["created"], record["categories_created"]) == (2, 1)


def test_a_category_created_meanwhile_by_someone_else_cancels_the_chunk(engine):
    job = claimed(engine, rows=[[0]])
    committed(
        ACCOUNT,
        categories.creating(ACCOUNT, "beer", "Someone's beer"),
        changes=[Change(ChangeType.CATEGORY_CREATED, "beer")],
    )
    row = created(sample_product("b1", category="beer"), new_category=("beer", "Beer"))
    assert importing.commit_chunk(job, [row], NOW) == outcomes.Stale()
    assert categories.get(ACCOUNT, "beer")["name"] == "Someone's beer"
    assert import_items.get(ACCOUNT, job.id)["categories_created"] == 0


def test_a_dry_run_counts_but_writes_nothing(engine):
    job = claimed(engine, rows=[[0]], dry_run=True)
    row = import_chunks.ChunkRow("created", new_category=("beer", "Beer"))
    assert isinstance(importing.commit_chunk(job, [row], NOW), import_chunks.Committed)
    assert categories.get(ACCOUNT, "beer") is None
    assert import_items.get(ACCOUNT, job.id)["categories_created"] == 1


def test_error_entries_are_split_by_bytes_and_list_in_file_order(engine):
    message = "\x01" * 150  # 900 bytes of JSON each
    errors = [[{"row": n + 2, "column": "Item ID", "message": message}] for n in range(1_200)]
    job = claimed(engine, rows=[[n] for n in range(1_200)])
    done = 0
    while done < 1_200:
        outcome = importing.commit_chunk(
            job, [import_chunks.ChunkRow("invalid", e) for e in errors[done : done + 98]], NOW
        )
        assert isinstance(outcome, import_chunks.Committed)
        done, job = done + outcome.rows, outcome.claimed
    record = import_items.get(ACCOUNT, job.id)
    assert record["error_count"] == 1_200
    listed = import_items.listed_errors(ACCOUNT, job.id, 1_000)
    assert [e["row"] for e in listed] == list(range(2, 1_002))
    stored = table.client().query(
        TableName=table.name(), KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=import_items.keys.import_parts_pk(ACCOUNT, job.id)),
    )["Items"]  # fmt: skip
    assert max(len(table.json_text(table.from_item(i)).encode()) for i in stored) <= import_chunks.ERROR_ITEM_BYTES


def test_a_chunk_takes_only_what_one_transaction_holds():
    job = import_items.ClaimedImport(ACCOUNT, "import", "lease", False, 98, (0,), 0, 0, {"error_count": 0})
    rows = [created(sample_product(f"p{n}", category=f"c{n}")) for n in range(98)]
    # The checkpoint, then per row its product (its change marked on it: no item more) and its category's check:
    # 1 + 2 × 49 <= 100.
    assert import_chunks.fitting(job, rows) == 49
    big = [created(sample_product(f"p{n}", name="é" * 60_000)) for n in range(98)]
    assert import_chunks.fitting(job, big) == import_chunks.TRANSACTION_BYTES // 121_000  # bytes hold it back first
    assert import_chunks.fitting(job, big[:1]) == 1
    assert (
        import_chunks.fitting(
            job, [import_chunks.ChunkRow("invalid", [{"row": 1, "column": None, "message": "m"}])] * 200
        )
        == 200
    )  # errors share items


def test_each_deposit_type_a_chunk_names_takes_one_item_once():
    """Reference counts are one item per deposit type (store/deposits.py): counted once per chunk, however many
    rows name the type."""
    job = import_items.ClaimedImport(ACCOUNT, "import", "lease", False, 98, (0,), 0, 0, {"error_count": 0})
    base, per_row = 1 + 1, 1  # the checkpoint and the one category's check; a product (its change marked on it)

    def bottled(n, deposit):
        return created(sample_product(f"p{n}", vessel={"size": 1, "unit": "l", "deposit": deposit}))

    own = [bottled(n, f"d{n}") for n in range(98)]
    assert import_chunks.fitting(job, own) == (import_chunks.MAX_TRANSACTION_ITEMS - base) // (per_row + 1)
    shared = [bottled(n, "bottle") for n in range(98)]
    assert import_chunks.fitting(job, shared) == (import_chunks.MAX_TRANSACTION_ITEMS - base - 1) // per_row


def test_a_chunk_moves_the_reference_counts_of_the_types_it_names(engine, drinks):
    for deposit_id in ("bottle", "crate"):
        deposit_uses.save_type(ACCOUNT, deposit_id, deposit_id.title(), 10)
    job = claimed(engine, rows=[[0], [1], [2]])
    rows = [
        created(sample_product("cola", vessel={"size": 1, "unit": "l", "deposit": "bottle"})),
        created(
            sample_product(
                "fanta",
                vessel={"size": 1, "unit": "l", "deposit": "bottle"},
                bundles=[{"type": "CR", "size": 20, "deposit": "crate"}],
            )
        ),
        created(sample_product("water")),
    ]
    outcome = importing.commit_chunk(job, rows, NOW)
    assert isinstance(outcome, import_chunks.Committed) and outcome.rows == 3
    assert deposit_uses.delete_type(ACCOUNT, "bottle") == outcomes.InUse()
    assert deposit_uses.delete_type(ACCOUNT, "crate") == outcomes.InUse()
    deposit_uses.save_type(ACCOUNT, "keg", "Keg", 10)
    assert deposit_uses.delete_type(ACCOUNT, "keg") is None  # deleted between the job's read and its write
    later = importing.commit_chunk(
        outcome.claimed, [created(sample_product("beer", vessel={"size": 1, "unit": "l", "deposit": "keg"}))], NOW
    )
    assert later == outcomes.Stale()
    assert products.get(ACCOUNT, "beer", consistent=True) is None


def test_an_order_marking_a_product_used_in_between_is_kept(engine, drinks):
    save_product(ACCOUNT, sample_product("cola"), now=NOW)
    read = import_chunks.stored_products(ACCOUNT, ["cola"])["cola"].product
    from chalicelib.store import delivery_writes

    table.client().transact_write_items(TransactItems=[delivery_writes.marking_used(ACCOUNT, "cola").item])
    job = claimed(engine, rows=[[0]])
    outcome = importing.commit_chunk(job, [created(sample_product("cola", price=7), read)], NOW)
    assert isinstance(outcome, import_chunks.Committed)
    after = products.get(ACCOUNT, "cola", consistent=True)
    assert after.data["price"] == 7 and after.used is True


def test_a_job_whose_lease_was_taken_over_writes_nothing(engine, drinks):
    item = queued(engine)
    first = import_items.claim(item, NOW + dt.timedelta(seconds=30))
    [expired] = import_items.due(NOW + dt.timedelta(minutes=5), 10)
    second = import_items.claim(expired, NOW + dt.timedelta(minutes=6))
    assert (
        isinstance(first, import_items.ClaimedImport)
        and isinstance(second, import_items.ClaimedImport)
        and second.stalls == 2
    )
    assert import_items.claim(expired, NOW) == outcomes.Stale()  # the same queue entry cannot be claimed twice
    outcome = importing.commit_chunk(first, [created(sample_product("cola"))], NOW)
    assert outcome == outcomes.LostLease()
    assert products.get(ACCOUNT, "cola") is None
    assert importing.commit_chunk(first, [import_chunks.ChunkRow("invalid")], NOW) == outcomes.LostLease()
    assert import_items.release(first, NOW) == outcomes.LostLease() == import_items.finish(first, "DONE", NOW)
    assert isinstance(importing.commit_chunk(second, [import_chunks.ChunkRow("invalid")], NOW), import_chunks.Committed)
    assert import_items.get(ACCOUNT, second.id)["stalls"] == 0


def test_release_requeues_and_finish_dequeues(engine):
    job = claimed(engine)
    assert import_items.due(NOW + dt.timedelta(seconds=1), 10) == []  # leased
    assert import_items.release(job, NOW) is None
    [again] = import_items.due(NOW + dt.timedelta(seconds=1), 10)
    assert "lease" not in raw(again.id) and raw(again.id)["stalls"] == 0  # a slice that gave it back did not crash
    job = import_items.claim(again, NOW + dt.timedelta(minutes=1))
    assert import_items.finish(job, "DONE", NOW) is None
    assert import_items.due(NOW + dt.timedelta(hours=1), 10) == []
    assert import_items.get(ACCOUNT, job.id)["status"] == "DONE" and "GSI3PK" not in raw(job.id)


def test_import_ids_sort_by_time_and_list_newest_first(engine):
    first = queued(engine)
    later = import_items.new_import_id(NOW + dt.timedelta(milliseconds=5))
    assert later > first.id
    record = {"id": later, "status": "RUNNING", "dry_run": True, "submitted_at": "x"}
    create(ACCOUNT, record, [], NOW)
    page = import_items.list_page(ACCOUNT, 1, None)
    assert [i["id"] for i in page.items] == [later] and page.cursor
    assert [i["id"] for i in import_items.list_page(ACCOUNT, 1, page.cursor).items] == [first.id]
