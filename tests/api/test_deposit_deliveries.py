"""Deposits and empties on orders, responses and deliveries, and balances moved by receive (decisions §15)."""

import pytest

from tests.api.customer_support import dynamodb_calls
from tests.api.deliveries_helpers import (  # noqa: F401
    CUSTOMER,
    CUSTOMER_TOKEN,
    USER,
    order,
    place,
    put_product,
    respond,
    shop,
)
from tests.conftest import problem_paths

LAGER = {
    "status": "ACTIVE",
    "category": "drinks",
    "name": "Lager 0.5",
    "vessel": {"size": 0.5, "unit": "l", "type": "BO", "deposit": "bottle"},
    "bundles": [
        {"type": "CR", "size": 20, "deposit": "crate"},
        {"type": "PX", "size": 40, "pallet_bundle": {"type": "CR", "size": 20}, "deposit": "pallet"},
    ],
    "price": 100,
}
CRATE = {"type": "CR", "size": 20}
PALLET = {"type": "PX", "size": 40}
BOTTLE_E = {"id": "bottle", "name": "Bottle", "price": 8}
CRATE_E = {"id": "crate", "name": "Crate", "price": 150}
PALLET_E = {"id": "pallet", "name": "Pallet", "price": 1500}


@pytest.fixture
def drinks(shop):
    for entry in (BOTTLE_E, CRATE_E, PALLET_E, {"id": "keg", "name": "Keg", "price": 3000}):
        assert shop.put(f"/deposits/{entry['id']}", {"name": entry["name"], "price": entry["price"]}).status_code == 200
    put_product(shop, "lager", LAGER)
    return shop


