"""Claims in the change feed and in webhooks (decisions §18, §13): claim.opened, claim.answered and claim.withdrawn
(resource `claim`, id "<delivery id>:<number>", with customer_id and the claim's status after the change; data the
delivery), no `delivery.*` entry for a claim's own requests, selectable as webhook events, none in the legacy
default."""

from tests.api.test_changes import Receiver, _send_all, newest
from tests.conftest import problem_paths

from .claim_support import accepted, answer, claimed, line, received, withdraw
from .deliveries_helpers import CUSTOMER_TOKEN, place, shop  # noqa: F401

CLAIM_EVENTS = ["claim.opened", "claim.answered", "claim.withdrawn"]


def test_each_claim_change_is_one_claim_entry_and_no_delivery_entry(shop):
    delivery = received(shop)
    before = newest(shop)
    claimed(shop, delivery["id"], line("beer", 2))
    claimed(shop, delivery["id"], line("water", 1))
    answer(shop, delivery["id"], 1, accepted("beer", 2))
    withdraw(shop, delivery["id"], 2)
    page = shop.get(f"/changes?after={before}").data["changes"]
    ref = str(delivery["id"])
    assert [(e["type"], e["resource"], e["id"], e["status"], e["customer_id"]) for e in page] == [
        ("claim.opened", "claim", f"{ref}:1", "OPEN", "c1"),
        ("claim.opened", "claim", f"{ref}:2", "OPEN", "c1"),
        ("claim.answered", "claim", f"{ref}:1", "ACCEPTED", "c1"),
        ("claim.withdrawn", "claim", f"{ref}:2", "WITHDRAWN", "c1"),
    ]
    assert list(page[0]) == ["sequence", "type", "resource", "id", "at", "status", "customer_id", "unit"]
    assert [e["sequence"] for e in page] == list(range(before + 1, before + 5))


def test_a_claim_entry_s_data_is_the_delivery_as_the_supplier_reads_it(shop):
    delivery = received(shop)
    before = newest(shop)
    claimed(shop, delivery["id"], line("beer", 2))
    (entry,) = shop.get(f"/changes?after={before}&include=data").data["changes"]
    now = shop.get(f"/deliveries/{delivery['id']}").data
    assert entry["data"] == now and entry["data"]["claims"][0]["status"] == "OPEN"
    assert list(entry)[-1] == "data" and "integration" in entry["data"]
    # A delivery's own entries show its claims too, as its GET does now.
    delivered = shop.get(f"/changes?after={before - 1}&limit=1&include=data").data["changes"][0]
    assert delivered["type"] == "delivery.delivered" and delivered["data"] == now


def test_claim_events_are_selectable_and_carry_the_entry_and_the_delivery(shop):
    hook = {"url": "https://erp.example.com/hook", "events": CLAIM_EVENTS}
    assert shop.put("/account/settings/webhooks", hook).status_code == 200
    assert shop.get("/account/settings/webhooks").data["events"] == CLAIM_EVENTS
    delivery = received(shop, body={"items": [line("beer", 1)]})
    answer(shop, delivery["id"], 1, accepted("beer", 1))
    receiver = Receiver()
    _send_all(receiver)
    assert [(b["type"], b["resource"], b["id"], b["customer_id"]) for b in receiver.bodies] == [
        ("claim.opened", "claim", f"{delivery['id']}:1", "c1"),
        ("claim.answered", "claim", f"{delivery['id']}:1", "c1"),
    ]
    first, second = receiver.bodies
    assert " ".join(first) == "type idempotency_key sequence previous_sequence resource id customer_id data"
    assert second["previous_sequence"] == first["sequence"]
    assert second["data"] == shop.get(f"/deliveries/{delivery['id']}").data
    events = shop.get("/account/events").data["events"]
    assert sorted((e["type"], e["delivery_id"]) for e in events) == [
        ("claim.answered", delivery["id"]),
        ("claim.opened", delivery["id"]),
    ]


def test_the_legacy_default_sends_no_claim_event(shop):
    assert shop.put("/account/settings/webhooks", {"url": "https://erp.example.com/hook"}).status_code == 200
    delivery = received(shop, body={"items": [line("beer", 1)]})
    claimed(shop, delivery["id"], line("water", 1))
    withdraw(shop, delivery["id"], 2)
    types = sorted(e["type"] for e in shop.get("/account/events").data["events"])
    assert types == ["receive-delivery", "request-delivery"]


def test_an_unknown_claim_event_type_is_refused(shop):
    hook = {"url": "https://erp.example.com/hook", "events": ["claim.opened", "claim.closed"]}
    response = shop.put("/account/settings/webhooks", hook)
    assert (response.status_code, problem_paths(response)) == (400, ["events[1]", "events"])


def test_a_customer_reads_no_integration_state_in_its_claim_answers(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    response = shop.post(
        f"/customer/deliveries/{delivery['id']}/receive", {"items": [line("beer", 1)]}, token=CUSTOMER_TOKEN
    )
    assert "integration" not in response.data
    assert "integration" not in withdraw(shop, delivery["id"], 1).data
