"""POST /customer/deliveries and the customer's own deliveries (decisions §6-8, §10)."""

import json

import pytest

from chalicelib.domain.delivery import Delivery, DeliveryList, PlacedDeliveries
from chalicelib.service import event_sending as sending
from chalicelib.store import keys, table
from tests.conftest import problem_paths
from tests.problems import assert_problem

from .deliveries_helpers import (  # noqa: F401  (shop is a fixture)
    ADDRESS,
    CONTACT,
    CUSTOMER_TOKEN,
    OTHER_CUSTOMER_TOKEN,
    USER,
    assert_shape,
    order,
    place,
    put_customer,
    put_customer_pricing,
    put_price_groups,
    put_product,
    put_settings,
    shop,
)


def events(account="acme"):
    response = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.event_key(account, "")["PK"]),
    )
    # What each event would send now (its body is built from the delivery when it is sent).
    return [json.loads(sending.body_of(table.from_item(item))) for item in response["Items"]]


def test_an_order_is_a_delivery_in_the_supplier_shape(shop):
    response = order(shop, [{"id": "beer", "count": 3}], cost_center="bar-1")
    assert response.status_code == 200
    assert_shape(PlacedDeliveries, response)
    assert response.data == {
        "deliveries": [
            {
                "id": 1,
                "type": "DELIVERY",
                "status": "REQUESTED",
                "customer": {"id": "c1", "company": "Bar Oy", "address": ADDRESS, "contact": CONTACT},
                "request": {
                    "timestamp": "2026-05-04T09:30:00.000Z",
                    "company": "Bar Oy",
                    "customer_id": "c1",
                    "cost_center": "bar-1",
                    "address": ADDRESS,
                    "scheduled": None,
                    "user": USER,
                    "items": [
                        {
                            "id": "beer",
                            "name": "Pale Ale",
                            "vessel": {"id": "v-33", "size": 0.33, "unit": "l", "type": "BO"},
                            "count": 3,
                            "bundle": None,
                            "vessel_count": 3,
                            "price": 150,
                            "price_per": "vessel",
                        }
                    ],
                },
                "responses": [],
            }
        ]
    }
    # The supplier reads the same delivery, with its integration state after it (decisions §14).
    assert shop.get("/deliveries/1").data == {**response.data["deliveries"][0], "integration": {"status": "PENDING"}}


def test_body_fields_win_over_the_customer_profile(shop):
    address = {"address1": "Dock 4", "address2": "Gate B", "zip": "00200", "city": "Espoo", "country": "FI"}
    delivery = place(shop, [{"id": "beer", "count": 1}], company="Bar Oy Espoo", address=address, type="RETURN")
    assert delivery["type"] == "RETURN"
    assert delivery["request"]["company"] == "Bar Oy Espoo"
    assert delivery["request"]["address"] == address
    assert delivery["customer"] == {"id": "c1", "company": "Bar Oy", "address": ADDRESS, "contact": CONTACT}


def test_without_a_profile_address_the_order_must_give_one(shop):
    put_customer("c1", company="Bar Oy")
    response = order(shop, [{"id": "beer", "count": 1}])
    assert response.status_code == 400
    assert problem_paths(response) == ["address"]
    delivery = place(shop, [{"id": "beer", "count": 1}], address=ADDRESS)
    assert delivery["customer"] == {"id": "c1", "company": "Bar Oy", "address": ADDRESS, "contact": USER}


def test_bundles_by_id_or_type_and_size_set_vessel_count_and_id_override(shop):
    items = place(shop, [{"id": "beer", "count": 2, "bundle": {"id": "crate"}}, {"id": "cheese", "count": 2.5}])[
        "request"
    ]["items"]
    crate, cheese = items
    assert crate["id"] == "beer-crate"
    assert crate["bundle"] == {"id": "crate", "type": "CT", "size": 24}
    assert crate["vessel_count"] == 48
    assert cheese == {
        "id": "cheese",
        "name": "Cheddar",
        "order_by": "kg",
        "vessel": None,
        "count": 2.5,
        "bundle": None,
        "vessel_count": 2.5,
        "price": 1200,
    }
    (pallet,) = place(shop, [{"id": "beer", "count": 2, "bundle": {"type": "PX", "size": 10}}])["request"]["items"]
    assert pallet["id"] == "beer"
    assert pallet["bundle"] == {
        "id": "pallet",
        "type": "PX",
        "size": 10,
        "pallet_bundle": {"id": "crate", "type": "CT", "size": 24},
    }
    assert pallet["vessel_count"] == 2 * 10 * 24