def test_a_crate_of_20_bottles_is_charged(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    item = delivery["request"]["items"][0]
    assert item["deposits"] == [{"id": "bottle", "count": 20}, {"id": "crate", "count": 1}]
    assert list(item)[-1] == "deposits"
    assert "deposit" not in item["vessel"] and "deposit" not in item["bundle"]
    assert delivery["request"]["deposits"] == [{**BOTTLE_E, "count": 20}, {**CRATE_E, "count": 1}]
    assert "empties" not in delivery["request"]
    assert delivery["deposits"] == {"charged": delivery["request"]["deposits"], "returned": [], "total": 20 * 8 + 150}
    assert list(delivery)[-1] == "deposits"
    shown = drinks.get(f"/deliveries/{delivery['id']}").data
    assert shown["deposits"] == delivery["deposits"]
    assert list(shown)[-2:] == ["deposits", "integration"]
    assert (
        drinks.get(f"/customer/deliveries/{delivery['id']}", token=CUSTOMER_TOKEN).data["deposits"]
        == delivery["deposits"]
    )


def test_a_pallet_of_40_crates(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": PALLET}])
    assert delivery["request"]["items"][0]["deposits"] == [
        {"id": "bottle", "count": 800},
        {"id": "crate", "count": 40},
        {"id": "pallet", "count": 1},
    ]
    assert delivery["deposits"]["total"] == 800 * 8 + 40 * 150 + 1500


def test_no_deposits_nothing_shown(drinks):
    delivery = place(drinks, [{"id": "water", "count": 2}])
    assert "deposits" not in delivery and "deposits" not in delivery["request"]
    assert "deposits" not in delivery["request"]["items"][0]
    assert "deposits" not in drinks.get(f"/deliveries/{delivery['id']}").data


def test_lists_leave_deposits_out(drinks):
    place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    listed = drinks.get("/deliveries").data["deliveries"][0]
    assert "deposits" not in listed
    assert "deposits" not in drinks.get("/customer/deliveries", token=CUSTOMER_TOKEN).data["deliveries"][0]


def test_empties_announced_with_an_order(drinks):
    delivery = place(
        drinks,
        [{"id": "lager", "count": 1, "bundle": CRATE}],
        empties=[{"id": "keg", "count": 1}, {"id": "crate", "count": 2}],
    )
    assert delivery["request"]["empties"] == [
        {**CRATE_E, "count": 2},
        {"id": "keg", "name": "Keg", "price": 3000, "count": 1},
    ]
    assert delivery["deposits"]["returned"] == []  # announced, not yet confirmed by the supplier
    assert delivery["deposits"]["total"] == 20 * 8 + 150
    accepted = respond(drinks, delivery["id"], {"type": "ACCEPT"}).data
    assert accepted["deposits"]["returned"] == delivery["request"]["empties"]
    assert accepted["deposits"]["total"] == 20 * 8 + 150 - 300 - 3000


@pytest.mark.parametrize(
    "empties, paths",
    [
        ([{"id": "nope", "count": 1}], ["empties[0].id"]),
        ([{"id": "crate", "count": 1}, {"id": "crate", "count": 2}], ["empties[1].id"]),
        ([{"id": "crate", "count": 0}], ["empties[0].count"]),
        ([{"id": "crate", "count": 100_001}], ["empties[0].count"]),
        ([{"id": "crate", "count": 1.5}], ["empties[0].count"]),
        ([{"id": f"t{i}", "count": 1} for i in range(51)], ["empties"]),
    ],
)
def test_bad_empties(drinks, empties, paths):
    response = order(drinks, [{"id": "lager", "count": 1}], empties=empties)
    assert response.status_code == 400
    assert problem_paths(response) == paths


def test_empties_bounds_pass(drinks):
    for i in range(46):
        drinks.put(f"/deposits/t{i:02d}", {"name": "Type", "price": 1})
    empties = [{"id": f"t{i:02d}", "count": 1} for i in range(46)] + [
        {"id": d, "count": 100_000} for d in ("bottle", "crate", "keg", "pallet")
    ]
    response = order(drinks, [{"id": "lager", "count": 1}], empties=empties)
    assert response.status_code == 200, response.data
    assert len(response.data["deliveries"][0]["request"]["empties"]) == 50


def test_a_return_may_carry_only_empties(drinks):
    delivery = place(drinks, [], type="RETURN", empties=[{"id": "crate", "count": 3}])
    assert delivery["request"]["items"] == []
    assert "deposits" not in delivery  # nothing confirmed before the supplier's ACCEPT
    accepted = respond(drinks, delivery["id"], {"type": "ACCEPT"}).data
    assert accepted["deposits"] == {"charged": [], "returned": [{**CRATE_E, "count": 3}], "total": -450}
    response = drinks.post(
        "/customer/deliveries",
        {"type": "RETURN", "user": USER, "empties": [{"id": "crate", "count": 1}]},
        token=CUSTOMER_TOKEN,
    )
    assert response.status_code == 200, response.data


def test_other_orders_need_an_item(drinks):
    response = order(drinks, [], empties=[{"id": "crate", "count": 3}])
    assert response.status_code == 400
    assert problem_paths(response) == ["items"]
    response = drinks.post("/customer/deliveries", {"user": USER}, token=CUSTOMER_TOKEN)
    assert problem_paths(response) == ["items"]
    response = drinks.post(
        "/customer/deliveries", {"type": "RETURN", "user": USER, "empties": []}, token=CUSTOMER_TOKEN
    )
    assert problem_paths(response) == ["items"]  # a return of nothing


def test_a_return_gives_back_what_its_items_carry(drinks):
    delivery = place(
        drinks, [{"id": "lager", "count": 2, "bundle": CRATE}], type="RETURN", empties=[{"id": "keg", "count": 1}]
    )
    assert delivery["request"]["deposits"] == [{**BOTTLE_E, "count": 40}, {**CRATE_E, "count": 2}]
    assert "deposits" not in delivery
    delivery = respond(drinks, delivery["id"], {"type": "ACCEPT"}).data
    assert delivery["deposits"]["charged"] == []
    assert delivery["deposits"]["returned"] == [
        {**BOTTLE_E, "count": 40},
        {**CRATE_E, "count": 2},
        {"id": "keg", "name": "Keg", "price": 3000, "count": 1},
    ]
    assert delivery["deposits"]["total"] == -(320 + 300 + 3000)


def test_prices_fixed_at_order_time(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}], empties=[{"id": "keg", "count": 1}])
    drinks.put("/deposits/crate", {"name": "Crate new", "price": 999})
    drinks.put("/deposits/keg", {"name": "Keg new", "price": 1})
    shown = drinks.get(f"/deliveries/{delivery['id']}").data
    assert shown["request"] == delivery["request"]
    assert shown["deposits"] == delivery["deposits"]


