"""The import job: bounded slices, resuming after a crash without duplicating or losing rows, retrying rows that
changed meanwhile, and taking turns between imports (decisions §12)."""

import datetime as dt
import threading

import pytest

from chalicelib.domain.limits import IMPORT_CHUNK_SECONDS
from chalicelib.jobs import import_turns
from chalicelib.service import clock, importing
from chalicelib.store import feed_marks, outcomes, products
from chalicelib.store import import_chunks as chunks
from tests.jobs.imports_support import upload

pytestmark = pytest.mark.usefixtures("fake_clock")


def run(later: dt.timedelta = dt.timedelta(0), seconds: float = 60) -> dict:
    """One run of the import job, `later` after the clock's time now, with `seconds` to work."""
    clock.current().advance(later)
    return import_turns.advance_imports(clock.after(seconds))


def catalogue(count: int, price: str = "1,50", prefix: str = "p") -> str:
    rows = "".join(f"{prefix}{n:04d};Product {n};Drinks;{price}\n" for n in range(count))
    return "Item ID;Item name;Category name;Price\n" + rows


def report(api, import_id, token=...):
    return api.get(f"/imports/products/{import_id}", token=token).data


def all_products(api):
    found, cursor = [], None
    while True:
        page = api.get("/products?limit=100" + (f"&cursor={cursor}" if cursor else "")).data
        found += page["products"]
        cursor = page.get("cursor")
        if not cursor:
            return found


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(chunks, "MAX_CHUNK_ROWS", 10)


@pytest.mark.parametrize("crash_after_write", [False, True])
def test_a_crash_mid_import_resumes_without_duplicating_or_losing_rows(
    api, small_chunks, monkeypatch, crash_after_write
):
    import_id = upload(api, catalogue(45).replace("p0007;Product 7;Drinks;1,50", "p0007;Product 7;Drinks;x"))
    commits = {"n": 0}
    original = importing.commit_chunk

    def crashing_commit(*args):
        commits["n"] += 1
        if commits["n"] == 3 and not crash_after_write:
            raise ConnectionError("the process died before writing")
        outcome = original(*args)
        if commits["n"] == 3 and crash_after_write:
            raise ConnectionError("the process died after writing, before it knew")
        return outcome

    monkeypatch.setattr(importing, "commit_chunk", crashing_commit)
    assert run()["crashed"] == 1
    midway = report(api, import_id)
    assert midway["status"] == "RUNNING" and midway["processed"] == (30 if crash_after_write else 20)
    # Nothing happens while the dead job's lease holds; after it ends, the next run resumes from the checkpoint.
    assert run()["due"] == 0
    assert run(dt.timedelta(minutes=5))["done"] == 1
    final = report(api, import_id)
    assert {
        k: final[k] for k in ("rows", "processed", "created", "updated", "unchanged", "invalid", "error_count")
    } == {"rows": 45, "processed": 45, "created": 44, "updated": 0, "unchanged": 0, "invalid": 1, "error_count": 1}
    assert final["errors"] == [
        {"row": 9, "column": "Price", "message": "must be a decimal number such as 12.90 or 12,90"}
    ]
    assert [p["id"] for p in all_products(api)] == [f"p{n:04d}" for n in range(45) if n != 7]


def test_a_row_changed_between_read_and_write_is_read_again_and_nothing_is_lost(api, small_chunks, monkeypatch):
    upload(api, catalogue(3))
    assert run()["done"] == 1
    import_id = upload(api, catalogue(3, price="2"))
    original = chunks.stored_products
    reads = {"n": 0}

    def read_then_patch(account, ids, *clock):
        found = original(account, ids, *clock)
        reads["n"] += 1
        if reads["n"] == 1:  # a PATCH lands after the import read the products
            response = api.patch("/products/p0001", {"delivery_days": {"2": {"lead_days": 1}}})
            assert response.status_code == 200
        return found

    monkeypatch.setattr(chunks, "stored_products", read_then_patch)
    assert run()["done"] == 1
    assert reads["n"] == 2  # the chunk was read again after its transaction was cancelled
    assert report(api, import_id)["updated"] == 3
    product = api.get("/products/p0001").data
    assert product["price"] == 200 and product["delivery_days"] == {"2": {"lead_days": 1}}


def test_rows_that_keep_changing_hold_the_import_until_its_lease_ends_then_it_resumes(api, small_chunks, monkeypatch):
    import_id = upload(api, catalogue(3))
    original, tries = importing.commit_chunk, {"n": 0}

    def always_stale(*args):
        tries["n"] += 1
        clock.current().advance(1)  # each lost race takes a second: the 5 s of contention end after the count
        return outcomes.Stale()

    monkeypatch.setattr(importing, "commit_chunk", always_stale)
    monkeypatch.setattr("chalicelib.service.contention.back_off", lambda attempt: None)
    summary = run()
    assert (summary["contended"], summary["crashed"], tries["n"]) == (1, 0, importing.WRITE_ATTEMPTS)
    assert report(api, import_id)["processed"] == 0
    assert run()["due"] == 0  # its lease holds, as after a crash: the stall is counted when it is claimed again
    monkeypatch.setattr(importing, "commit_chunk", original)
    assert run(dt.timedelta(minutes=5))["done"] == 1
    assert report(api, import_id)["created"] == 3


