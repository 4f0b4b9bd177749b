"""What a delivery note moves (decisions §18): deposits charged from what was delivered and returned from the
empties it names, the customer's balances and statement (§15), the feed's `delivery.delivered` with `by`, and no
legacy `receive-delivery` webhook."""

import pytest

from tests.api.test_changes import Receiver, _send_all, newest
from tests.conftest import problem_paths

from .deliveries_helpers import CUSTOMER, CUSTOMER_TOKEN, USER, order, place, respond, shop  # noqa: F401
from .note_support import BOTTLE, CRATE, CRATE_DEPOSIT, bottled, note


def _balances(api) -> dict:
    return {d["id"]: d["balance"] for d in api.get(f"/customers/{CUSTOMER}/deposits").data["deposits"] if d["balance"]}


def test_deposits_follow_what_was_delivered_and_the_empties_collected(shop):
    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 2, "bundle": CRATE}], empties=[{"id": "crate", "count": 3}])
    respond(shop, delivery["id"], {"type": "ACCEPT"})
    response = note(
        shop,
        delivery["id"],
        {"items": [{"id": "lager", "count": 1, "reason": "OUT_OF_STOCK"}], "empties": [{"id": "crate", "count": 2}]},
    )
    assert response.status_code == 200, response.data
    assert response.data["delivery_note"]["empties"] == [{**CRATE_DEPOSIT, "count": 2}]
    assert response.data["deposits"] == {
        "charged": [{**BOTTLE, "count": 20}, {**CRATE_DEPOSIT, "count": 1}],
        "returned": [{**CRATE_DEPOSIT, "count": 2}],
        "total": 20 * 8 + 150 - 2 * 150,
    }
    assert _balances(shop) == {"bottle": 20, "crate": -1}
    movements = shop.get(f"/customers/{CUSTOMER}/deposits/movements").data["movements"]
    assert [(m["id"], m["count"], m["delivery_id"]) for m in movements] == [
        ("bottle", 20, delivery["id"]),
        ("crate", -1, delivery["id"]),
    ]
    assert shop.get("/customer/deposits/movements", token=CUSTOMER_TOKEN).data["movements"] == movements


def test_a_note_on_a_requested_delivery_takes_the_announced_empties_as_an_accept_would(shop):
    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 1, "bundle": CRATE}], empties=[{"id": "crate", "count": 4}])
    response = note(shop, delivery["id"])
    assert response.data["delivery_note"]["empties"] == [{**CRATE_DEPOSIT, "count": 4}]
    assert response.data["deposits"]["returned"] == [{**CRATE_DEPOSIT, "count": 4}]
    assert _balances(shop) == {"bottle": 20, "crate": -3}
    # A receive without the supplier's ACCEPT credits nothing (decisions §15): the note is the supplier's word.
    received = place(shop, [{"id": "lager", "count": 1, "bundle": CRATE}], empties=[{"id": "crate", "count": 4}])
    shop.post(f"/customer/deliveries/{received['id']}/receive", {}, token=CUSTOMER_TOKEN)
    assert _balances(shop) == {"bottle": 40, "crate": -2}


def test_the_latest_response_s_empties_count_when_the_note_names_none(shop):
    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 1, "bundle": CRATE}], empties=[{"id": "crate", "count": 4}])
    respond(
        shop, delivery["id"], {"type": "ACCEPT", "empties": [{"id": "crate", "count": 3}, {"id": "keg", "count": 0}]}
    )
    response = note(shop, delivery["id"])
    assert response.data["delivery_note"]["empties"] == [
        {**CRATE_DEPOSIT, "count": 3},
        {"id": "keg", "name": "Keg", "price": 3000, "count": 0},
    ]
    assert response.data["deposits"]["returned"] == [{**CRATE_DEPOSIT, "count": 3}]


def test_substitutes_delivered_are_charged_and_move_balances(shop):
    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 2, "bundle": CRATE}])
    response = note(
        shop,
        delivery["id"],
        {
            "items": [{"id": "lager", "count": 0, "reason": "SUBSTITUTED"}],
            "substitutions": [{"for": "lager", "id": "helles", "count": 2, "bundle": CRATE}],
        },
    )
    assert response.status_code == 200, response.data
    assert response.data["deposits"]["charged"] == [{**BOTTLE, "count": 40}, {**CRATE_DEPOSIT, "count": 2}]
    assert _balances(shop) == {"bottle": 40, "crate": 2}


