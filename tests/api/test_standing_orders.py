"""The standing-order resource (decisions §17): write, read, list, delete, validation and the limits."""

import pytest

from chalicelib.domain.standing_orders import MAX_PER_CUSTOMER, StandingOrder, StandingOrderList
from tests.conftest import problem_paths

from .deliveries_helpers import CUSTOMER_TOKEN, OTHER_CUSTOMER_TOKEN, USER, assert_shape, shop  # noqa: F401
from .standing_support import BASE, put_standing, standing


def test_a_standing_order_shows_every_field_with_its_defaults(shop):
    response = put_standing(shop)
    assert response.status_code == 200, response.data
    assert_shape(StandingOrder, response)
    assert response.data == {
        "id": "weekly",
        "customer_id": "c1",
        "name": None,
        "items": [{"id": "beer", "count": 3}],
        "weekdays": [2, 5],
        "every_weeks": 1,
        "starts_on": "2026-05-04",
        "ends_on": None,
        "place_days_ahead": 2,
        "paused": False,
        "type": "DELIVERY",
        "empties": None,
        "message": None,
        "cost_center": None,
        "company": None,
        "address": None,
        "user": USER,
        "created": "2026-05-04T09:30:00.000Z",
        "updated": "2026-05-04T09:30:00.000Z",
    }
    assert list(response.data) == list(StandingOrder.model_fields)
    assert shop.get(f"{BASE}/weekly", token=CUSTOMER_TOKEN).data == response.data


def test_a_replacement_keeps_created_and_replaces_the_rest(shop):
    put_standing(shop, name="Kegs")
    response = put_standing(shop, every_weeks=2, place_days_ahead=0, paused=True)
    assert response.status_code == 200
    assert response.data["name"] is None
    assert (response.data["every_weeks"], response.data["place_days_ahead"], response.data["paused"]) == (2, 0, True)


@pytest.mark.parametrize(
    "fields, paths",
    [
        ({"weekdays": []}, ["weekdays"]),
        ({"weekdays": [7]}, ["weekdays[0]"]),
        ({"weekdays": [1, 1]}, ["weekdays"]),
        ({"weekdays": [0, 1, 2, 3, 4, 5, 6, 0]}, ["weekdays"]),
        ({"every_weeks": 0}, ["every_weeks"]),
        ({"every_weeks": 9}, ["every_weeks"]),
        ({"place_days_ahead": -1}, ["place_days_ahead"]),
        ({"place_days_ahead": 15}, ["place_days_ahead"]),
        ({"starts_on": "2026-02-30"}, ["starts_on"]),
        ({"ends_on": "2026-05-03"}, ["ends_on"]),
        ({"paused": "yes"}, ["paused"]),
        ({"items": [{"id": "old", "count": 1}]}, ["items[0].id"]),
        ({"items": [{"id": "nope", "count": 1}]}, ["items[0].id"]),
        ({"items": [{"id": "beer", "count": 0}, {"id": "beer", "count": 1.5}]}, ["items[0].count", "items[1].count"]),
        ({"items": [{"id": "beer", "count": 1, "bundle": {"id": "keg"}}]}, ["items[0].bundle"]),
        ({"surprise": 1}, ["surprise"]),
    ],
)
def test_each_problem_is_one_error(shop, fields, paths):
    response = put_standing(shop, **fields)
    assert response.status_code == 400
    assert response.data["type"].endswith("validation-error")
    assert problem_paths(response) == paths


@pytest.mark.parametrize(
    "fields",
    [
        {"weekdays": [0, 1, 2, 3, 4, 5, 6]},
        {"every_weeks": 8, "place_days_ahead": 14},
        {"place_days_ahead": 0, "ends_on": "2026-05-04"},
        {"items": [{"id": "wine", "count": 1}, {"id": "cheese", "count": 1.5}]},
    ],
)
def test_edges_that_are_allowed(shop, fields):
    assert put_standing(shop, **fields).status_code == 200


def test_the_id_must_be_an_identifier(shop):
    response = shop.put(f"{BASE}/bad%20id", body=standing(), token=CUSTOMER_TOKEN)
    assert response.status_code == 400
    assert problem_paths(response) == ["id"]


def test_at_most_fifty_per_customer(shop):
    for n in range(MAX_PER_CUSTOMER):
        assert put_standing(shop, f"so-{n:02d}").status_code == 200
    refused = put_standing(shop, "one-more")
    assert refused.status_code == 400
    assert problem_paths(refused) == ["id"]
    assert put_standing(shop, "so-00", name="replaced").status_code == 200  # a replacement is not a new one
    assert put_standing(shop, "one-more", token=OTHER_CUSTOMER_TOKEN).status_code == 200  # per customer
    assert shop.delete(f"{BASE}/so-00", token=CUSTOMER_TOKEN).status_code == 204
    assert put_standing(shop, "one-more").status_code == 200


def test_a_standing_order_is_bounded_in_bytes(shop):
    """A control character takes 6 bytes of JSON: five such messages of 2,000 pass the 50,000 a read may hold."""
    note = "\u0001" * 2_000
    lines = [
        {"id": "beer", "count": 1},
        {"id": "beer", "count": 1, "bundle": {"id": "crate"}},
        {"id": "cheese", "count": 1},
        {"id": "water", "count": 1},
        {"id": "wine", "count": 1},
    ]
    fits = put_standing(shop, items=[{**line, "message": note} for line in lines[:3]])
    assert fits.status_code == 200
    refused = put_standing(shop, items=[{**line, "message": note} for line in lines])
    assert refused.status_code == 400
    assert problem_paths(refused) == ["body"]
    assert "50,000" in refused.data["errors"][0]["message"]


def test_list_get_and_delete(shop):
    for standing_id in ("b", "a", "c"):
        put_standing(shop, standing_id)
    put_standing(shop, "other", token=OTHER_CUSTOMER_TOKEN)
    listed = shop.get(f"{BASE}?limit=2", token=CUSTOMER_TOKEN)
    assert listed.status_code == 200
    assert_shape(StandingOrderList, listed)
    assert [s["id"] for s in listed.data["standing_orders"]] == ["a", "b"]
    rest = shop.get(f"{BASE}?limit=2&cursor={listed.data['cursor']}", token=CUSTOMER_TOKEN)
    assert [s["id"] for s in rest.data["standing_orders"]] == ["c"]
    assert "cursor" not in rest.data
    assert shop.get(f"{BASE}/other", token=CUSTOMER_TOKEN).status_code == 404
    assert shop.delete(f"{BASE}/a", token=CUSTOMER_TOKEN).status_code == 204
    assert shop.get(f"{BASE}/a", token=CUSTOMER_TOKEN).status_code == 404
    assert shop.delete(f"{BASE}/a", token=CUSTOMER_TOKEN).status_code == 404


def test_the_supplier_reads_them(shop):
    put_standing(shop, "weekly")
    listed = shop.get("/customers/c1/standing-orders")
    assert listed.status_code == 200
    assert [s["id"] for s in listed.data["standing_orders"]] == ["weekly"]
    assert shop.get("/customers/c1/standing-orders/weekly").data["id"] == "weekly"
    assert shop.get("/customers/c1/standing-orders/nope").status_code == 404
    assert shop.get("/customers/nobody/standing-orders").status_code == 404
    assert shop.get("/customers/nobody/standing-orders/weekly").status_code == 404
    assert shop.get("/customers/c2/standing-orders").data == {"standing_orders": []}
    assert shop.get("/customer/standing-orders", token=None).status_code == 401
