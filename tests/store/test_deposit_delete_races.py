"""DELETE /deposits/:id racing receives and adjustments on DynamoDB Local (decisions §15): whatever the
interleaving, no open delivery and no non-zero balance ever holds a type that no longer exists."""

from concurrent.futures import ThreadPoolExecutor

from chalicelib.domain.errors import ServiceError
from chalicelib.service import deposits as deposit_uses
from chalicelib.store import deposit_guard, deposits, keys, table
from tests.store.conftest import ACCOUNT
from tests.store.test_deposits_store import local_api  # noqa: F401 (a fixture; engine comes from conftest)


def raw_balance(customer_id: str, deposit_id: str) -> int:
    found = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.deposit_balance_key(ACCOUNT, customer_id)), ConsistentRead=True
    )
    return int(found.get("Item", {}).get(deposits.BALANCE_PREFIX + deposit_id, {"N": "0"})["N"])


def attempt(job):
    from chalicelib.service import deliveries as delivery_service
    from chalicelib.service import deposits as deposit_service

    kind, value = job
    try:
        if kind == "receive":
            delivery_service.receive(ACCOUNT, "bar", str(value), {})
        elif kind == "adjust":
            deposit_service.adjust_balance(ACCOUNT, "bar", {"id": "tray", "count": value, "message": "race"})
        else:
            deposit_service.delete_deposit(ACCOUNT, value)
        return f"{kind} ok"
    except ServiceError as refused:
        return f"{kind} {type(refused).__name__}"


def test_deletes_racing_receives_and_adjustments_leave_no_balance_or_open_delivery_of_a_deleted_type(local_api):
    api = local_api
    for deposit_id, price in (("keg", 3000), ("tray", 100)):
        assert api.put(f"/deposits/{deposit_id}", {"name": deposit_id.title(), "price": price}).status_code == 200
    user = {"name": "Ana", "email": "ana@bar.example"}
    water = {"status": "ACTIVE", "category": "drinks", "name": "Water", "price": 10}
    assert api.put("/products/water", water).status_code == 200
    placed = []
    for _ in range(4):
        body = {"user": user, "items": [{"id": "water", "count": 1}], "empties": [{"id": "keg", "count": 2}]}
        delivery_id = api.post("/customer/deliveries", body, token="bar-token").data["deliveries"][0]["id"]
        assert api.post(f"/deliveries/{delivery_id}/responses", {"type": "ACCEPT"}).status_code == 200
        placed.append(delivery_id)
    work = []
    for i in range(4):
        work += [("receive", placed[i]), ("delete", "keg"), ("adjust", 1), ("delete", "tray"), ("adjust", -1)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(attempt, work))
    assert all(
        result.endswith((" ok", " Conflict", " Busy", " NotFound", " ValidationFailed")) for result in results
    ), results
    assert results.count("receive ok") == 4
    assert "delete ok" not in [r for r, job in zip(results, work) if job == ("delete", "keg")]  # its balance is -8
    assert raw_balance("bar", "keg") == -8
    remaining = deposits.read_types(ACCOUNT, consistent=True)
    for deposit_id in ("keg", "tray"):
        if deposit_id not in remaining:  # deleted: nothing holds it
            assert raw_balance("bar", deposit_id) == 0, results
            assert not deposit_guard.open_delivery_names(ACCOUNT, deposit_id)
    # A type left behind is usable again: not stuck as being deleted.
    assert (
        deposits.types_of(
            table.from_item(
                table.client().get_item(
                    TableName=table.name(), Key=table.to_item(keys.deposit_types_key(ACCOUNT)), ConsistentRead=True
                )["Item"]
            ),
            usable_only=True,
        )
        == remaining
    )


def test_a_type_being_deleted_takes_no_adjustment_and_no_new_empties(engine):
    deposit_uses.save_type(ACCOUNT, "tray", "Tray", 100)
    table.client().put_item(
        TableName=table.name(), Item=table.to_item({**keys.customer_key(ACCOUNT, "bar"), "data": {"id": "bar"}})
    )
    assert deposit_uses.retire(ACCOUNT, "tray") is None
    assert isinstance(deposit_uses.adjusted(ACCOUNT, "bar", "tray", 1, "m"), deposits.Retiring)
    assert "tray" in deposits.read_types(ACCOUNT, consistent=True)  # GET /deposits still lists it
    assert "tray" not in deposits.read_types(ACCOUNT, consistent=True, usable_only=True)  # empties refuse it
    assert deposit_uses.retire(ACCOUNT, "tray", retiring=False) is None
    assert isinstance(deposit_uses.adjusted(ACCOUNT, "bar", "tray", 1, "m"), dict)
    assert deposit_uses.retire(ACCOUNT, "nope") == deposits.Gone()