def test_a_return_gives_back_what_the_driver_collected(shop):
    bottled(shop)
    response = order(shop, [{"id": "lager", "count": 2, "bundle": CRATE}], type="RETURN")
    (delivery,) = response.data["deliveries"]
    noted = note(shop, delivery["id"], {"items": [{"id": "lager", "count": 1}], "empties": [{"id": "keg", "count": 1}]})
    assert noted.status_code == 200, noted.data
    assert noted.data["deposits"] == {
        "charged": [],
        "returned": [
            {**BOTTLE, "count": 20},
            {**CRATE_DEPOSIT, "count": 1},
            {"id": "keg", "name": "Keg", "price": 3000, "count": 1},
        ],
        "total": -(20 * 8 + 150 + 3000),
    }
    assert _balances(shop) == {"bottle": -20, "crate": -1, "keg": -1}


@pytest.mark.parametrize(
    "body, paths",
    [
        ({"empties": [{"id": "nope", "count": 1}]}, ["empties[0].id"]),
        ({"empties": [{"id": "crate", "count": 1}, {"id": "crate", "count": 2}]}, ["empties[1].id"]),
        ({"empties": [{"id": "crate", "count": -1}]}, ["empties[0].count"]),
        ({"empties": [{"id": "crate", "count": 100_001}]}, ["empties[0].count"]),
        (
            {"items": [{"id": "lager", "count": 1, "bundle": {"type": "CR", "size": 2.5}}]},
            ["items[0].bundle.size", "items[0].bundle"],  # whole bundles, and whole vessels where deposits are charged
        ),
        (
            {"items": [{"id": "lager", "count": -1}], "empties": [{"id": "nope", "count": 1}]},
            ["items[0].count", "empties[0].id"],
        ),
    ],
)
def test_empties_and_whole_vessels_are_checked_as_in_a_response(shop, body, paths):
    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 2, "bundle": CRATE}])
    response = note(shop, delivery["id"], body)
    assert (response.status_code, problem_paths(response)) == (400, paths), response.data
    assert _balances(shop) == {}


def test_a_note_is_delivery_delivered_by_the_supplier_and_a_receive_by_the_customer(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    received = place(shop, [{"id": "beer", "count": 2}])
    before = newest(shop)
    note(shop, delivery["id"])
    shop.post(f"/customer/deliveries/{received['id']}/receive", {}, token=CUSTOMER_TOKEN)
    page = shop.get(f"/changes?after={before}&include=data").data["changes"]
    assert [(e["type"], e["id"], e["status"], e["by"]) for e in page] == [
        ("delivery.delivered", str(delivery["id"]), "DELIVERED", "supplier"),
        ("delivery.delivered", str(received["id"]), "DELIVERED", "customer"),
    ]
    assert list(page[0])[:7] == ["sequence", "type", "resource", "id", "at", "status", "by"]
    assert page[0]["data"] == shop.get(f"/deliveries/{delivery['id']}").data
    assert page[0]["data"]["delivery_note"]["number"] == "LS-1"
    plain = shop.get(f"/changes?after={before}").data["changes"]
    assert [e["by"] for e in plain] == ["supplier", "customer"]
    respond(shop, place(shop, [{"id": "beer", "count": 1}])["id"], {"type": "ACCEPT"})
    assert not [e for e in shop.get(f"/changes?after={before + 2}").data["changes"] if "by" in e]


def test_the_legacy_default_sends_receive_delivery_for_a_receive_and_nothing_for_a_note(shop):
    assert shop.put("/account/settings/webhooks", {"url": "https://erp.example.com/hook"}).status_code == 200
    noted = place(shop, [{"id": "beer", "count": 2}])
    received = place(shop, [{"id": "beer", "count": 2}])
    note(shop, noted["id"])
    shop.post(f"/customer/deliveries/{received['id']}/receive", {}, token=CUSTOMER_TOKEN)
    events = shop.get("/account/events").data["events"]
    assert sorted((e["type"], e["delivery_id"]) for e in events) == [
        ("receive-delivery", received["id"]),
        ("request-delivery", noted["id"]),
        ("request-delivery", received["id"]),
    ]


def test_a_selected_delivery_delivered_event_carries_the_note(shop):
    hook = {"url": "https://erp.example.com/hook", "events": ["delivery.delivered"]}
    assert shop.put("/account/settings/webhooks", hook).status_code == 200
    delivery = place(shop, [{"id": "beer", "count": 2}])
    note(shop, delivery["id"], {"message": "all there"})
    receiver = Receiver()
    _send_all(receiver)
    (body,) = receiver.bodies
    assert (body["type"], body["resource"], body["id"]) == ("delivery.delivered", "delivery", str(delivery["id"]))
    assert body["data"] == shop.get(f"/deliveries/{delivery['id']}").data
    assert body["data"]["delivery_note"]["message"] == "all there"


def test_a_customer_reads_the_note_without_the_integration_state(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    note(shop, delivery["id"], {"user": USER})
    read = shop.get(f"/customer/deliveries/{delivery['id']}", token=CUSTOMER_TOKEN).data
    assert read["delivery_note"]["user"] == USER and "integration" not in read
