"""Deposits follow an amendment (decisions §15, §16): charged from the amended items, empties replaced when given,
and what the supplier confirmed before the amendment no longer counts until its next answer."""

import pytest

from chalicelib.service import deposits as deposit_uses
from tests.api.deliveries_helpers import CUSTOMER_TOKEN, USER, place, put_product, respond, shop  # noqa: F401
from tests.api.test_deposit_deliveries import BOTTLE_E, CRATE, CRATE_E, LAGER, PALLET_E
from tests.conftest import problem_paths

KEG_E = {"id": "keg", "name": "Keg", "price": 3000}


@pytest.fixture
def drinks(shop):
    for entry in (BOTTLE_E, CRATE_E, PALLET_E, KEG_E):
        assert shop.put(f"/deposits/{entry['id']}", {"name": entry["name"], "price": entry["price"]}).status_code == 200
    put_product(shop, "lager", LAGER)
    put_product(
        shop,
        "ale",
        {**LAGER, "name": "Ale", "vessel": {"size": 20, "unit": "l", "type": "BE", "deposit": "keg"}, "bundles": []},
    )
    return shop


def amend(api, delivery_id, body):
    return api.post(f"/customer/deliveries/{delivery_id}/amendments", body={"user": USER, **body}, token=CUSTOMER_TOKEN)