@pytest.fixture
def chunks_take_two_seconds(monkeypatch, small_chunks):
    """Each committed chunk moves the clock on by 2 s: slices end by the clock, not by the machine's speed."""
    original = importing.commit_chunk

    def commit(*args):
        outcome = original(*args)
        clock.current().advance(2)
        return outcome

    monkeypatch.setattr(importing, "commit_chunk", commit)


def test_an_import_takes_turns_with_other_accounts_imports(api, chunks_take_two_seconds):
    big = upload(api, catalogue(60))
    from tests.conftest import OTHER_TOKEN

    clock.current().advance(0.001)
    small = upload(api, catalogue(5, prefix="o"), token=OTHER_TOKEN)
    # One turn each: the big import's 10 s slice holds three chunks (2 s each, and no chunk starts with less than
    # CHUNK_SECONDS left), then the small one runs.
    summary = run(seconds=import_turns.SLICE_SECONDS + 7)  # no time for a second round
    assert summary["done"] == 1 and summary["paused"] == 1
    assert report(api, small, token=OTHER_TOKEN)["status"] == "DONE"
    assert report(api, big)["status"] == "RUNNING" and report(api, big)["processed"] == 30
    while run()["due"]:
        pass
    assert report(api, big)["created"] == 60


def test_25_large_imports_of_one_account_do_not_hold_up_anothers_small_import(api, chunks_take_two_seconds):
    """Decisions §10: work is shared between accounts, not jobs: the small import finishes in the first round,
    after one turn of the busy account (at most SLICE_SECONDS of the clock)."""
    from tests.conftest import OTHER_TOKEN

    big = [upload(api, catalogue(100, prefix=f"b{n:02d}-")) for n in range(25)]
    clock.current().advance(1)
    small = upload(api, catalogue(2, prefix="o"), token=OTHER_TOKEN)
    assert run(seconds=import_turns.SLICE_SECONDS + 2 * IMPORT_CHUNK_SECONDS)["done"] == 1
    finished = report(api, small, token=OTHER_TOKEN)
    assert finished["status"] == "DONE" and finished["created"] == 2
    waited = dt.datetime.fromisoformat(finished["finished_at"]) - dt.datetime.fromisoformat(finished["submitted_at"])
    assert waited <= dt.timedelta(
        seconds=import_turns.SLICE_SECONDS + 4
    )  # one turn of the busy account, then its own 2 s
    assert [report(api, i)["status"] for i in big] == ["RUNNING"] * 25


def test_an_import_queued_during_another_accounts_slice_goes_next(api, chunks_take_two_seconds, monkeypatch):
    """Not behind the busy account's older imports: the next round serves accounts not yet served first."""
    from tests.conftest import OTHER_TOKEN

    flood = [upload(api, catalogue(100, prefix=f"b{n}-")) for n in range(3)]
    queued, counted = {}, importing.commit_chunk

    def commit(*args):
        outcome = counted(*args)
        if not queued:  # the other account uploads while the flood's first slice runs
            queued["id"] = upload(api, catalogue(2, prefix="o"), token=OTHER_TOKEN)
        return outcome

    monkeypatch.setattr(importing, "commit_chunk", commit)
    run(seconds=import_turns.SLICE_SECONDS + 7)  # the flood's slice, then time to start one more turn
    assert report(api, queued["id"], token=OTHER_TOKEN)["status"] == "DONE"
    assert sorted(report(api, i)["processed"] for i in flood) == [0, 0, 30]  # one slice of the flood only


def test_an_import_that_keeps_crashing_its_job_fails_with_the_reason(api, monkeypatch):
    import_id = upload(api, catalogue(2))
    monkeypatch.setattr(chunks, "stored_products", lambda *a: (_ for _ in ()).throw(RuntimeError("boom")))
    for minutes in range(1, importing.MAX_STALLS + 3):
        run(dt.timedelta(minutes=2))
    final = report(api, import_id)
    assert final["status"] == "FAILED"
    assert final["reason"] == "processing stopped at row 1 of the file repeatedly"
    assert run(dt.timedelta(hours=1))["due"] == 0


def test_no_slice_starts_a_chunk_past_its_deadline(api):
    upload(api, catalogue(3))
    assert run(seconds=IMPORT_CHUNK_SECONDS / 2)["due"] == 1
    assert all_products(api) == []  # not even claimed: too little time left


