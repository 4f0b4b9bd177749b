"""Standing orders in the change feed and webhooks (decisions §13, §17)."""

import json

from chalicelib.service import changes
from chalicelib.store import keys, table

from .deliveries_helpers import CUSTOMER_TOKEN, put_settings, shop  # noqa: F401
from .standing_support import BASE, put_standing, run_placer


def entries(api):
    return [
        e
        for e in api.get("/changes?after=0&limit=1000&include=data").json_body["changes"]
        if e["resource"] == "standing-order"
    ]


def test_writes_and_deletes_make_entries_with_the_customer(shop):
    put_standing(shop)
    put_standing(shop, name="Weekly kegs")
    shop.delete(f"{BASE}/weekly", token=CUSTOMER_TOKEN)
    found = entries(shop)
    assert [(e["type"], e["id"], e["customer_id"]) for e in found] == [
        ("standing-order.created", "weekly", "c1"),
        ("standing-order.updated", "weekly", "c1"),
        ("standing-order.deleted", "weekly", "c1"),
    ]
    assert found[0]["data"] is None  # data is the resource as it is now: deleted


def test_the_data_of_an_entry_is_the_standing_order_as_its_get_shows_it(shop):
    written = put_standing(shop).json_body
    (entry,) = entries(shop)
    assert entry["data"] == written
    assert list(entry["data"]) == list(written)


def test_a_failed_date_makes_an_entry_and_a_selectable_event_with_the_date(shop):
    selected = ["standing-order.failed", "standing-order.created"]
    response = shop.put("/account/settings/webhooks", {"url": "https://hooks.example.com/x", "events": selected})
    assert response.status_code == 200, response.data
    put_standing(shop)
    shop.put("/products/beer", body={"status": "INACTIVE", "category": "drinks", "name": "Pale Ale"})
    run_placer()
    assert [e["type"] for e in entries(shop)] == ["standing-order.created", "standing-order.failed"]
    found = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.events_pk("acme")),
    )["Items"]
    events = [table.from_item(item) for item in found]
    assert sorted(e["type"] for e in events) == ["standing-order.created", "standing-order.failed"]
    failed = next(e for e in events if e["type"] == "standing-order.failed")
    body = json.loads(changes.event_body(failed))
    occurrence = {
        "date": "2026-05-05",
        "status": "FAILED",
        "place_at": "2026-05-03T23:59:00+00:00",
        "left_out": [{"id": "beer", "reason": "INACTIVE"}],
        "errors": [{"path": "items", "message": "none of its lines can go on this date"}],
    }
    assert list(body) == [
        "type",
        "idempotency_key",
        "sequence",
        "previous_sequence",
        "resource",
        "id",
        "customer_id",
        "date",
        "data",
    ]
    assert (body["type"], body["id"], body["customer_id"], body["date"]) == (
        "standing-order.failed",
        "weekly",
        "c1",
        "2026-05-05",
    )
    assert body["data"] == occurrence
    assert list(body["data"]) == list(occurrence)
    (entry,) = [e for e in entries(shop) if e["type"] == "standing-order.failed"]
    assert (entry["id"], entry["customer_id"], entry["date"], entry["data"]) == (
        "weekly",
        "c1",
        "2026-05-05",
        occurrence,
    )
    assert "date" not in entries(shop)[0]
    created = next(e for e in events if e["type"] == "standing-order.created")
    assert "date" not in json.loads(changes.event_body(created))


def test_an_unknown_standing_order_event_type_is_refused(shop):
    response = shop.put(
        "/account/settings/webhooks", {"url": "https://hooks.example.com/x", "events": ["standing-order.placed"]}
    )
    assert response.status_code == 400


def test_placing_appends_delivery_requested_as_an_order_does(shop):
    put_standing(shop)
    run_placer()
    placed = [e for e in shop.get("/changes?after=0&limit=1000").json_body["changes"] if e["resource"] == "delivery"]
    assert [(e["type"], e["id"], e["status"]) for e in placed] == [("delivery.requested", "1", "REQUESTED")]
    found = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.events_pk("acme")),
    )["Items"]
    assert [table.from_item(item)["type"] for item in found] == ["request-delivery"]