def test_item_message_and_order_message_are_kept(shop):
    delivery = place(shop, [{"id": "beer", "count": 1, "message": "cold ones"}], message="back door")
    assert delivery["request"]["message"] == "back door"
    assert delivery["request"]["items"][0]["message"] == "cold ones"


def test_a_product_without_price_gets_a_null_expected_price(shop):
    (item,) = place(shop, [{"id": "water", "count": 1}])["request"]["items"]
    assert item["price"] is None
    assert "price_per" not in item and "order_by" not in item


# --- prices: customer pricing, then the price group, then the product (decisions §6) ---


def test_customer_pricing_wins(shop):
    put_customer_pricing("beer", "c1", price=120)
    put_price_groups("beer", {"gold": {"price": 130}})
    put_customer("c1", company="Bar Oy", address=ADDRESS, contact=CONTACT, price_group="gold")
    assert place(shop, [{"id": "beer", "count": 1}])["request"]["items"][0]["price"] == 120


def test_price_group_applies_without_customer_pricing(shop):
    put_price_groups("beer", {"gold": {"price": 130}, "silver": {"price": 140}})
    put_customer("c1", company="Bar Oy", address=ADDRESS, contact=CONTACT, price_group="gold")
    assert place(shop, [{"id": "beer", "count": 1}])["request"]["items"][0]["price"] == 130
    put_customer("c1", company="Bar Oy", address=ADDRESS, contact=CONTACT, price_group="bronze")
    assert place(shop, [{"id": "beer", "count": 1}])["request"]["items"][0]["price"] == 150


def test_scaled_pricing_gives_the_expected_unit_price(shop):
    pricing = {"strategy": "INCREMENTAL", "price_points": [{"from": 1, "price": 200}, {"from": 3, "price": 100}]}
    put_product(shop, "keg", {"status": "ACTIVE", "category": "drinks", "name": "Keg", "pricing": pricing})
    # units 1-2 at 200, units 3-4 at 100: 600 / 4
    assert place(shop, [{"id": "keg", "count": 4}])["request"]["items"][0]["price"] == 150


def test_no_applicable_price_is_refused(shop):
    pricing = {"strategy": "DIVISIBLE", "price_points": [{"from": 6, "price": 100}]}
    put_product(shop, "six", {"status": "ACTIVE", "category": "drinks", "name": "Six pack", "pricing": pricing})
    response = order(shop, [{"id": "six", "count": 7}])
    assert response.status_code == 400
    assert problem_paths(response) == ["items[0].count"]
    assert place(shop, [{"id": "six", "count": 12}])["request"]["items"][0]["price"] == 100


# --- validation: one error per problem ---


@pytest.mark.parametrize(
    "item, path",
    [
        ({"id": "nope", "count": 1}, "items[0].id"),
        ({"id": "old", "count": 1}, "items[0].id"),
        ({"id": "beer", "count": 0}, "items[0].count"),
        ({"id": "beer", "count": -2}, "items[0].count"),
        ({"id": "beer", "count": 1.5}, "items[0].count"),
        ({"id": "cheese", "count": 0.25}, "items[0].count"),
        ({"id": "beer", "count": 1, "bundle": {"id": "keg"}}, "items[0].bundle"),
        ({"id": "beer", "count": 1, "bundle": {"type": "CT", "size": 12}}, "items[0].bundle"),
        ({"id": "beer", "count": 1, "bundle": {"type": "CT"}}, "items[0].bundle"),
        ({"id": "beer", "count": "1"}, "items[0].count"),
        ({"id": "beer"}, "items[0].count"),
    ],
)
def test_item_problems(shop, item, path):
    response = order(shop, [item])
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == [path]


