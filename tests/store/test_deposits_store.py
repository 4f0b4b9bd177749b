"""Deposit types and balances in the table (store/deposits.py), on moto and on DynamoDB Local: the reference
counts that keep a named type from being deleted, and balances that add up under concurrent writes."""

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest

from chalicelib.service import catalogue
from chalicelib.service import deposits as deposit_uses
from chalicelib.store import deposits, keys, outcomes, products, table
from tests.store.conftest import ACCOUNT, NOW, sample_product, save_product
from tests.unit_of_work import fake_commits


def bottled(product_id="cola", deposit="bottle"):
    return sample_product(product_id, vessel={"size": Decimal("1.5"), "unit": "l", "deposit": deposit})


def references(deposit_id):
    """The type's reference count as stored in its own item; None when the item does not exist."""
    found = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.deposit_type_key(ACCOUNT, deposit_id)), ConsistentRead=True
    )
    return int(found["Item"]["refs"]["N"]) if "Item" in found else None


def test_types_are_created_changed_and_counted(engine):
    assert deposit_uses.save_type(ACCOUNT, "bottle", "Bottle", 8) == {"id": "bottle", "name": "Bottle", "price": 8}
    assert deposit_uses.save_type(ACCOUNT, "crate", "Crate", 150) == {"id": "crate", "name": "Crate", "price": 150}
    assert deposit_uses.save_type(ACCOUNT, "crate", "Crate", 160)["price"] == 160
    assert deposits.read_types(ACCOUNT, consistent=True) == {
        "bottle": {"name": "Bottle", "price": 8},
        "crate": {"name": "Crate", "price": 160},
    }


def test_a_named_type_stays_until_no_product_names_it(engine, drinks):
    deposit_uses.save_type(ACCOUNT, "bottle", "Bottle", 8)
    assert references("bottle") == 0
    assert isinstance(save_product(ACCOUNT, bottled("cola"), now=NOW, create_only=True), str)
    assert isinstance(save_product(ACCOUNT, bottled("fanta"), now=NOW, create_only=True), str)
    assert references("bottle") == 2
    assert deposit_uses.delete_type(ACCOUNT, "bottle") == outcomes.InUse()
    assert catalogue.remove_product(ACCOUNT, "cola") is None
    revision = products.get(ACCOUNT, "fanta", consistent=True).revision
    saved = save_product(
        ACCOUNT, sample_product("fanta"), now=NOW, expected_revision=revision, deposits_before=frozenset({"bottle"})
    )
    assert isinstance(saved, str)
    assert references("bottle") == 0
    assert deposit_uses.delete_type(ACCOUNT, "bottle") is None
    assert references("bottle") is None  # its own item goes with it
    assert deposit_uses.delete_type(ACCOUNT, "bottle") == outcomes.Gone()


def test_a_product_naming_a_type_deleted_after_its_read_is_not_written(engine, drinks):
    deposit_uses.save_type(ACCOUNT, "bottle", "Bottle", 8)
    deposit_uses.save_type(ACCOUNT, "crate", "Crate", 150)
    assert deposit_uses.delete_type(ACCOUNT, "bottle") is None  # between the service's check and its write
    assert save_product(ACCOUNT, bottled("cola"), now=NOW, create_only=True) == outcomes.Stale()
    assert products.get(ACCOUNT, "cola", consistent=True) is None


def test_concurrent_adjustments_of_one_customer_all_count(engine):
    if engine == "moto":
        pytest.skip("moto's transactions are not thread-safe; DynamoDB Local's are")
    deposit_uses.save_type(ACCOUNT, "crate", "Crate", 150)
    from chalicelib.store import keys, table

    table.client().put_item(
        TableName=table.name(),
        Item=table.to_item({**keys.customer_key(ACCOUNT, "bar"), "data": {"id": "bar", "name": "Bar"}}),
    )
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: deposit_uses.adjusted(ACCOUNT, "bar", "crate", n, "m"), range(1, 17)))
    assert all(isinstance(result, dict) for result in results)
    types, held = deposits.read_balances(ACCOUNT, "bar")
    assert held == {"crate": sum(range(1, 17))}