def test_responses_collect_empties_and_change_counts(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 2, "bundle": CRATE}], empties=[{"id": "crate", "count": 5}])
    response = respond(
        drinks,
        delivery["id"],
        {
            "type": "ACCEPT",
            "items": [{"id": "lager", "count": 1}],
            "empties": [{"id": "crate", "count": 3}, {"id": "keg", "count": 0}],
        },
    )
    assert response.status_code == 200, response.data
    answered = response.data
    assert answered["responses"][0]["empties"] == [
        {**CRATE_E, "count": 3},
        {"id": "keg", "name": "Keg", "price": 3000, "count": 0},
    ]
    assert list(answered["responses"][0])[-1] == "empties"
    assert answered["deposits"] == {
        "charged": [{**BOTTLE_E, "count": 20}, {**CRATE_E, "count": 1}],
        "returned": [{**CRATE_E, "count": 3}],
        "total": 160 + 150 - 450,
    }
    assert list(answered)[-2:] == ["deposits", "integration"]
    # An UPDATE without empties keeps what the ACCEPT collected; one with [] says nothing comes back.
    assert respond(drinks, delivery["id"], {"type": "UPDATE", "reference": "R1"}).data["deposits"]["returned"] == [
        {**CRATE_E, "count": 3}
    ]
    cleared = respond(drinks, delivery["id"], {"type": "UPDATE", "empties": []}).data
    assert cleared["responses"][-1]["empties"] == []
    assert cleared["deposits"]["returned"] == []


def test_a_response_switching_to_a_pallet(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    answered = respond(
        drinks,
        delivery["id"],
        {
            "type": "ACCEPT",
            "items": [{"id": "lager", "count": 1, "bundle": {"type": "PX", "size": 40, "pallet_bundle": CRATE}}],
        },
    ).data
    assert {e["id"]: e["count"] for e in answered["deposits"]["charged"]} == {"bottle": 800, "crate": 40, "pallet": 1}


def test_reject_takes_no_empties(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1}])
    response = respond(drinks, delivery["id"], {"type": "REJECT", "empties": []})
    assert response.status_code == 400
    assert problem_paths(response) == ["empties"]
    assert respond(drinks, delivery["id"], {"type": "REJECT"}).status_code == 200


@pytest.mark.parametrize(
    "empties, paths",
    [
        ([{"id": "nope", "count": 0}], ["empties[0].id"]),
        ([{"id": "crate", "count": 1}, {"id": "crate", "count": 0}], ["empties[1].id"]),
        ([{"id": "crate", "count": -1}], ["empties[0].count"]),
        ([{"id": "crate", "count": 100_001}], ["empties[0].count"]),
    ],
)
def test_bad_response_empties(drinks, empties, paths):
    delivery = place(drinks, [{"id": "lager", "count": 1}])
    response = respond(drinks, delivery["id"], {"type": "ACCEPT", "empties": empties})
    assert response.status_code == 400
    assert problem_paths(response) == paths


def test_item_and_empties_errors_together(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1}])
    response = respond(
        drinks, delivery["id"], {"type": "ACCEPT", "items": [{"id": "nope"}], "empties": [{"id": "nope", "count": 1}]}
    )
    assert problem_paths(response) == ["items[0].id", "empties[0].id"]