CRATE = {"id": "crate", "type": "CT", "size": 24}


@pytest.mark.parametrize(
    "item, placed",
    [
        ({"id": "cheese", "count": 0.5}, {"id": "cheese", "count": 0.5, "bundle": None, "vessel_count": 0.5}),
        (
            {"id": "beer", "count": 1, "bundle": CRATE},
            {"id": "beer-crate", "count": 1, "bundle": CRATE, "vessel_count": 24},
        ),
        (
            {"id": "beer", "count": 1, "bundle": {"type": "CT", "size": 24}},
            {"id": "beer-crate", "count": 1, "bundle": CRATE, "vessel_count": 24},
        ),
    ],
)
def test_items_that_pass(shop, item, placed):
    (line,) = place(shop, [item])["request"]["items"]
    assert {field: line[field] for field in placed} == placed


def test_minimum_counts_vessels_in_bundles(shop):
    can = {
        "status": "ACTIVE",
        "category": "drinks",
        "name": "Soda can",
        "min_order_count": 12,
        "bundles": [{"id": "six", "type": "CT", "size": 6}],
    }
    put_product(shop, "can", can)
    response = order(shop, [{"id": "can", "count": 1, "bundle": {"id": "six"}}])
    assert problem_paths(response) == ["items[0].count"]
    assert "12" in response.data["errors"][0]["message"]
    assert order(shop, [{"id": "can", "count": 2, "bundle": {"id": "six"}}]).status_code == 200


def test_customer_pricing_raises_the_minimum(shop):
    pricing = {"strategy": "VOLUME", "price_points": [{"from": 10, "price": 100}]}
    put_customer_pricing("beer", "c1", pricing=pricing)
    assert problem_paths(order(shop, [{"id": "beer", "count": 9}])) == ["items[0].count"]
    assert place(shop, [{"id": "beer", "count": 10}])["request"]["items"][0]["price"] == 100


def test_every_problem_is_reported_at_once(shop):
    put_settings(allow_delivery_comments=False, allow_product_comments=False)
    response = order(
        shop,
        [
            {"id": "nope", "count": 1},
            {"id": "beer", "count": 0, "message": "hi"},
            {"id": "beer", "count": 1.5, "bundle": {"id": "keg"}},
            {"id": "cheese", "count": 1},
            {"id": "cheese", "count": 2},
        ],
        message="please",
    )
    assert response.status_code == 400
    assert problem_paths(response) == [
        "message",
        "items[0].id",
        "items[1].message",
        "items[1].count",
        "items[2].count",
        "items[2].bundle",
        "items[4].id",
    ]


def test_a_shape_problem_hides_none_of_the_catalogues(shop):
    """decisions §3, §8: one error per problem, those the body's shape has and those its well-formed items have
    against the catalogue alike (an audit found an unknown product named only once the shape was right)."""
    response = order(
        shop,
        [{"id": "nope", "count": 1}, {"id": "beer", "count": "2"}, {"id": "beer", "count": 1, "bundle": {"id": "keg"}}],
        user={"name": "A"},
    )
    assert response.status_code == 400
    assert problem_paths(response) == ["items[1].count", "user.email", "items[0].id", "items[2].bundle"]
    too_many = order(shop, [{"id": "nope", "count": 1}] * 51)
    assert problem_paths(too_many) == ["items"]  # a wrong list: its items are not checked one by one


def test_comments_are_refused_unless_the_account_allows_them(shop):
    put_settings(allow_delivery_comments=False, allow_product_comments=True)
    assert problem_paths(order(shop, [{"id": "beer", "count": 1}], message="hi")) == ["message"]
    assert place(shop, [{"id": "beer", "count": 1, "message": "hi"}])["request"]["items"][0]["message"] == "hi"
    put_settings(allow_delivery_comments=True, allow_product_comments=False)
    assert problem_paths(order(shop, [{"id": "beer", "count": 1, "message": "hi"}])) == ["items[0].message"]
    assert place(shop, [{"id": "beer", "count": 1}], message="hi")["request"]["message"] == "hi"