def test_adjusting_an_unknown_customer_or_type(engine):
    deposit_uses.save_type(ACCOUNT, "crate", "Crate", 150)
    assert deposit_uses.adjusted(ACCOUNT, "nobody", "crate", 1, "m") == outcomes.Gone()
    from chalicelib.store import keys, table

    table.client().put_item(
        TableName=table.name(),
        Item=table.to_item({**keys.customer_key(ACCOUNT, "bar"), "data": {"id": "bar", "name": "Bar"}}),
    )
    assert deposit_uses.adjusted(ACCOUNT, "bar", "keg", 1, "m") == deposits.Unknown()
    assert deposits.read_balances(ACCOUNT, "bar") == ({"crate": {"name": "Crate", "price": 150}}, {})
    assert deposits.any_balance(ACCOUNT, "crate") is False
    assert deposit_uses.adjusted(ACCOUNT, "bar", "crate", 2, "m") == {
        "types": {"crate": {"name": "Crate", "price": 150}},
        "held": {"crate": 2},
    }
    assert deposits.any_balance(ACCOUNT, "crate") is True


@pytest.fixture
def local_api(engine, monkeypatch):
    """The app on DynamoDB Local (the real engine's rules for nested paths, ADD and transactions)."""
    if engine == "moto":
        pytest.skip("the API flows run on moto in tests/api; here on DynamoDB Local")
    from chalice.test import Client

    from app import app
    from chalicelib.http import auth
    from chalicelib.service import accounts
    from chalicelib.store import tokens
    from tests.conftest import SUPPLIER_TOKEN, Api, clock_at

    clock_at(monkeypatch, NOW)
    auth.forget_all()
    accounts.create_account(ACCOUNT, "Acme", SUPPLIER_TOKEN)
    with Client(app) as client:
        api = Api(client, SUPPLIER_TOKEN)
        assert api.put("/categories/drinks", {"name": "Drinks"}).status_code == 200
        address = {"address1": "Main 1", "zip": "00100", "city": "Helsinki", "country": "FI"}
        assert api.put("/customers/bar", {"name": "Bar", "address": address}).status_code == 200
        tokens.create(ACCOUNT, "customer", "bar", secret="bar-token")
        yield api
    auth.forget_all()


def test_the_whole_flow_on_dynamodb_local(local_api):
    api = local_api
    for deposit_id, price in (("bottle", 8), ("crate", 150), ("pallet", 1500)):
        assert api.put(f"/deposits/{deposit_id}", {"name": deposit_id.title(), "price": price}).status_code == 200
    lager = {
        "status": "ACTIVE",
        "category": "drinks",
        "name": "Lager",
        "price": 95,
        "vessel": {"size": 0.5, "unit": "l", "deposit": "bottle"},
        "bundles": [{"type": "CR", "size": 20, "deposit": "crate"}, {"type": "PX", "size": 40, "deposit": "pallet"}],
    }
    assert api.put("/products/lager", lager).status_code == 200
    user = {"name": "Ana", "email": "ana@bar.example"}
    placed = api.post(
        "/customer/deliveries",
        {
            "user": user,
            "items": [{"id": "lager", "count": 1, "bundle": {"type": "PX", "size": 40}}],
            "empties": [{"id": "crate", "count": 30}],
        },
        token="bar-token",
    )
    assert placed.status_code == 200, placed.data
    delivery_id = placed.data["deliveries"][0]["id"]
    answered = api.post(
        f"/deliveries/{delivery_id}/responses", {"type": "ACCEPT", "empties": [{"id": "crate", "count": 28}]}
    )
    assert answered.data["deposits"]["returned"] == [{"id": "crate", "name": "Crate", "price": 150, "count": 28}]
    assert api.post(f"/customer/deliveries/{delivery_id}/receive", {}, token="bar-token").status_code == 200
    assert (
        api.post("/customers/bar/deposits", {"id": "pallet", "count": -1, "message": "pallet swapped"}).status_code
        == 200
    )
    held = api.get("/customers/bar/deposits").data
    assert {b["id"]: b["balance"] for b in held["deposits"]} == {"bottle": 800, "crate": 12, "pallet": 0}
    assert held["total"] == 800 * 8 + 12 * 150
    assert api.delete("/deposits/pallet").status_code == 400  # the product names it
    api.patch("/products/lager", {"bundles": [{"type": "CR", "size": 20, "deposit": "crate"}]})
    assert api.delete("/deposits/pallet").status_code == 204
    assert api.delete("/deposits/crate").status_code == 400


