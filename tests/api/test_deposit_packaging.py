"""Deposits on packaging (decisions §15): vessel.deposit and bundles[].deposit on product writes and reads."""

import pytest

from tests.api.customer_support import customer_token, make_category, make_customer
from tests.conftest import problem_paths

BOTTLE_VESSEL = {"size": 0.5, "unit": "l", "type": "BO", "deposit": "bottle"}
CRATE_BUNDLE = {"type": "CR", "size": 20, "deposit": "crate"}
PALLET_BUNDLE = {"type": "PX", "size": 40, "pallet_bundle": {"type": "CR", "size": 20}, "deposit": "pallet"}


@pytest.fixture
def types(api):
    for deposit_id, name, price in [("bottle", "Bottle", 8), ("crate", "Crate", 150), ("pallet", "Pallet", 1500)]:
        assert api.put(f"/deposits/{deposit_id}", {"name": name, "price": price}).status_code == 200
    make_category(api)


def beer(**fields):
    return {
        "status": "ACTIVE",
        "category": "drinks",
        "name": "Lager 0.5",
        "vessel": BOTTLE_VESSEL,
        "bundles": [CRATE_BUNDLE, PALLET_BUNDLE],
        "price": 100,
        **fields,
    }


def test_put_shows_deposits_after_the_objects_other_fields(api, types):
    response = api.put("/products/beer", beer())
    assert response.status_code == 200, response.data
    assert list(response.data["vessel"]) == ["size", "unit", "type", "deposit"]
    assert response.data["vessel"]["deposit"] == "bottle"
    assert list(response.data["bundles"][1]) == ["type", "size", "pallet_bundle", "deposit"]
    assert api.get("/products/beer").data == response.data
    assert api.get("/products").data["products"][0] == response.data


def test_absent_where_not_set(api, types):
    response = api.put("/products/beer", beer(vessel={"size": 0.5, "unit": "l"}, bundles=[{"type": "CR", "size": 20}]))
    assert "deposit" not in response.data["vessel"] and "deposit" not in response.data["bundles"][0]


def test_customer_catalogue_shows_them(api, types):
    api.put("/products/beer", beer())
    make_customer(api, "bar", address={"address1": "Main 1", "zip": "1000", "city": "Town", "country": "AT"})
    products = api.get("/customer/products", token=customer_token(api, "bar")).data["products"]
    assert products[0]["vessel"]["deposit"] == "bottle"
    assert [b.get("deposit") for b in products[0]["bundles"]] == ["crate", "pallet"]


def test_unknown_ids_named_on_put_and_post(api, types):
    body = beer(
        vessel={**BOTTLE_VESSEL, "deposit": "nope"}, bundles=[CRATE_BUNDLE, {**PALLET_BUNDLE, "deposit": "nope"}]
    )
    response = api.put("/products/beer", body)
    assert response.status_code == 400
    assert problem_paths(response) == ["vessel.deposit", "bundles[1].deposit"]
    response = api.post("/products", {"id": "beer", **body})
    assert problem_paths(response) == ["vessel.deposit", "bundles[1].deposit"]
    assert api.get("/products/beer").status_code == 404


def test_patch_is_checked_after_the_merge(api, types):
    api.put("/products/beer", beer())
    response = api.patch("/products/beer", {"bundles": [{"type": "CR", "size": 20, "deposit": "keg"}]})
    assert response.status_code == 400
    assert problem_paths(response) == ["bundles[0].deposit"]
    response = api.patch("/products/beer", {"price": 120})
    assert response.status_code == 200 and response.data["vessel"]["deposit"] == "bottle"


@pytest.mark.parametrize("deposit", ["", "a b", "x" * 65, 5])
def test_malformed_ids(api, types, deposit):
    response = api.put("/products/beer", beer(vessel={**BOTTLE_VESSEL, "deposit": deposit}))
    assert problem_paths(response) == ["vessel.deposit"]


def test_never_with_order_by_kg(api, types):
    body = {
        "status": "ACTIVE",
        "category": "drinks",
        "name": "Cheese",
        "order_by": "kg",
        "vessel": {"size": 1, "unit": "kg", "deposit": "crate"},
    }
    response = api.put("/products/cheese", body)
    assert response.status_code == 400
    assert problem_paths(response) == ["vessel.deposit"]
    body = {
        **body,
        "vessel": {"size": 1, "unit": "kg"},
        "bundles": [{"type": "CR", "size": 5, "unit": "kg", "deposit": "crate"}],
    }
    assert problem_paths(api.put("/products/cheese", body)) == ["bundles[0].deposit"]
    body["bundles"][0].pop("deposit")
    assert api.put("/products/cheese", body).status_code == 200


def test_a_type_deleted_is_no_longer_accepted(api, types):
    assert api.delete("/deposits/pallet").status_code == 204
    assert problem_paths(api.put("/products/beer", beer())) == ["bundles[1].deposit"]


def test_catalogue_import_keeps_deposits_of_kept_packaging(api, types, fake_clock):
    from tests.api.test_imports import imported

    api.put("/products/beer", beer())
    header = "Item ID;Item name;Category ID;Vessel size;Vessel unit;Vessel type;Bundle size;Bundle type;Price\n"
    report = imported(api, header + "beer;Lager 0.5;drinks;0,5;l;BO;20;CR;1,10\n")
    assert report["updated"] == 1, report
    product = api.get("/products/beer").data
    assert product["vessel"]["deposit"] == "bottle"
    assert product["bundles"] == [{"type": "CR", "size": 20, "deposit": "crate"}]
    # The pallet is gone from the product, so its type may go; the crate is still named.
    assert api.delete("/deposits/pallet").status_code == 204
    assert api.delete("/deposits/crate").status_code == 400
    report = imported(api, header + "beer;Lager 0.5;drinks;0,5;l;BO;24;CT;1,10\n")
    assert api.get("/products/beer").data["bundles"] == [{"type": "CT", "size": 24}]
    assert api.delete("/deposits/crate").status_code == 204
    assert api.delete("/deposits/bottle").status_code == 400