def test_settings_default_to_no_comments(shop):
    table.client().delete_item(TableName=table.name(), Key=table.to_item(keys.settings_key("acme", "DELIVERIES")))
    assert problem_paths(order(shop, [{"id": "beer", "count": 1}], message="hi")) == ["message"]


@pytest.mark.parametrize(
    "body, path",
    [
        ({"items": []}, "items"),
        ({"items": [{"id": "beer", "count": 1}] * 51}, "items"),
        ({"items": [{"id": "beer", "count": 1}], "user": {"name": "x"}}, "user.email"),
        ({"items": [{"id": "beer", "count": 1}], "type": "PICKUP"}, "type"),
        ({"items": [{"id": "beer", "count": 1}], "scheduled": {"date": "2026-02-30"}}, "scheduled.date"),
        ({"items": [{"id": "beer", "count": 1}], "address": {**ADDRESS, "country": "Finland"}}, "address.country"),
        ({"items": [{"id": "beer", "count": 1}], "colour": "red"}, "colour"),
    ],
)
def test_malformed_orders(shop, body, path):
    response = shop.post("/customer/deliveries", body={"user": USER, **body}, token=CUSTOMER_TOKEN)
    assert response.status_code == 400
    assert path in problem_paths(response)


# --- delivery dates (decisions §7) ---


def test_an_undeliverable_date_is_refused(shop):
    put_settings(allow_delivery_comments=True, delivery_days={"3": {"lead_days": 1}})  # Wednesdays
    response = order(shop, [{"id": "beer", "count": 1}], scheduled={"date": "2026-05-05"})
    assert response.status_code == 400
    assert problem_paths(response) == ["scheduled.date"]
    delivery = place(shop, [{"id": "beer", "count": 1}], scheduled={"date": "2026-05-06", "time": "08:00"})
    assert delivery["request"]["scheduled"] == {"date": "2026-05-06", "time": "08:00"}


def test_a_date_the_product_is_not_delivered_on_is_refused(shop):
    put_product(shop, "beer", {**_beer(), "dates_with_no_delivery": ["2026-05-06"]})
    response = order(shop, [{"id": "beer", "count": 1}, {"id": "cheese", "count": 1}], scheduled={"date": "2026-05-06"})
    assert problem_paths(response) == ["scheduled.date"]
    delivery = place(shop, [{"id": "cheese", "count": 1}], scheduled={"date": "2026-05-06"})
    assert delivery["request"]["scheduled"] == {"date": "2026-05-06"}
    assert [item["id"] for item in delivery["request"]["items"]] == ["cheese"]


def _beer():
    from .deliveries_helpers import BEER

    return BEER


def test_mixing_active_and_out_of_stock_products_creates_two_deliveries(shop):
    response = order(
        shop,
        [{"id": "wine", "count": 2}, {"id": "beer", "count": 1}, {"id": "cheese", "count": 1}],
        scheduled={"date": "2026-05-06"},
    )
    assert response.status_code == 200
    active, out_of_stock = response.data["deliveries"]
    assert [i["id"] for i in active["request"]["items"]] == ["beer", "cheese"]
    assert active["request"]["scheduled"] == {"date": "2026-05-06"}
    assert [i["id"] for i in out_of_stock["request"]["items"]] == ["wine"]
    assert out_of_stock["request"]["scheduled"] is None
    assert out_of_stock["id"] == active["id"] + 1
    assert [e["type"] for e in events()] == ["request-delivery", "request-delivery"]


def test_out_of_stock_items_are_accepted_as_soon_as_possible_whatever_the_date(shop):
    put_settings(delivery_days={"3": {"lead_days": 1}})
    response = order(shop, [{"id": "wine", "count": 2}], scheduled={"date": "2026-05-05"})
    assert response.status_code == 200
    (delivery,) = response.data["deliveries"]
    assert delivery["request"]["scheduled"] is None


# --- ids, used products, events ---


