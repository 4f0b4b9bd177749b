"""Substitutes in ACCEPT and UPDATE responses (decisions §18): every check with its named field, the default price
(§6, on the delivery's date), vessel_count, the deposits they charge (§15), and the latest response that carries
`substitutions` states them."""

import pytest

from chalicelib.domain.delivery import SupplierDelivery
from tests.conftest import problem_paths

from .deliveries_helpers import (  # noqa: F401
    CUSTOMER,
    CUSTOMER_TOKEN,
    USER,
    assert_shape,
    place,
    put_customer_pricing,
    put_product,
    respond,
    shop,
)

HELLES = {
    "status": "ACTIVE",
    "category": "drinks",
    "name": "Helles 0.5",
    "vessel": {"size": 0.5, "unit": "l", "type": "BO", "deposit": "bottle"},
    "bundles": [
        {"id": "crate", "type": "CR", "size": 20, "deposit": "crate"},
        {"type": "PX", "size": 40, "pallet_bundle": {"type": "CR", "size": 20}},
    ],
    "price": 110,
}
CRATE = {"type": "CR", "size": 20}
SHOWN_CRATE = {"id": "crate", "type": "CR", "size": 20}


@pytest.fixture
def helles(shop):
    for deposit_id, name, price in (("bottle", "Bottle", 8), ("crate", "Crate", 150)):
        assert shop.put(f"/deposits/{deposit_id}", {"name": name, "price": price}).status_code == 200
    put_product(shop, "helles", HELLES)
    return shop


def _helles_for_beer(count=2, **fields) -> dict:
    return {"for": "beer", "id": "helles", "count": count, "bundle": CRATE, **fields}


def test_an_accept_names_a_substitute_shown_with_its_vessel_count_and_the_price_that_applies(helles):
    delivery = place(helles, [{"id": "beer", "count": 20}])
    response = respond(
        helles,
        delivery["id"],
        {
            "type": "ACCEPT",
            "items": [{"id": "beer", "count": 18, "reason": "SUBSTITUTED"}],
            "substitutions": [_helles_for_beer()],
        },
    )
    assert response.status_code == 200, response.data
    assert_shape(SupplierDelivery, response)
    answer = response.data["responses"][-1]
    assert answer["substitutions"] == [
        {"for": "beer", "id": "helles", "count": 2, "bundle": SHOWN_CRATE, "vessel_count": 40, "price": 110}
    ]
    assert list(answer["substitutions"][0]) == ["for", "id", "count", "bundle", "vessel_count", "price"]
    assert list(answer)[-2:] == ["items", "substitutions"]
    assert answer["items"] == [{"id": "beer", "count": 18, "vessel_count": 18, "reason": "SUBSTITUTED"}]
    assert helles.get(f"/deliveries/{delivery['id']}").data == response.data
    # The substitute's deposits are charged as any line's (§15): 40 bottles and 2 crates.
    assert response.data["deposits"]["charged"] == [
        {"id": "bottle", "name": "Bottle", "price": 8, "count": 40},
        {"id": "crate", "name": "Crate", "price": 150, "count": 2},
    ]


def test_a_substitute_takes_the_customers_price_unless_the_response_names_one(helles):
    put_customer_pricing("helles", CUSTOMER, price=99)
    delivery = place(helles, [{"id": "beer", "count": 20}])
    priced = respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": [_helles_for_beer()]})
    assert priced.data["responses"][-1]["substitutions"][0]["price"] == 99
    named = respond(helles, delivery["id"], {"type": "UPDATE", "substitutions": [_helles_for_beer(price=0)]})
    assert named.data["responses"][-1]["substitutions"][0]["price"] == 0