def test_a_type_the_order_named_keeps_its_price_in_responses(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}], empties=[{"id": "keg", "count": 1}])
    drinks.put("/deposits/crate", {"name": "Crate new", "price": 999})
    drinks.put("/deposits/keg", {"name": "Keg new", "price": 1})
    answered = respond(
        drinks, delivery["id"], {"type": "ACCEPT", "empties": [{"id": "crate", "count": 2}, {"id": "keg", "count": 1}]}
    ).data
    assert answered["responses"][0]["empties"] == [
        {**CRATE_E, "count": 2},
        {"id": "keg", "name": "Keg", "price": 3000, "count": 1},
    ]
    assert answered["deposits"]["charged"] == delivery["deposits"]["charged"]
    assert answered["deposits"]["total"] == 20 * 8 + 150 - 300 - 3000


def test_a_type_first_named_by_a_response_takes_its_price_then(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1}])  # bottles only: crates are not named yet
    drinks.put("/deposits/keg", {"name": "Keg", "price": 3300})
    drinks.put("/deposits/crate", {"name": "Crate", "price": 160})
    answered = respond(
        drinks, delivery["id"], {"type": "ACCEPT", "empties": [{"id": "keg", "count": 1}, {"id": "crate", "count": 1}]}
    ).data
    assert answered["deposits"]["returned"] == [
        {"id": "crate", "name": "Crate", "price": 160, "count": 1},
        {"id": "keg", "name": "Keg", "price": 3300, "count": 1},
    ]
    drinks.put("/deposits/keg", {"name": "Keg", "price": 1})
    again = respond(drinks, delivery["id"], {"type": "UPDATE", "empties": [{"id": "keg", "count": 2}]}).data
    assert again["deposits"]["returned"] == [{"id": "keg", "name": "Keg", "price": 3300, "count": 2}]


def balances(api, token=None):
    if token:
        return api.get("/customer/deposits", token=token).data
    return api.get(f"/customers/{CUSTOMER}/deposits").data


def test_receive_moves_the_balances(drinks):
    assert balances(drinks)["total"] == 0
    assert [b["balance"] for b in balances(drinks)["deposits"]] == [0, 0, 0, 0]
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": PALLET}], empties=[{"id": "crate", "count": 10}])
    respond(drinks, delivery["id"], {"type": "ACCEPT"})
    received = drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN)
    assert received.status_code == 200, received.data
    assert received.data["deposits"]["total"] == 800 * 8 + 40 * 150 + 1500 - 1500
    held = balances(drinks)
    assert held == {
        "deposits": [
            {**BOTTLE_E, "balance": 800},
            {**CRATE_E, "balance": 30},
            {"id": "keg", "name": "Keg", "price": 3000, "balance": 0},
            {**PALLET_E, "balance": 1},
        ],
        "total": 6400 + 4500 + 1500,
    }
    assert balances(drinks, CUSTOMER_TOKEN) == held


def test_a_return_lowers_the_balance_and_may_go_below_zero(drinks):
    delivery = place(drinks, [], type="RETURN", empties=[{"id": "crate", "count": 2}])
    respond(drinks, delivery["id"], {"type": "ACCEPT"})
    drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN)
    assert {b["id"]: b["balance"] for b in balances(drinks)["deposits"]}["crate"] == -2
    assert balances(drinks)["total"] == -300


