"""An item's `substitute: false` (decisions §18): on orders, amendments (changing only it makes the line CHANGED and
keeps its price) and standing orders; shown back on the item only when false."""

import datetime as dt

import pytest

from chalicelib.domain.standing_orders import StandingOrder
from tests.conftest import clock_at, problem_paths

from .deliveries_helpers import CUSTOMER_TOKEN, USER, assert_shape, order, place, put_product, shop  # noqa: F401
from .standing_support import BASE, put_standing, run_placer


def _amend(api, delivery_id, items, **fields):
    return api.post(
        f"/customer/deliveries/{delivery_id}/amendments", {"items": items, "user": USER, **fields}, token=CUSTOMER_TOKEN
    )


def test_an_item_that_may_not_be_substituted_says_so_after_its_other_fields(shop):
    delivery = place(shop, [{"id": "beer", "count": 2, "substitute": False}, {"id": "cheese", "count": 1}])
    beer, cheese = delivery["request"]["items"]
    assert list(beer)[-1] == "substitute" and beer["substitute"] is False
    assert "substitute" not in cheese
    assert shop.get(f"/deliveries/{delivery['id']}").data["request"]["items"][0]["substitute"] is False


def test_substitute_true_is_the_default_and_is_not_shown(shop):
    delivery = place(shop, [{"id": "beer", "count": 2, "substitute": True}])
    assert "substitute" not in delivery["request"]["items"][0]


@pytest.mark.parametrize("value", ["false", 0, "no"])
def test_substitute_is_a_boolean(shop, value):
    response = order(shop, [{"id": "beer", "count": 2, "substitute": value}])
    assert response.status_code == 400
    assert problem_paths(response) == ["items[0].substitute"]


def test_an_amendment_that_changes_only_substitute_changes_the_line_and_keeps_its_price(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    put_product(shop, "beer", {**shop.get("/products/beer").data, "price": 199})
    response = _amend(shop, delivery["id"], [{"id": "beer", "count": 2, "substitute": False}])
    assert response.status_code == 200, response.data
    item = response.data["request"]["items"][0]
    assert (item["price"], item["substitute"]) == (150, False)
    assert response.data["amendments"][-1]["items"] == [
        {"id": "beer", "bundle": None, "action": "CHANGED", "count_before": 2, "count": 2}
    ]
    back = _amend(shop, delivery["id"], [{"id": "beer", "count": 2}])
    assert "substitute" not in back.data["request"]["items"][0] and back.data["request"]["items"][0]["price"] == 150
    assert [a["items"][0]["action"] for a in back.data["amendments"]] == ["CHANGED", "CHANGED"]
    same = _amend(shop, delivery["id"], [{"id": "beer", "count": 2, "substitute": True}])  # the default: no change
    assert len(same.data["amendments"]) == 2


def test_an_amendment_that_changes_only_a_message_keeps_the_price_too(shop):
    """decisions §16: "a line whose only change is its message (or its substitute) keeps its price"."""
    delivery = place(shop, [{"id": "beer", "count": 2}])
    put_product(shop, "beer", {**shop.get("/products/beer").data, "price": 199})
    response = _amend(shop, delivery["id"], [{"id": "beer", "count": 2, "message": "cold ones"}])
    assert response.status_code == 200, response.data
    item = response.data["request"]["items"][0]
    assert (item["price"], item["message"]) == (150, "cold ones")
    assert response.data["amendments"][-1]["items"][0]["action"] == "CHANGED"
    recounted = _amend(shop, delivery["id"], [{"id": "beer", "count": 3, "message": "cold ones"}])
    assert recounted.data["request"]["items"][0]["price"] == 199  # a new count takes the price that applies now


def test_a_standing_order_keeps_substitute_false_and_places_it(shop, monkeypatch):
    items = [{"id": "beer", "count": 3, "substitute": False}, {"id": "cheese", "count": 1, "substitute": True}]
    response = put_standing(shop, items=items)
    assert response.status_code == 200, response.data
    assert_shape(StandingOrder, response)
    assert response.data["items"] == [{"id": "beer", "count": 3, "substitute": False}, {"id": "cheese", "count": 1}]
    assert shop.get(f"{BASE}/weekly", token=CUSTOMER_TOKEN).data["items"] == response.data["items"]
    clock_at(monkeypatch, dt.datetime(2026, 5, 4, 23, 30, tzinfo=dt.timezone.utc))  # Tuesday's placing moment passed
    run_placer()
    placed = shop.get("/deliveries").data["deliveries"][0]["id"]
    lines = shop.get(f"/deliveries/{placed}").data["request"]["items"]
    assert [line.get("substitute") for line in lines] == [False, None]