def test_the_default_price_is_the_one_on_the_delivery_s_date(helles):
    """§6: date_overrides apply by the delivery's date: here the date the response schedules."""
    pricing = {
        "strategy": "VOLUME",
        "price_points": [{"from": 1, "price": 110}],
        "date_overrides": [{"from_date": "2026-06-01", "price_points": [{"from": 1, "price": 80}]}],
    }
    put_product(helles, "helles", {**HELLES, "pricing": pricing})
    delivery = place(helles, [{"id": "beer", "count": 20}], scheduled={"date": "2026-05-29"})
    may = respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": [_helles_for_beer()]})
    assert may.data["responses"][-1]["substitutions"][0]["price"] == 110
    june = respond(
        helles,
        delivery["id"],
        {"type": "UPDATE", "scheduled": {"date": "2026-06-02"}, "substitutions": [_helles_for_beer()]},
    )
    assert june.data["responses"][-1]["substitutions"][0]["price"] == 80
    kept = respond(helles, delivery["id"], {"type": "UPDATE", "substitutions": [_helles_for_beer(count=3)]})
    assert kept.data["responses"][-1]["substitutions"][0]["price"] == 80  # the latest response's date still holds


def test_a_pallet_substitute_counts_its_vessels(helles):
    delivery = place(helles, [{"id": "beer", "count": 20}])
    response = respond(
        helles,
        delivery["id"],
        {
            "type": "ACCEPT",
            "substitutions": [{"for": "beer", "id": "helles", "count": 1, "bundle": {"type": "PX", "size": 40}}],
        },
    )
    assert response.status_code == 200, response.data
    substitute = response.data["responses"][-1]["substitutions"][0]
    assert substitute["vessel_count"] == 800 and substitute["bundle"]["pallet_bundle"] == CRATE


def test_substitutions_with_a_reject_are_a_400_naming_them(helles):
    delivery = place(helles, [{"id": "beer", "count": 20}])
    for substitutions in ([_helles_for_beer()], []):
        response = respond(helles, delivery["id"], {"type": "REJECT", "substitutions": substitutions})
        assert response.status_code == 400 and problem_paths(response) == ["substitutions"]
    assert helles.get(f"/deliveries/{delivery['id']}").data["status"] == "REQUESTED"


@pytest.mark.parametrize(
    "substitutions, paths",
    [
        ([{**_helles_for_beer(), "for": "wine"}], ["substitutions[0].for"]),
        ([_helles_for_beer(), {**_helles_for_beer(), "id": "water", "bundle": None}], ["substitutions[1].for"]),
        ([{**_helles_for_beer(), "id": "nope"}], ["substitutions[0].id"]),
        ([{**_helles_for_beer(), "id": "old", "bundle": None}], ["substitutions[0].id"]),
        ([{**_helles_for_beer(), "id": "cheese", "bundle": None}], ["substitutions[0].id"]),  # a line of the delivery
        ([{**_helles_for_beer(), "for": "cheese", "id": "beer", "bundle": None}], ["substitutions[0].id"]),
        (
            [_helles_for_beer(), {**_helles_for_beer(), "for": "cheese"}],  # the substitute of another line already
            ["substitutions[1].id"],
        ),
        ([_helles_for_beer(count=0)], ["substitutions[0].count"]),
        ([_helles_for_beer(count=-1)], ["substitutions[0].count"]),
        ([_helles_for_beer(count=1.5)], ["substitutions[0].count"]),
        ([_helles_for_beer(bundle={"type": "CT", "size": 6})], ["substitutions[0].bundle"]),
        ([{**_helles_for_beer(), "price": -1}], ["substitutions[0].price"]),
        ([{"id": "helles", "count": 1}], ["substitutions[0].for"]),
        ([{"for": "beer", "count": 1}], ["substitutions[0].id"]),
        ([{"for": "beer", "id": "helles"}], ["substitutions[0].count"]),
        ([{**_helles_for_beer(), "colour": "gold"}], ["substitutions[0].colour"]),
        (
            [{**_helles_for_beer(), "for": "wine", "id": "old"}, {"for": "cheese", "id": "helles", "count": 0}],
            ["substitutions[0].for", "substitutions[0].id", "substitutions[1].count"],
        ),
    ],
)
def test_every_check_of_a_substitute_names_its_field(helles, substitutions, paths):
    delivery = place(helles, [{"id": "beer", "count": 20}, {"id": "cheese", "count": 2}])
    response = respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": substitutions})
    assert response.status_code == 400, response.data
    assert problem_paths(response) == paths
    assert helles.get(f"/deliveries/{delivery['id']}").data["responses"] == []


