"""The receipt with issues (decisions §18): POST /customer/deliveries/:id/receive with `items` makes the delivery
DELIVERED and opens claim 1 in one write, with one `delivery.delivered` and one `claim.opened` entry."""

import pytest

from chalicelib.domain.delivery import Delivery
from tests.api.customer_support import dynamodb_calls
from tests.api.test_changes import newest
from tests.conftest import problem_paths

from .claim_support import PHOTO, line, receive
from .deliveries_helpers import CUSTOMER_TOKEN, USER, assert_shape, order, place, respond, shop  # noqa: F401
from .note_support import CRATE, bottled, note


def _balances(api) -> dict:
    return {d["id"]: d["balance"] for d in api.get("/customers/c1/deposits").data["deposits"] if d["balance"]}


def test_a_receipt_with_issues_delivers_and_opens_claim_1(shop):
    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 2, "bundle": CRATE}, {"id": "water", "count": 6}])
    before = newest(shop)
    body = {
        "user": USER,
        "message": "a crate broke",
        "items": [line("lager", 1, evidence=[PHOTO]), line("water", 2, "SHORT", message="four, not six")],
    }
    response = receive(shop, delivery["id"], body, token=CUSTOMER_TOKEN)
    assert response.status_code == 200, response.data
    assert_shape(Delivery, response)
    received = response.data
    assert received["status"] == "DELIVERED"
    assert received["received"] == {"timestamp": "2026-05-04T09:30:00.000Z", "user": USER, "message": "a crate broke"}
    assert received["claims"] == [
        {
            "number": 1,
            "status": "OPEN",
            "opened_at": "2026-05-04T09:30:00.000Z",
            "user": USER,
            "message": "a crate broke",
            "items": [
                {"id": "lager", "issue": "DAMAGED", "count": 1, "evidence": [PHOTO]},
                {"id": "water", "issue": "SHORT", "count": 2, "message": "four, not six"},
            ],
        }
    ]
    assert list(received) == ["id", "type", "status", "customer", "request", "responses", "received", "claims"] + [
        "deposits"
    ]
    assert shop.get(f"/customer/deliveries/{delivery['id']}", token=CUSTOMER_TOKEN).data == received
    supplier = shop.get(f"/deliveries/{delivery['id']}").data
    assert supplier["claims"] == received["claims"] and supplier["integration"]["status"] == "PENDING"
    # The receive moved the balances once (a claim never does), as a receive without issues does.
    assert _balances(shop) == {"bottle": 40, "crate": 2}
    entries = shop.get(f"/changes?after={before}").data["changes"]  # two resources: in either order
    assert sorted((e["type"], e["id"], e["status"], e.get("by"), e.get("customer_id")) for e in entries) == [
        ("claim.opened", f"{delivery['id']}:1", "OPEN", None, "c1"),
        ("delivery.delivered", str(delivery["id"]), "DELIVERED", "customer", None),
    ]


@pytest.mark.pending_feed  # the write's own requests: the stream's numbering comes later
def test_the_receipt_and_its_claim_are_one_transaction(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    with dynamodb_calls() as calls:
        response = receive(shop, delivery["id"], {"items": [line("beer", 1)]}, token=CUSTOMER_TOKEN)
    assert response.status_code == 200, response.data
    # The delivery and one transaction, as a receive without issues (no window to check, no substitute named).
    assert calls == ["BatchGetItem", "TransactWriteItems"]


def test_a_receipt_with_issues_is_checked_as_a_claim_and_refused_whole(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    body = {"items": [line("nope"), line("beer", 3), line("beer", 1, "LOST")]}
    response = receive(shop, delivery["id"], body, token=CUSTOMER_TOKEN)
    assert response.status_code == 400  # every problem at once (decisions §3): the shape's, then the lines'
    assert problem_paths(response) == ["items[2].issue", "items[0].id", "items[1].count"]
    response = receive(shop, delivery["id"], {"items": [line("nope"), line("beer", 3)]}, token=CUSTOMER_TOKEN)
    assert (response.status_code, problem_paths(response)) == (400, ["items[0].id", "items[1].count"])
    assert receive(shop, delivery["id"], {"items": []}, token=CUSTOMER_TOKEN).status_code == 400
    read = shop.get(f"/customer/deliveries/{delivery['id']}", token=CUSTOMER_TOKEN).data
    assert read["status"] == "REQUESTED" and "claims" not in read and "received" not in read


def test_the_receipt_counts_what_the_supplier_confirmed(shop):
    delivery = place(shop, [{"id": "beer", "count": 10}])
    respond(shop, delivery["id"], {"type": "ACCEPT", "items": [{"id": "beer", "count": 8}]})
    response = receive(shop, delivery["id"], {"items": [line("beer", 9, "SHORT")]}, token=CUSTOMER_TOKEN)
    assert (response.status_code, problem_paths(response)) == (400, ["items[0].count"])
    assert "at most 8" in response.data["errors"][0]["message"]
    response = receive(shop, delivery["id"], {"items": [line("beer", 8, "SHORT")]}, token=CUSTOMER_TOKEN)
    assert response.status_code == 200, response.data


def test_a_receive_of_a_delivery_the_note_delivered_is_refused_with_or_without_items(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    assert note(shop, delivery["id"]).status_code == 200
    for body in ({}, {"items": [line("beer", 1)]}, {"items": [line("beer", 1, "LOST")]}, {"message": 1}):
        response = receive(shop, delivery["id"], body, token=CUSTOMER_TOKEN)
        assert (response.status_code, response.data["type"]) == (400, "invalid-transition")
    assert "claims" not in shop.get(f"/deliveries/{delivery['id']}").data


def test_a_return_is_received_but_takes_no_claim(shop):
    (returned,) = order(shop, [{"id": "beer", "count": 2}], type="RETURN").data["deliveries"]
    response = receive(shop, returned["id"], {"items": [line("beer", 1)]}, token=CUSTOMER_TOKEN)
    assert (response.status_code, response.data["type"]) == (400, "invalid-transition")
    assert "RETURN" in response.data["detail"]
    assert shop.get(f"/deliveries/{returned['id']}").data["status"] == "REQUESTED"
    assert receive(shop, returned["id"], {}, token=CUSTOMER_TOKEN).status_code == 200


def test_a_receipt_with_issues_is_possible_with_a_claim_window_of_0(shop):
    assert shop.patch("/account/settings/deliveries", {"claim_window_hours": 0}).status_code == 200
    delivery = place(shop, [{"id": "beer", "count": 2}])
    response = receive(shop, delivery["id"], {"items": [line("beer", 1)]}, token=CUSTOMER_TOKEN)
    assert response.status_code == 200 and response.data["claims"][0]["number"] == 1
    later = shop.post(
        f"/customer/deliveries/{delivery['id']}/claims", {"items": [line("beer", 1)]}, token=CUSTOMER_TOKEN
    )
    assert (later.status_code, later.data["type"]) == (400, "invalid-transition")
    assert later.data["closed_at"] == "2026-05-04T09:30:00.000+00:00"


def test_a_plain_receive_answers_as_before(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    response = receive(shop, delivery["id"], {"message": "thanks", "items": None}, token=CUSTOMER_TOKEN)
    assert response.status_code == 200, response.data
    assert "claims" not in response.data and response.data["received"]["message"] == "thanks"
    other = place(shop, [{"id": "beer", "count": 2}])
    bare = shop.request("POST", f"/customer/deliveries/{other['id']}/receive", token=CUSTOMER_TOKEN)
    assert bare.status_code == 200 and "claims" not in bare.data
