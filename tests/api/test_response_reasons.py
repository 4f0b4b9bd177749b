"""Answers per line (decisions §16): response items take a reason code, shown back after the item's other fields."""

import pytest

from chalicelib.domain.delivery import ResponseReason, SupplierDelivery
from tests.conftest import problem_paths

from .deliveries_helpers import assert_shape, place, respond, shop  # noqa: F401

ITEMS = [{"id": "beer", "count": 2, "bundle": {"id": "crate"}}, {"id": "cheese", "count": 1.5}]


@pytest.mark.parametrize("reason", [str(r) for r in ResponseReason])
def test_every_reason_is_shown_back_after_the_items_other_fields(shop, reason):
    delivery = place(shop, ITEMS)
    response = respond(
        shop,
        delivery["id"],
        {
            "type": "ACCEPT",
            "items": [{"id": "beer-crate", "count": 1, "price": 140, "reason": reason}, {"id": "cheese", "count": 1.5}],
        },
    )
    assert response.status_code == 200, response.data
    assert_shape(SupplierDelivery, response)
    first, second = response.data["responses"][0]["items"]
    assert list(first) == ["id", "count", "vessel_count", "price", "reason"] and first["reason"] == reason
    assert "reason" not in second
    assert shop.get(f"/deliveries/{delivery['id']}").data["responses"] == response.data["responses"]


def test_any_other_reason_is_a_400_naming_the_item(shop):
    delivery = place(shop, ITEMS)
    before = shop.get(f"/deliveries/{delivery['id']}").data
    response = respond(
        shop,
        delivery["id"],
        {
            "type": "ACCEPT",
            "items": [{"id": "beer-crate", "reason": "OUT_OF_STOCK"}, {"id": "cheese", "reason": "out_of_stock"}],
        },
    )
    assert response.status_code == 400 and problem_paths(response) == ["items[1].reason"]
    for bad in ("", "LATE", 3):
        refused = respond(shop, delivery["id"], {"type": "ACCEPT", "items": [{"id": "cheese", "reason": bad}]})
        assert refused.status_code == 400 and problem_paths(refused) == ["items[0].reason"], bad
    assert shop.get(f"/deliveries/{delivery['id']}").data == before


def test_a_reject_may_give_reasons_per_line(shop):
    delivery = place(shop, ITEMS)
    response = respond(
        shop, delivery["id"], {"type": "REJECT", "items": [{"id": "beer-crate", "count": 0, "reason": "DISCONTINUED"}]}
    )
    assert response.status_code == 200 and response.data["responses"][0]["items"][0]["reason"] == "DISCONTINUED"