def test_a_line_shown_by_its_bundle_id_override_is_its_product(helles):
    """beer ordered by the crate shows as `beer-crate`: the product beer is that line, so it cannot substitute."""
    delivery = place(helles, [{"id": "beer", "count": 1, "bundle": {"id": "crate"}}, {"id": "cheese", "count": 2}])
    assert [item["id"] for item in delivery["request"]["items"]] == ["beer-crate", "cheese"]
    refused = respond(
        helles, delivery["id"], {"type": "ACCEPT", "substitutions": [{"for": "cheese", "id": "beer", "count": 1}]}
    )
    assert refused.status_code == 400 and problem_paths(refused) == ["substitutions[0].id"]
    by_product = respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": [_helles_for_beer()]})
    assert problem_paths(by_product) == ["substitutions[0].for"]  # `for` names a line by the id the delivery shows
    ok = respond(
        helles, delivery["id"], {"type": "ACCEPT", "substitutions": [{**_helles_for_beer(), "for": "beer-crate"}]}
    )
    assert ok.status_code == 200, ok.data


def test_a_substitute_may_be_out_of_stock_or_by_the_kilo(helles):
    delivery = place(helles, [{"id": "beer", "count": 20}])
    response = respond(
        helles, delivery["id"], {"type": "ACCEPT", "substitutions": [{"for": "beer", "id": "wine", "count": 2}]}
    )
    assert response.status_code == 200, response.data
    other = place(helles, [{"id": "water", "count": 3}])
    weighed = respond(
        helles, other["id"], {"type": "ACCEPT", "substitutions": [{"for": "water", "id": "cheese", "count": 0.75}]}
    )
    assert weighed.status_code == 200, weighed.data
    assert weighed.data["responses"][-1]["substitutions"][0]["vessel_count"] == 0.75
    below = respond(
        helles, other["id"], {"type": "UPDATE", "substitutions": [{"for": "water", "id": "cheese", "count": 0.25}]}
    )
    assert below.status_code == 400 and problem_paths(below) == ["substitutions[0].count"]  # below min_order_count


def test_a_customer_that_takes_no_substitutes_refuses_them(helles):
    assert helles.patch(f"/customers/{CUSTOMER}", {"substitutions": "NOT_ALLOWED"}).status_code == 200
    delivery = place(helles, [{"id": "beer", "count": 20}])
    refused = respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": [_helles_for_beer()]})
    assert refused.status_code == 400 and problem_paths(refused) == ["substitutions[0].for"]
    assert "takes no substitutes" in refused.data["errors"][0]["message"]
    cleared = respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": []})  # naming none is fine
    assert cleared.status_code == 200, cleared.data
    assert helles.patch(f"/customers/{CUSTOMER}", {"substitutions": "ALLOWED"}).status_code == 200
    assert respond(helles, delivery["id"], {"type": "UPDATE", "substitutions": [_helles_for_beer()]}).status_code == 200


def test_a_line_ordered_with_substitute_false_refuses_them(helles):
    delivery = place(helles, [{"id": "beer", "count": 20, "substitute": False}, {"id": "cheese", "count": 2}])
    refused = respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": [_helles_for_beer()]})
    assert refused.status_code == 400 and problem_paths(refused) == ["substitutions[0].for"]
    assert "substitute false" in refused.data["errors"][0]["message"]
    other = respond(
        helles, delivery["id"], {"type": "ACCEPT", "substitutions": [{**_helles_for_beer(), "for": "cheese"}]}
    )
    assert other.status_code == 200, other.data