def test_delivery_ids_are_positive_integers_unique_per_account(shop):
    ids = [place(shop, [{"id": "beer", "count": 1}])["id"] for _ in range(3)]
    assert ids == [1, 2, 3]


def test_ordered_products_can_no_longer_be_deleted(shop):
    place(shop, [{"id": "beer", "count": 1, "bundle": {"id": "crate"}}])
    response = shop.delete("/products/beer")
    assert_problem(response, 400, "conflict")
    assert shop.delete("/products/cheese").status_code == 204


def test_the_request_delivery_event_carries_the_full_delivery(shop):
    delivery = place(shop, [{"id": "beer", "count": 2, "bundle": {"id": "crate"}, "message": "cold"}])
    (event,) = events()
    assert event["type"] == "request-delivery"
    assert event["data"] == delivery
    assert event["data"]["request"]["items"][0]["id"] == "beer-crate"
    assert event["data"]["request"]["items"][0]["message"] == "cold"


def test_a_refused_order_writes_nothing(shop):
    order(shop, [{"id": "nope", "count": 1}])
    assert events() == []
    assert shop.get("/deliveries").data == {"deliveries": []}
    assert shop.delete("/products/beer").status_code == 204


# --- the customer's own deliveries ---


def test_customers_list_and_read_only_their_own(shop):
    first = place(shop, [{"id": "beer", "count": 1}])
    second = place(shop, [{"id": "cheese", "count": 1}])
    theirs = order(shop, [{"id": "beer", "count": 1}], token=OTHER_CUSTOMER_TOKEN).data["deliveries"][0]
    response = shop.get("/customer/deliveries", token=CUSTOMER_TOKEN)
    assert response.status_code == 200
    assert_shape(DeliveryList, response)
    assert [d["id"] for d in response.data["deliveries"]] == [second["id"], first["id"]]
    assert all("items" not in d["request"] for d in response.data["deliveries"])
    own = shop.get(f"/customer/deliveries/{first['id']}", token=CUSTOMER_TOKEN)
    assert own.status_code == 200 and own.data == first
    assert shop.get(f"/customer/deliveries/{theirs['id']}", token=CUSTOMER_TOKEN).status_code == 404
    assert shop.get("/customer/deliveries/999", token=CUSTOMER_TOKEN).status_code == 404
    assert shop.get("/customer/deliveries/abc", token=CUSTOMER_TOKEN).status_code == 404


def test_customer_list_pages(shop):
    for _ in range(3):
        place(shop, [{"id": "beer", "count": 1}])
    first = shop.get("/customer/deliveries?limit=2", token=CUSTOMER_TOKEN).data
    assert [d["id"] for d in first["deliveries"]] == [3, 2]
    second = shop.get(f"/customer/deliveries?limit=2&cursor={first['cursor']}", token=CUSTOMER_TOKEN).data
    assert second == {"deliveries": [shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).data["deliveries"][2]]}
    other = shop.get(f"/customer/deliveries?cursor={first['cursor']}", token=OTHER_CUSTOMER_TOKEN)
    assert other.status_code == 400 and problem_paths(other) == ["cursor"]


def test_roles_are_kept_apart(shop):
    supplier_orders = shop.post("/customer/deliveries", body={"items": [{"id": "beer", "count": 1}], "user": USER})
    customer_lists = shop.get("/deliveries", token=CUSTOMER_TOKEN)
    nobody_lists = shop.get("/customer/deliveries", token=None)
    assert (supplier_orders.status_code, supplier_orders.data["type"]) == (403, "forbidden")
    assert (customer_lists.status_code, customer_lists.data["type"]) == (403, "forbidden")
    assert (nobody_lists.status_code, nobody_lists.data["type"]) == (401, "unauthorized")
    assert shop.get("/deliveries").data == {"deliveries": []}  # the refused order placed nothing


# --- cancel and receive ---