def test_charged_deposits_follow_the_amended_items(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    response = amend(
        drinks, delivery["id"], {"items": [{"id": "lager", "count": 2, "bundle": CRATE}, {"id": "ale", "count": 2}]}
    )
    assert response.status_code == 200, response.data
    assert response.data["request"]["deposits"] == [
        {**BOTTLE_E, "count": 40},
        {**CRATE_E, "count": 2},
        {**KEG_E, "count": 2},
    ]
    assert response.data["deposits"] == {
        "charged": response.data["request"]["deposits"],
        "returned": [],
        "total": 40 * 8 + 2 * 150 + 2 * 3000,
    }
    assert list(response.data)[-2:] == ["amendments", "deposits"]
    removed = amend(drinks, delivery["id"], {"items": [{"id": "ale", "count": 2}]})
    assert removed.data["deposits"]["charged"] == [{**KEG_E, "count": 2}]


def test_a_kept_line_keeps_the_deposit_price_the_order_saw(drinks):
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    assert drinks.put("/deposits/crate", {"name": "Crate", "price": 200}).status_code == 200
    response = amend(
        drinks, delivery["id"], {"items": [{"id": "lager", "count": 1, "bundle": CRATE}, {"id": "ale", "count": 1}]}
    )
    assert {e["id"]: e["price"] for e in response.data["deposits"]["charged"]} == {
        "bottle": 8,
        "crate": 150,
        "keg": 3000,
    }


def test_empties_are_replaced_only_when_given(drinks):
    delivery = place(drinks, [{"id": "ale", "count": 1}], empties=[{"id": "keg", "count": 3}])
    kept = amend(drinks, delivery["id"], {"items": [{"id": "ale", "count": 2}]})
    assert kept.data["request"]["empties"] == [{**KEG_E, "count": 3}]
    replaced = amend(
        drinks, delivery["id"], {"items": [{"id": "ale", "count": 2}], "empties": [{"id": "crate", "count": 4}]}
    )
    assert replaced.data["request"]["empties"] == [{**CRATE_E, "count": 4}]
    assert len(replaced.data["amendments"]) == 2
    emptied = amend(drinks, delivery["id"], {"items": [{"id": "ale", "count": 2}], "empties": []})
    assert "empties" not in emptied.data["request"]
    refused = amend(
        drinks, delivery["id"], {"items": [{"id": "ale", "count": 2}], "empties": [{"id": "nope", "count": 1}]}
    )
    assert refused.status_code == 400 and problem_paths(refused) == ["empties[0].id"]


def test_a_return_may_keep_only_empties(drinks):
    delivery = place(drinks, [{"id": "ale", "count": 1}], type="RETURN", empties=[{"id": "keg", "count": 1}])
    response = amend(drinks, delivery["id"], {"items": []})
    assert response.status_code == 200 and response.data["request"]["items"] == []
    assert response.data["amendments"][0]["items"][0]["action"] == "REMOVED"
    refused = amend(drinks, delivery["id"], {"items": [], "empties": []})
    assert refused.status_code == 400 and problem_paths(refused) == ["items"]


def test_responses_before_an_amendment_no_longer_state_the_items_or_empties(drinks):
    delivery = place(drinks, [{"id": "ale", "count": 2}], scheduled={"date": "2026-05-06"})
    accepted = respond(
        drinks,
        delivery["id"],
        {"type": "ACCEPT", "items": [{"id": "ale", "count": 1}], "empties": [{"id": "keg", "count": 5}]},
    )
    assert accepted.data["deposits"]["charged"] == [{**KEG_E, "count": 1}]
    assert accepted.data["deposits"]["returned"] == [{**KEG_E, "count": 5}]
    response = amend(drinks, delivery["id"], {"items": [{"id": "ale", "count": 3}]})
    assert response.data["deposits"] == {"charged": [{**KEG_E, "count": 3}], "returned": [], "total": 9000}
    again = respond(drinks, delivery["id"], {"type": "ACCEPT", "empties": [{"id": "keg", "count": 2}]})
    assert again.data["deposits"] == {
        "charged": [{**KEG_E, "count": 3}],
        "returned": [{**KEG_E, "count": 2}],
        "total": 3000,
    }


def test_new_empties_of_a_type_deleted_between_read_and_write_are_refused_naming_them(drinks, monkeypatch):
    """An amendment's new empties are conditional on their types when it commits, as an order's are (§15's guard)."""
    from chalicelib.service import write_units as deliveries

    assert drinks.put("/deposits/tray", {"name": "Tray", "price": 100}).status_code == 200  # no product names it
    delivery = place(drinks, [{"id": "ale", "count": 1}])
    original = deliveries.commit

    def retired_meanwhile(*args, **kwargs):
        assert deposit_uses.retire("acme", "tray") is None  # a DELETE of the type is under way
        return original(*args, **kwargs)

    monkeypatch.setattr(deliveries, "commit", retired_meanwhile)
    refused = amend(
        drinks, delivery["id"], {"items": [{"id": "ale", "count": 1}], "empties": [{"id": "tray", "count": 2}]}
    )
    assert refused.status_code == 400 and problem_paths(refused) == ["empties[0].id"], refused.data
    monkeypatch.setattr(deliveries, "commit", original)
    unchanged = drinks.get(f"/customer/deliveries/{delivery['id']}", token=CUSTOMER_TOKEN).data
    assert "amendments" not in unchanged and "empties" not in unchanged["request"]
    # A type the delivery already names needs no check: the delete guard counts open deliveries naming it.
    kept = amend(drinks, delivery["id"], {"items": [{"id": "ale", "count": 2}]})
    assert kept.status_code == 200 and kept.data["amendments"][0]["items"][0]["count"] == 2


def test_an_amendment_whose_read_of_the_deposit_types_is_stale_reads_again(drinks, monkeypatch):
    """As an order (§15): a stale read of the types lacking one a product names reads again, never a 500."""
    from chalicelib.store import batch, keys, order_context

    delivery = place(drinks, [{"id": "ale", "count": 1}])
    real, stale_reads = batch.get_items, []
    types_key = keys.deposit_types_key("acme")

    def stale(wanted, consistent=False, **kwargs):
        found = real(wanted, consistent=consistent, **kwargs)
        if not consistent:  # the types item as it was before the types existed
            stale_reads.append(found.pop((types_key["PK"], types_key["SK"]), None))
        return found

    monkeypatch.setattr(order_context.batch, "get_items", stale)
    response = amend(
        drinks, delivery["id"], {"items": [{"id": "ale", "count": 1}, {"id": "lager", "count": 1, "bundle": CRATE}]}
    )
    assert response.status_code == 200, response.data
    assert stale_reads and stale_reads[0] is not None  # the first read was made stale
    assert {e["id"]: e["count"] for e in response.data["deposits"]["charged"]} == {"bottle": 20, "crate": 1, "keg": 1}


def test_an_added_line_whose_product_stops_naming_a_type_that_is_then_deleted_is_planned_again(drinks, monkeypatch):
    """§15's delete guard for amendments, as for orders: the amendment reads `lager` naming `crate`; before it
    commits, the product stops naming it and DELETE /deposits/crate completes. The write is pinned to the product
    as read, so it is refused and the amendment planned again: the delivery never charges the deleted type."""
    from chalicelib.service import write_units as deliveries
    from tests.api.test_deposit_deliveries import LAGER

    delivery = place(drinks, [{"id": "ale", "count": 1}])
    original, interleaved = deliveries.commit, []

    def catalogue_changed_meanwhile(*args, **kwargs):
        if not interleaved:
            put_product(drinks, "lager", {**LAGER, "bundles": [{"type": "CR", "size": 20}, LAGER["bundles"][1]]})
            interleaved.append(drinks.delete("/deposits/crate").status_code)
        return original(*args, **kwargs)

    monkeypatch.setattr(deliveries, "commit", catalogue_changed_meanwhile)
    lines = [{"id": "ale", "count": 1}, {"id": "lager", "count": 1, "bundle": CRATE}]
    response = amend(drinks, delivery["id"], {"items": lines})
    assert response.status_code == 200, response.data
    assert interleaved == [204] and drinks.get("/deposits/crate").status_code == 404
    assert {e["id"]: e["count"] for e in response.data["deposits"]["charged"]} == {"bottle": 20, "keg": 1}