def test_the_stream_wakes_the_job_for_queued_imports_only():
    from chalicelib.service.background import woken

    assert woken("INSERT", {"GSI3PK": {"S": "IMPORT#PENDING#3"}}).import_
    assert woken("INSERT", {"GSI3PK": {"S": "IMPORT#PENDING"}}).import_  # queued before the shards
    assert woken("MODIFY", {"GSI3PK": {"S": "IMPORT#PENDING#3"}}).import_  # given back after a slice
    assert not woken("MODIFY", {"GSI3PK": {"S": "IMPORT#PENDING#3"}, "lease": {"S": "t"}}).import_  # a checkpoint
    assert not woken("INSERT", {"GSI3PK": {"S": "IMAGE#PENDING#3"}}).import_


def test_a_phase_run_advances_imports_until_its_deadline(api):
    import_id = upload(api, catalogue(3))
    from chalicelib.jobs import handlers

    assert handlers.IMPORTS.run(clock.after(60))["done"] == 1
    assert report(api, import_id)["created"] == 3
    other = upload(api, catalogue(3, prefix="q"))
    assert handlers.IMPORTS.run(clock.now())["done"] == 0  # no time left: nothing is claimed
    assert report(api, other)["status"] == "RUNNING"


def test_finished_imports_leave_no_rows_behind(api):
    import_id = upload(api, catalogue(3))
    run()
    assert chunks.batch.get_items([chunks.keys.import_rows_key("acme", import_id, 0)], consistent=True) == {}
    assert products.get("acme", "p0000") is not None


def test_the_make_run_loop_runs_imports_until_stopped(api):
    import_id = upload(api, catalogue(3))
    stop = threading.Event()
    loop = threading.Thread(target=import_turns.run_forever, args=(stop,))
    loop.start()
    try:
        for _ in range(100):
            if report(api, import_id)["status"] == "DONE":
                break
            stop.wait(0.1)  # polling for a condition (bounded), not forcing an interleaving
    finally:
        stop.set()
        loop.join(timeout=10)
    assert not loop.is_alive()
    assert report(api, import_id)["created"] == 3


PRODUCT_EVENTS = ["product.created", "product.updated", "product.deleted", "category.created", "category.updated"]


def outbox(account: str = "acme") -> list[dict]:
    from chalicelib.store import keys, table

    found, request = [], {
        "TableName": table.name(), "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": table.values(pk=keys.events_pk(account)),
    }  # fmt: skip
    while True:
        response = table.client().query(**request)
        found += [table.from_item(item) for item in response["Items"]]
        if "LastEvaluatedKey" not in response:
            return [e for e in found if e.get("resource") == "product"]
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


@pytest.mark.parametrize("count", [60])
def test_an_import_with_every_product_event_selected_writes_every_row_with_one_event_each(api, count):
    settings = {"url": "http://127.0.0.1:9/hook", "events": PRODUCT_EVENTS}
    assert api.request("PUT", "/account/settings/webhooks", body=settings).status_code == 200
    import_id = upload(api, catalogue(count))
    for _ in range(20):
        if report(api, import_id)["status"] != "RUNNING":
            break
        run(seconds=600)
    done = report(api, import_id)
    assert (done["status"], done["created"], done["invalid"]) == ("DONE", count, 0)
    made = outbox()
    assert sorted(e["resource_id"] for e in made) == [f"p{n:04d}" for n in range(count)]
    assert {e["type"] for e in made} == {"product.created"}


def test_5000_rows_with_every_category_new_are_chunked_within_one_transaction_each():
    """moto copies the table on every transaction, so 5,000 rows end to end take minutes there: the chunks the
    import would commit are sized here, each with everything the feed adds (a change's mark on its item)."""
    claimed = chunks.ClaimedImport("acme", "import", "lease", False, 5_000, (0,), 0, 0, {"error_count": 0})
    rows = [
        chunks.ChunkRow(
            "created",
            write=chunks.ProductWrite(
                {"id": f"p{n}", "category": f"c{n % 700}", "name": "x", "status": "ACTIVE"}, None
            ),
            new_category=(f"c{n % 700}", "C") if n < 700 else None,
        )
        for n in range(5_000)
    ]
    start, committed = 0, 0
    while start < len(rows):
        window = rows[start : start + chunks.MAX_CHUNK_ROWS]
        chunk = chunks.chunk(claimed, window)
        changes = importing.chunk_changes(chunk)
        items = feed_marks.marked(
            "acme", "u1", [operation.item for operation in chunk.operations], changes, clock.now()
        )
        assert len(items) == len(chunk.operations) <= chunks.MAX_TRANSACTION_ITEMS  # a mark adds no item
        assert len(chunk.rows) == min(49, len(rows) - start)
        start, committed = start + len(chunk.rows), committed + 1
    # Each row a product and its category's creation or check (49 consecutive rows name 49 categories), with the
    # checkpoint: 1 + 2 × 49 <= 100 items.
    assert committed == -(-5_000 // 49) == 103