def test_the_latest_response_that_carries_substitutions_states_them(helles):
    delivery = place(helles, [{"id": "beer", "count": 20}])
    path = f"/deliveries/{delivery['id']}"
    respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": [_helles_for_beer()]})
    kept = respond(helles, delivery["id"], {"type": "UPDATE", "reference": "R-1"})
    assert "substitutions" not in kept.data["responses"][-1]
    assert kept.data["deposits"]["charged"][0]["count"] == 40  # still the first response's substitute
    changed = respond(helles, delivery["id"], {"type": "UPDATE", "substitutions": [_helles_for_beer(count=1)]})
    assert changed.data["deposits"]["charged"] == [
        {"id": "bottle", "name": "Bottle", "price": 8, "count": 20},
        {"id": "crate", "name": "Crate", "price": 150, "count": 1},
    ]
    cleared = respond(helles, delivery["id"], {"type": "UPDATE", "substitutions": []})
    assert cleared.data["responses"][-1]["substitutions"] == []
    assert "deposits" not in helles.get(path).data  # nothing charges deposits any more


def test_an_amendment_makes_earlier_substitutes_history(helles):
    delivery = place(helles, [{"id": "beer", "count": 20}], scheduled={"date": "2026-05-29"})
    respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": [_helles_for_beer()]})
    amended = helles.post(
        f"/customer/deliveries/{delivery['id']}/amendments",
        {"items": [{"id": "beer", "count": 24}], "user": USER},
        token=CUSTOMER_TOKEN,
    )
    assert amended.status_code == 200, amended.data
    assert amended.data["responses"][0]["substitutions"][0]["id"] == "helles"  # kept as history
    assert "deposits" not in amended.data  # but it states nothing any more (decisions §16)


def test_a_receive_moves_the_balances_of_the_substitute_s_deposits(helles):
    delivery = place(helles, [{"id": "beer", "count": 20}])
    respond(helles, delivery["id"], {"type": "ACCEPT", "substitutions": [_helles_for_beer()]})
    received = helles.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN)
    assert received.status_code == 200, received.data
    balances = {d["id"]: d["balance"] for d in helles.get(f"/customers/{CUSTOMER}/deposits").data["deposits"]}
    assert balances == {"bottle": 40, "crate": 2}
    movements = helles.get(f"/customers/{CUSTOMER}/deposits/movements").data["movements"]
    assert [(m["id"], m["count"], m["delivery_id"]) for m in movements] == [
        ("bottle", 40, delivery["id"]),
        ("crate", 2, delivery["id"]),
    ]


def test_a_product_a_delivery_holds_only_as_a_substitute_is_not_deleted(helles):
    """decisions §5: DELETE /products/:id is 400 conflict once any delivery contains the product; a substitute is a
    line the delivery holds (§18), whether a response or the delivery note names it, with deposits or without."""
    put_product(helles, "cola", {"status": "ACTIVE", "category": "drinks", "name": "Cola", "price": 90})
    assert helles.delete("/products/cola").status_code == 204  # held by no delivery yet
    put_product(helles, "cola", {"status": "ACTIVE", "category": "drinks", "name": "Cola", "price": 90})
    accepted = place(helles, [{"id": "beer", "count": 20}])
    body = {"type": "ACCEPT", "substitutions": [_helles_for_beer()]}
    assert respond(helles, accepted["id"], body).status_code == 200
    noted = place(helles, [{"id": "beer", "count": 20}])
    note = {"number": "LS-1", "substitutions": [{"for": "beer", "id": "cola", "count": 2}]}
    assert helles.post(f"/deliveries/{noted['id']}/delivery-note", note).status_code == 200
    for product_id in ("helles", "cola"):
        refused = helles.delete(f"/products/{product_id}")
        assert (refused.status_code, refused.data["type"]) == (400, "conflict")
        assert helles.get(f"/products/{product_id}").status_code == 200
    shown = helles.get(f"/deliveries/{noted['id']}").data["delivery_note"]["substitutions"]
    assert [s["id"] for s in shown] == ["cola"]
