"""delivery.amended in the change feed and as a webhook event (decisions §13, §16): selectable, not in the legacy
default; its data is the delivery as the supplier's GET answers, amendments included."""

from tests.api.deliveries_helpers import CUSTOMER_TOKEN, USER, place, shop  # noqa: F401
from tests.api.test_changes import Receiver, _send_all, newest

ITEMS = [{"id": "beer", "count": 2}]


def amend(api, delivery_id, count):
    body = {"items": [{"id": "beer", "count": count}], "user": USER}
    return api.post(f"/customer/deliveries/{delivery_id}/amendments", body=body, token=CUSTOMER_TOKEN)


def test_an_amendment_appends_one_delivery_amended_entry(shop):
    delivery = place(shop, ITEMS)
    before = newest(shop)
    assert amend(shop, delivery["id"], 3).status_code == 200
    page = shop.get(f"/changes?after={before}&include=data").data
    (entry,) = page["changes"]
    assert {k: entry[k] for k in ("sequence", "type", "resource", "id", "status")} == {
        "sequence": before + 1,
        "type": "delivery.amended",
        "resource": "delivery",
        "id": str(delivery["id"]),
        "status": "REQUESTED",
    }
    assert entry["data"] == shop.get(f"/deliveries/{delivery['id']}").data
    assert entry["data"]["amendments"][0]["items"][0]["count"] == 3
    assert amend(shop, delivery["id"], 3).status_code == 200  # nothing changed: no entry
    assert newest(shop) == before + 1


def test_delivery_amended_is_a_selectable_event_type(shop):
    hook = {"url": "https://erp.example.com/hook", "events": ["request-delivery", "delivery.amended"]}
    response = shop.put("/account/settings/webhooks", hook)
    assert response.status_code == 200 and response.data["events"] == hook["events"]
    delivery = place(shop, ITEMS)
    amend(shop, delivery["id"], 4)
    receiver = Receiver()
    _send_all(receiver)
    bodies = sorted(receiver.bodies, key=lambda b: b["sequence"])
    assert [b["type"] for b in bodies] == ["request-delivery", "delivery.amended"]
    amended = bodies[1]
    assert amended["previous_sequence"] == bodies[0]["sequence"]
    assert amended["data"] == shop.get(f"/deliveries/{delivery['id']}").data


def test_the_legacy_default_sends_no_amendment_event(shop):
    assert shop.put("/account/settings/webhooks", {"url": "https://erp.example.com/hook"}).status_code == 200
    delivery = place(shop, ITEMS)
    amend(shop, delivery["id"], 5)
    types = [e["type"] for e in shop.get("/account/events").data["events"]]
    assert types == ["request-delivery"]