def test_cancel_records_who_when_and_why(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    body = {"user": {"name": "Olli", "email": "olli@example.com"}, "message": "changed our mind"}
    response = shop.post(f"/customer/deliveries/{delivery['id']}/cancel", body=body, token=CUSTOMER_TOKEN)
    assert response.status_code == 200
    assert_shape(Delivery, response)
    assert response.data["status"] == "CANCELLED"
    assert response.data["cancelled"] == {"timestamp": "2026-05-04T09:30:00.000Z", **body}
    pending_again = {"status": "PENDING", "updated": "2026-05-04T09:30:00.000Z"}
    assert shop.get(f"/deliveries/{delivery['id']}").data == {**response.data, "integration": pending_again}
    by_type = {e["type"]: e for e in events()}
    assert sorted(by_type) == ["cancel-delivery", "request-delivery"]
    assert by_type["cancel-delivery"]["data"] == response.data


def test_cancel_without_a_body_names_the_customer_contact(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    response = shop.post(f"/customer/deliveries/{delivery['id']}/cancel", token=CUSTOMER_TOKEN)
    assert response.status_code == 200
    assert response.data["cancelled"] == {"timestamp": "2026-05-04T09:30:00.000Z", "user": CONTACT, "message": None}


def test_an_accepted_delivery_can_be_cancelled_a_final_one_cannot(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    path = f"/customer/deliveries/{delivery['id']}"
    assert shop.post(f"/deliveries/{delivery['id']}/responses", body={"type": "ACCEPT"}).status_code == 200
    assert shop.post(f"{path}/cancel", body={}, token=CUSTOMER_TOKEN).data["status"] == "CANCELLED"
    for action in ("cancel", "receive"):
        response = shop.post(f"{path}/{action}", body={}, token=CUSTOMER_TOKEN)
        assert_problem(response, 400, "invalid-transition")


def test_receive_marks_delivered(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    path = f"/customer/deliveries/{delivery['id']}"
    assert shop.post(f"/deliveries/{delivery['id']}/responses", body={"type": "ACCEPT"}).status_code == 200
    response = shop.post(f"{path}/receive", token=CUSTOMER_TOKEN)
    assert response.status_code == 200
    assert response.data["status"] == "DELIVERED"
    assert response.data["received"]["timestamp"] == "2026-05-04T09:30:00.000Z"
    assert "cancelled" not in response.data
    assert_problem(shop.post(f"{path}/cancel", token=CUSTOMER_TOKEN), 400, "invalid-transition")
    assert "receive-delivery" in [e["type"] for e in events()]


def test_a_requested_delivery_can_be_received(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    response = shop.post(f"/customer/deliveries/{delivery['id']}/receive", token=CUSTOMER_TOKEN)
    assert response.data["status"] == "DELIVERED"


def test_customers_cannot_touch_another_customers_delivery(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    for action in ("cancel", "receive"):
        response = shop.post(f"/customer/deliveries/{delivery['id']}/{action}", token=OTHER_CUSTOMER_TOKEN)
        assert response.status_code == 404
    assert shop.get(f"/deliveries/{delivery['id']}").data["status"] == "REQUESTED"


def test_cancel_body_is_validated(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    response = shop.post(
        f"/customer/deliveries/{delivery['id']}/cancel", body={"user": {"name": "x"}, "why": 1}, token=CUSTOMER_TOKEN
    )
    assert response.status_code == 400
    assert sorted(problem_paths(response)) == ["user.email", "why"]


def test_a_product_deleted_while_ordering_is_reported_and_nothing_is_written(shop, monkeypatch):
    from chalicelib.service import ordering

    real_load = ordering.order_context.load

    def load_then_delete(account, customer_id, product_ids, **options):
        context = real_load(account, customer_id, product_ids, **options)
        assert shop.delete("/products/cheese").status_code == 204
        return context

    monkeypatch.setattr(ordering.order_context, "load", load_then_delete)
    response = order(shop, [{"id": "beer", "count": 1}, {"id": "cheese", "count": 1}])
    assert response.status_code == 400
    assert problem_paths(response) == ["items[1].id"]
    monkeypatch.undo()
    assert shop.get("/deliveries").data == {"deliveries": []}
    assert events() == []