def test_cancel_moves_nothing(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    cancelled = drinks.post(f"/customer/deliveries/{delivery['id']}/cancel", {}, token=CUSTOMER_TOKEN)
    assert cancelled.data["deposits"] == delivery["deposits"]
    assert balances(drinks)["total"] == 0


def test_an_order_with_deposits_makes_no_more_requests(drinks):
    place(drinks, [{"id": "water", "count": 1}])  # the token is known from now on
    with dynamodb_calls() as plain:
        place(drinks, [{"id": "water", "count": 1}])
    with dynamodb_calls() as charged:
        place(drinks, [{"id": "lager", "count": 1, "bundle": PALLET}], empties=[{"id": "crate", "count": 1}])
    assert charged == plain


@pytest.mark.pending_feed  # the receive's own requests: the stream's numbering comes later
def test_a_receive_moving_balances_makes_no_more_requests(drinks):
    plain = place(drinks, [{"id": "water", "count": 1}])
    charged = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    with dynamodb_calls() as without:
        drinks.post(f"/customer/deliveries/{plain['id']}/receive", {}, token=CUSTOMER_TOKEN)
    with dynamodb_calls() as moving:
        drinks.post(f"/customer/deliveries/{charged['id']}/receive", {}, token=CUSTOMER_TOKEN)
    # The delivery alone is one item, written with its feed mark in a single UpdateItem; the balances it moves go
    # in the same write, which makes it a transaction: no request more.
    assert without == ["BatchGetItem", "UpdateItem"]
    assert moving == ["BatchGetItem", "TransactWriteItems"]


def test_a_customer_receiving_without_an_accept_credits_nothing(drinks):
    """The review's reproduction: a customer token alone places a RETURN and receives it at once."""
    lots = [{"id": d, "count": 100_000} for d in ("bottle", "crate", "keg", "pallet")]
    delivery = place(drinks, [{"id": "lager", "count": 2, "bundle": CRATE}], type="RETURN", empties=lots)
    received = drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN)
    assert received.status_code == 200, received.data
    assert "deposits" not in received.data
    assert balances(drinks)["total"] == 0
    ordered = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}], empties=lots)
    received = drinks.post(f"/customer/deliveries/{ordered['id']}/receive", {}, token=CUSTOMER_TOKEN).data
    assert received["deposits"]["returned"] == []
    assert {b["id"]: b["balance"] for b in balances(drinks)["deposits"]} == {
        "bottle": 20,
        "crate": 1,
        "keg": 0,
        "pallet": 0,
    }


def test_order_file_rows(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}], empties=[{"id": "keg", "count": 2}])
    respond(drinks, delivery["id"], {"type": "ACCEPT"})
    text = drinks.client.http.get(
        f"/deliveries/{delivery['id']}/csv",
        headers={"Authorization": "token test-supplier-token", "Accept": "text/csv"},
    ).body.decode("utf-8-sig")
    lines = text.split("\n")
    i = delivery["id"]
    assert lines[-4:] == [
        f"{i},bottle,Bottle,,,,,,,,20,,8,,deposit",
        f"{i},crate,Crate,,,,,,,,1,,150,,deposit",
        f"{i},keg,Keg,,,,,,,,-2,,3000,,empties",
        "",
    ]
    assert lines[-5].startswith(f"{i},lager,Lager 0.5,")


def test_order_file_without_deposits_has_no_such_rows(drinks):
    delivery = place(drinks, [{"id": "water", "count": 1}])
    text = drinks.client.http.get(
        f"/deliveries/{delivery['id']}/csv",
        headers={"Authorization": "token test-supplier-token", "Accept": "text/csv"},
    ).body.decode("utf-8-sig")
    assert "deposit" not in text and "empties" not in text


def test_adjustments(drinks):
    body = {"id": "crate", "count": 12, "message": "opening balance"}
    response = drinks.post(f"/customers/{CUSTOMER}/deposits", body)
    assert response.status_code == 200, response.data
    assert response.data == balances(drinks)
    assert {b["id"]: b["balance"] for b in response.data["deposits"]}["crate"] == 12
    assert list(response.data) == ["deposits", "total"] and list(response.data["deposits"][0]) == [
        "id",
        "name",
        "price",
        "balance",
    ]
    response = drinks.post(f"/customers/{CUSTOMER}/deposits", {**body, "count": -100_000, "message": "x" * 500})
    assert response.status_code == 200
    assert response.data["total"] == (12 - 100_000) * 150
    changes = drinks.get("/changes?include=data").data["changes"]
    assert [(c["type"], c["resource"], c["id"]) for c in changes[-2:]] == [
        ("customer-deposits.updated", "customer-deposits", CUSTOMER)
    ] * 2
    assert changes[-1]["data"] == response.data


