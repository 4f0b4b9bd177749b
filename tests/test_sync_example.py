"""examples/sync.py against the app over HTTP: it mirrors the catalogue and deliveries, is killed in the middle
of a page, resumes, resynchronises in full after feed-expired, and its mirror equals the API's lists."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from chalicelib.store import feed, keys, table
from tests.api.customer_support import make_product
from tests.api.deliveries_helpers import CUSTOMER, CUSTOMER_TOKEN, place, respond, shop  # noqa: F401 - a fixture
from tests.api.http_server import serving
from tests.conftest import SUPPLIER_TOKEN

SYNC = Path(__file__).resolve().parent.parent / "examples" / "sync.py"


def run_sync(url: str, db: Path, *extra) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SYNC), "--base-url", url, "--token", SUPPLIER_TOKEN, "--db", str(db), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


def mirror(db: Path) -> dict:
    with sqlite3.connect(db) as conn:
        return {
            table_name: {row[0]: json.loads(row[1]) for row in conn.execute(f"SELECT id, doc FROM {table_name}")}
            for table_name in (
                "products",
                "categories",
                "deliveries",
                "deposits",
                "deposit_balances",
                "deposit_statements",
                "delivery_notes",
                "delivery_claims",
            )
        }


def position(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT after FROM position").fetchone()[0]


def assert_mirrors_the_lists(api, db: Path) -> None:
    found = mirror(db)
    products = api.get("/products?limit=100").data["products"]
    categories = api.get("/categories?limit=100").data["categories"]
    deliveries = api.get("/deliveries?limit=100").data["deliveries"]
    assert found["products"] == {p["id"]: p for p in products}
    assert found["categories"] == {c["id"]: c for c in categories}
    assert found["deposits"] == {d["id"]: d for d in api.get("/deposits?limit=100").data["deposits"]}
    customers = [c["id"] for c in api.get("/customers?limit=100").data["customers"]]
    balances = {c: api.get(f"/customers/{c}/deposits").data["deposits"] for c in customers}
    assert found["deposit_balances"] == {
        c: {d["id"]: d["balance"] for d in held if d["balance"]} for c, held in balances.items()
    }
    statements = {c: api.get(f"/customers/{c}/deposits/movements?limit=100").data["movements"] for c in customers}
    assert found["deposit_statements"] == {c: movements for c, movements in statements.items() if movements}
    for c, movements in found["deposit_statements"].items():  # the statement adds up to the balances
        summed = {}
        for movement in movements:
            summed[movement["id"]] = summed.get(movement["id"], 0) + movement["count"]
        assert {d: n for d, n in summed.items() if n} == found["deposit_balances"][c]
    assert {k: v["status"] for k, v in found["deliveries"].items()} == {str(d["id"]): d["status"] for d in deliveries}
    # Each delivery as its single read shows it: amended ones with their items as they stand (decisions §16).
    assert found["deliveries"] == {str(d["id"]): api.get(f"/deliveries/{d['id']}").data for d in deliveries}
    # ... and the delivery notes an invoice rests on (decisions §18), of the deliveries that have one.
    assert found["delivery_notes"] == {
        key: delivery["delivery_note"] for key, delivery in found["deliveries"].items() if "delivery_note" in delivery
    }
    # ... and the claims a credit note rests on (decisions §18), of the deliveries that have some.
    assert found["delivery_claims"] == {
        key: delivery["claims"] for key, delivery in found["deliveries"].items() if "claims" in delivery
    }
    # What it mirrored it acknowledged (decisions §14), and it mirrors the acknowledged state.
    assert {d["integration"]["status"] for d in deliveries} <= {"IMPORTED"}
    assert {k: v["integration"] for k, v in found["deliveries"].items()} == {
        str(d["id"]): d["integration"] for d in deliveries
    }
    assert api.get("/account/integration").data["pending"] == 0


def changes_in_the_middle(api) -> None:
    first = place(api, [{"id": "beer", "count": 1}])
    second = place(api, [{"id": "beer", "count": 2}])
    respond(api, first["id"], {"type": "ACCEPT"})
    api.post(f"/customer/deliveries/{second['id']}/cancel", {}, token=CUSTOMER_TOKEN)
    amended = place(api, [{"id": "beer", "count": 4}])
    body = {"items": [{"id": "beer", "count": 6}], "user": {"name": "Olli", "email": "olli@example.com"}}
    assert api.post(f"/customer/deliveries/{amended['id']}/amendments", body, token=CUSTOMER_TOKEN).status_code == 200
    api.put("/categories/snacks", {"name": "Snacks"})
    make_product(api, "chips", price=250)
    api.patch("/products/beer", {"price": 175})
    api.delete("/products/old")
    api.put("/deposits/crate", {"name": "Crate", "price": 150})
    api.post(f"/customers/{CUSTOMER}/deposits", {"id": "crate", "count": 4, "message": "opening balance"})
    api.put("/deposits/keg", {"name": "Keg", "price": 3000})
    api.patch("/products/beer", {"bundles": [{"type": "CT", "size": 24, "deposit": "crate"}]})
    third = place(
        api, [{"id": "beer", "count": 2, "bundle": {"type": "CT", "size": 24}}], empties=[{"id": "keg", "count": 1}]
    )
    respond(api, third["id"], {"type": "ACCEPT"})  # the supplier confirms the keg coming back
    api.post(f"/customer/deliveries/{third['id']}/receive", {}, token=CUSTOMER_TOKEN)
    # The driver's note on the accepted delivery: nothing of it came; and one with two empty crates collected.
    noted = api.post(
        f"/deliveries/{first['id']}/delivery-note",
        {"number": "LS-1", "items": [{"id": "beer", "count": 0, "reason": "OUT_OF_STOCK"}]},
    )
    assert noted.status_code == 200, noted.data
    fourth = place(api, [{"id": "beer", "count": 2, "bundle": {"type": "CT", "size": 24}}])
    assert (
        api.post(
            f"/deliveries/{fourth['id']}/delivery-note", {"number": "LS-2", "empties": [{"id": "crate", "count": 2}]}
        ).status_code
        == 200
    )
    # The bar claims a broken crate of the fourth and withdraws a second claim; the supplier answers the first.
    path = f"/customer/deliveries/{fourth['id']}/claims"
    for issue in ("DAMAGED", "OTHER"):
        line = {"id": "beer", "issue": issue, "count": 1}
        assert api.post(path, {"items": [line]}, token=CUSTOMER_TOKEN).status_code == 200
    answer = {"items": [{"id": "beer", "accepted": 1, "resolution": "CREDIT"}]}
    assert api.post(f"/deliveries/{fourth['id']}/claims/1/answer", answer).status_code == 200
    assert api.post(f"{path}/2/withdraw", token=CUSTOMER_TOKEN).status_code == 200


def test_sync_mirrors_resumes_after_a_kill_and_resyncs_after_feed_expired(shop, tmp_path):
    db = tmp_path / "erp.sqlite"
    placed = place(shop, [{"id": "beer", "count": 3}])  # PENDING: the full read mirrors and acknowledges it
    with serving() as url:
        first = run_sync(url, db)
        assert first.returncode == 0, first.stderr
        assert_mirrors_the_lists(shop, db)
        assert shop.get(f"/deliveries/{placed['id']}").data["integration"]["status"] == "IMPORTED"
        started_at = position(db)

        changes_in_the_middle(shop)
        killed = run_sync(url, db, "--die-after", "3")
        assert killed.returncode == 137, killed.stderr  # died in the middle of a page
        assert position(db) == started_at  # the page was not half applied

        shop.put("/categories/snacks", {"name": "Crisps and snacks"})
        resumed = run_sync(url, db)
        assert resumed.returncode == 0, resumed.stderr
        assert position(db) == feed.read_head("acme").sequence
        assert_mirrors_the_lists(shop, db)

        # Entries the mirror never read expire (TTL): it resynchronises in full, then follows.
        held = position(db)
        make_product(shop, "nuts", price=300)
        shop.patch("/products/chips", {"price": 260})
        table.client().delete_item(TableName=table.name(), Key=table.to_item(keys.feed_entry_key("acme", held + 1)))
        assert shop.get(f"/changes?after={held}").status_code == 410
        expired = run_sync(url, db)
        assert expired.returncode == 0, expired.stderr
        assert position(db) == feed.read_head("acme").sequence
        assert_mirrors_the_lists(shop, db)


def test_a_webhook_previous_sequence_past_the_mirror_says_read_now(tmp_path):
    sys.path.insert(0, str(SYNC.parent))
    import sync

    db = sync.open_mirror(str(tmp_path / "m.sqlite"))
    db.execute("INSERT INTO position (id, after) VALUES (1, 7)")
    assert not sync.webhook_hint(db, {"sequence": 7, "previous_sequence": 5})  # already read
    assert sync.webhook_hint(db, {"sequence": 9, "previous_sequence": 8})  # 8 was missed