def touched(operations):
    """The (PK, SK) of every item in a transaction's items."""
    found = set()
    for operation in operations:
        (body,) = operation.values()
        key = body.get("Key") or body["Item"]
        found.add((key["PK"]["S"], key["SK"]["S"]))
    return found


def test_product_writes_naming_different_types_share_no_item(engine, monkeypatch):
    """Issue 25: two product writes of one account naming different deposit types (or none) touch no common item
    in their transactions (the feed's own items aside, which store/feed.py keeps apart); only writes naming the
    same type share that type's item, as products of one category share the category's."""
    from chalicelib.store.unit_of_work import UnitOfWork

    for category in ("drinks", "beer", "water"):
        catalogue.put_category(ACCOUNT, category, {"name": category.title()})
    for deposit_id in ("bottle", "crate", "keg"):
        deposit_uses.save_type(ACCOUNT, deposit_id, deposit_id.title(), 10)
    writes = {}
    real_commit = UnitOfWork.commit

    def recording(uow):
        writes[current] = touched([operation.item for operation in uow.operations])
        return real_commit(uow)

    monkeypatch.setattr(UnitOfWork, "commit", recording)
    crated = sample_product("beer", category="beer", bundles=[{"type": "CR", "size": 20, "deposit": "crate"}])
    for current, product in (
        ("cola", bottled("cola")),
        ("beer", crated),
        ("water", sample_product("water", category="water")),
    ):
        assert isinstance(save_product(ACCOUNT, product, now=NOW, create_only=True), str)
    current = "cola-to-keg"
    revision = products.get(ACCOUNT, "cola", consistent=True).revision
    saved = save_product(
        ACCOUNT, bottled("cola", "keg"), now=NOW, expected_revision=revision, deposits_before=frozenset({"bottle"})
    )
    assert isinstance(saved, str)
    current = "beer-deleted"
    assert catalogue.remove_product(ACCOUNT, "beer") is None
    current = "fanta"
    assert isinstance(
        save_product(ACCOUNT, {**bottled("fanta", "keg"), "category": "beer"}, now=NOW, create_only=True), str
    )

    types_item = keys.deposit_types_key(ACCOUNT)
    assert all((types_item["PK"], types_item["SK"]) not in keys_ for keys_ in writes.values())
    for one, other in (
        ("cola", "beer"),
        ("cola", "water"),
        ("beer", "water"),
        ("cola-to-keg", "beer-deleted"),
        ("cola-to-keg", "water"),
    ):
        assert writes[one] & writes[other] == set(), (one, other)
    keg = keys.deposit_type_key(ACCOUNT, "keg")
    assert writes["cola-to-keg"] & writes["fanta"] == {(keg["PK"], keg["SK"])}
    assert (references("bottle"), references("crate"), references("keg")) == (0, 0, 2)


def test_types_stored_before_they_had_their_own_item_are_given_it(engine, drinks):
    """python -m chalicelib.cli migrate-deposits: the reference counts the types item kept move to each type's
    own item; until then a write naming such a type is refused, after it everything works as for a new type."""
    from chalicelib.service import migrations

    # One product (not needed here) names the bottle.
    legacy = {"bottle": {"name": "Bottle", "price": 8, "refs": 1}, "crate": {"name": "Crate", "price": 150, "refs": 0}}
    table.client().put_item(
        TableName=table.name(), Item=table.to_item({**keys.deposit_types_key(ACCOUNT), "types": legacy, "count": 2})
    )
    assert save_product(ACCOUNT, bottled("fanta"), now=NOW, create_only=True) == outcomes.Stale()
    assert migrations.migrate_deposits(ACCOUNT) == 2
    assert migrations.migrate_deposits(ACCOUNT) == 0
    assert (references("bottle"), references("crate")) == (1, 0)
    assert deposits.read_types(ACCOUNT, consistent=True) == {
        "bottle": {"name": "Bottle", "price": 8},
        "crate": {"name": "Crate", "price": 150},
    }
    assert deposit_uses.delete_type(ACCOUNT, "bottle") == outcomes.InUse()
    assert deposit_uses.delete_type(ACCOUNT, "crate") is None
    assert isinstance(save_product(ACCOUNT, bottled("fanta"), now=NOW, create_only=True), str)
    assert references("bottle") == 2