@pytest.mark.parametrize(
    "body, paths",
    [
        ({"id": "crate", "count": 0, "message": "m"}, ["count"]),
        ({"id": "crate", "count": 100_001, "message": "m"}, ["count"]),
        ({"id": "crate", "count": -100_001, "message": "m"}, ["count"]),
        ({"id": "crate", "count": 1.5, "message": "m"}, ["count"]),
        ({"id": "crate", "count": 1, "message": ""}, ["message"]),
        ({"id": "crate", "count": 1, "message": "x" * 501}, ["message"]),
        ({"id": "crate", "count": 1}, ["message"]),
        ({"id": "nope", "count": 1, "message": "m"}, ["id"]),
        ({"count": 1, "message": "m"}, ["id"]),
    ],
)
def test_bad_adjustments(drinks, body, paths):
    response = drinks.post(f"/customers/{CUSTOMER}/deposits", body)
    assert response.status_code == 400, response.data
    assert problem_paths(response) == paths
    assert balances(drinks)["total"] == 0


def test_unknown_customer(drinks):
    assert drinks.get("/customers/nobody/deposits").status_code == 404
    assert drinks.post("/customers/nobody/deposits", {"id": "crate", "count": 1, "message": "m"}).status_code == 404


def test_customers_read_only_their_own(drinks):
    assert (
        drinks.post(
            f"/customers/{CUSTOMER}/deposits", {"id": "crate", "count": 1, "message": "m"}, token=CUSTOMER_TOKEN
        ).status_code
        == 403
    )
    assert drinks.get(f"/customers/{CUSTOMER}/deposits", token=CUSTOMER_TOKEN).status_code == 403
    assert drinks.get("/customer/deposits").status_code == 403


def test_webhook_event_data_carries_deposits(drinks):
    import json

    from chalicelib.service.changes import event_body
    from chalicelib.store import events

    hook = {
        "url": "https://example.com/hook",
        "events": ["request-delivery", "delivery.delivered", "customer-deposits.updated"],
    }
    assert drinks.put("/account/settings/webhooks", hook).status_code == 200
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN)
    drinks.post(f"/customers/{CUSTOMER}/deposits", {"id": "keg", "count": 1, "message": "found one"})
    listed = sorted(drinks.get("/account/events").data["events"], key=lambda e: -e["sequence"])  # one clock time
    assert [e["type"] for e in listed] == ["customer-deposits.updated", "delivery.delivered", "request-delivery"]
    bodies = [json.loads(event_body(events.get("acme", e["id"]))) for e in listed]
    assert bodies[2]["data"]["deposits"] == delivery["deposits"]
    assert bodies[1]["data"]["deposits"] == delivery["deposits"]
    assert bodies[0]["data"] == balances(drinks)


def test_the_readme_session(drinks):
    """docs/deposits.md: a crate, a pallet with 30 crates announced and 28 collected, the balance."""
    crate = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    pallet = place(drinks, [{"id": "lager", "count": 1, "bundle": PALLET}], empties=[{"id": "crate", "count": 30}])
    assert (
        respond(drinks, pallet["id"], {"type": "ACCEPT", "empties": [{"id": "crate", "count": 28}]}).status_code == 200
    )
    for delivery in (crate, pallet):
        assert (
            drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN).status_code == 200
        )
    held = balances(drinks)
    assert {b["id"]: b["balance"] for b in held["deposits"]} == {"bottle": 820, "crate": 13, "keg": 0, "pallet": 1}
    assert held["total"] == 820 * 8 + 13 * 150 + 1500 == 10010