def test_a_type_others_keep_changing_is_contended_and_the_service_answers_busy(engine, monkeypatch):
    """Like a category or the webhook settings: after PUT_ATTEMPTS lost races save_type gives up with the 409 every
    contended write gives (the one retry idiom, service/contention.retried)."""
    from chalicelib.domain.errors import Busy
    from chalicelib.service import contention
    from chalicelib.service import deposits as service

    with monkeypatch.context() as patched:
        commits = fake_commits(patched, always=outcomes.Stale())
        with pytest.raises(Busy, match=contention.ACCOUNT_BUSY):
            deposit_uses.save_type(ACCOUNT, "bottle", "Bottle", 8)
        assert len(commits.units) == service.PUT_ATTEMPTS
        with pytest.raises(Busy, match=contention.ACCOUNT_BUSY) as raised:
            service.put_deposit(ACCOUNT, "bottle", {"name": "Bottle", "price": 8})
        assert raised.value.status == 409
    assert deposits.read_types(ACCOUNT, consistent=True) == {}


def test_the_statement_adds_up_to_the_balances_under_concurrent_receives_and_adjustments(local_api):
    """Receives and adjustments of one customer at once, on DynamoDB Local: every balance move has its record,
    written in the move's own transaction, so the movements of each type add up to its balance exactly."""
    from chalicelib.service import deliveries as delivery_service
    from chalicelib.service import deposits as deposit_service

    api = local_api
    for deposit_id, price in (("bottle", 8), ("crate", 150)):
        assert api.put(f"/deposits/{deposit_id}", {"name": deposit_id.title(), "price": price}).status_code == 200
    lager = {
        "status": "ACTIVE",
        "category": "drinks",
        "name": "Lager",
        "price": 95,
        "vessel": {"size": 0.5, "unit": "l", "deposit": "bottle"},
        "bundles": [{"type": "CR", "size": 20, "deposit": "crate"}],
    }
    assert api.put("/products/lager", lager).status_code == 200
    user = {"name": "Ana", "email": "ana@bar.example"}
    placed = []
    for _ in range(6):
        body = {
            "user": user,
            "items": [{"id": "lager", "count": 2, "bundle": {"type": "CR", "size": 20}}],
            "empties": [{"id": "crate", "count": 3}],
        }
        delivery_id = api.post("/customer/deliveries", body, token="bar-token").data["deliveries"][0]["id"]
        assert api.post(f"/deliveries/{delivery_id}/responses", {"type": "ACCEPT"}).status_code == 200
        placed.append(delivery_id)
    work = [("receive", d) for d in placed] + [("adjust", n) for n in range(1, 11)]

    def run(job):
        kind, value = job
        if kind == "receive":
            return delivery_service.receive(ACCOUNT, "bar", str(value), {})["status"]
        return (
            deposit_service.adjust_balance(
                ACCOUNT, "bar", {"id": "crate" if value % 2 else "bottle", "count": value, "message": f"m{value}"}
            )["total"]
            is not None
        )

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(run, work))
    assert results == ["DELIVERED"] * 6 + [True] * 10
    types, held = deposits.read_balances(ACCOUNT, "bar")
    summed: dict[str, int] = {}
    movements, cursor = [], None
    while True:
        page = deposit_service.movements(ACCOUNT, "bar", None, 7, cursor, "supplier")
        movements += page.items
        cursor = page.cursor
        if cursor is None:
            break
    for movement in movements:
        summed[movement["id"]] = summed.get(movement["id"], 0) + movement["count"]
    assert summed == held == {"bottle": 6 * 40 + 2 + 4 + 6 + 8 + 10, "crate": 6 * (2 - 3) + 1 + 3 + 5 + 7 + 9}
    assert len(movements) == 6 * 2 + 10
