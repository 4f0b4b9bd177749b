"""Adversarial review of decisions §15: edges the first tests left open."""

import pytest

from tests.api.deliveries_helpers import CUSTOMER, CUSTOMER_TOKEN, USER, order, place, respond, shop  # noqa: F401
from tests.api.test_deposit_deliveries import BOTTLE_E, CRATE, CRATE_E, PALLET, drinks  # noqa: F401
from tests.conftest import problem_paths
from tests.problems import assert_problem

KEG_E = {"id": "keg", "name": "Keg", "price": 3000}


def bad(response, paths, status=400):
    assert response.status_code == status, response.data
    assert response.headers["Content-Type"] == "application/problem+json"
    assert problem_paths(response) == paths


# -- PUT /deposits/:id bodies of the wrong JSON types
@pytest.mark.parametrize(
    "body, paths",
    [
        ({"name": "Crate", "price": True}, ["price"]),
        ({"name": "Crate", "price": 1.0}, None),
        ({"name": "Crate", "price": "1"}, ["price"]),
        ({"name": ["Crate"], "price": 1}, ["name"]),
        ({"name": "Cr\rate", "price": 1}, ["name"]),
        ({"id": 5, "name": "Crate", "price": 1}, ["id"]),
    ],
)
def test_put_type_bad_json_types(api, body, paths):
    response = api.put("/deposits/crate", body)
    if paths is None:
        assert response.status_code in (200, 400)
        return
    bad(response, paths)


@pytest.mark.parametrize("body", [[], "x", 5, None])
def test_put_type_not_an_object(api, body):
    response = api.put("/deposits/crate", body)
    assert response.status_code == 400, response.data


def test_same_put_with_padding_changes_nothing(api):
    api.put("/deposits/crate", {"name": "Crate", "price": 1})
    after = api.get("/changes").data["max_sequence"]
    assert api.put("/deposits/crate", {"id": "crate", "name": "  Crate ", "price": 1}).data == {
        "id": "crate",
        "name": "Crate",
        "price": 1,
    }
    assert api.get("/changes").data["max_sequence"] == after


def test_get_deposit_field_order(api):
    api.put("/deposits/crate", {"price": 1, "name": "Crate"})
    assert list(api.get("/deposits/crate").data) == ["id", "name", "price"]
    assert list(api.get("/deposits").data) == ["deposits"]


def test_delete_refused_after_a_receive_moved_a_balance(drinks):
    d = place(drinks, [], type="RETURN", empties=[{"id": "keg", "count": 1}])
    respond(drinks, d["id"], {"type": "ACCEPT"})
    assert drinks.post(f"/customer/deliveries/{d['id']}/receive", {}, token=CUSTOMER_TOKEN).status_code == 200
    r = drinks.delete("/deposits/keg")
    assert_problem(r, 400, "conflict")


# -- empties of wrong types
@pytest.mark.parametrize(
    "empties, paths",
    [
        ("crate", ["empties"]),
        ([5], ["empties[0]"]),
        ([{"id": "crate", "count": "1"}], ["empties[0].count"]),
        ([{"id": "crate", "count": True}], ["empties[0].count"]),
        ([{"id": "crate", "count": None}], ["empties[0].count"]),
        ([{"id": "crate"}], ["empties[0].count"]),
        ([{"count": 1}], ["empties[0].id"]),
        ([{"id": 5, "count": 1}], ["empties[0].id"]),
        ([{"id": "crate", "count": 1.0}], None),
    ],
)
def test_empties_bad_json_types(drinks, empties, paths):
    response = order(drinks, [{"id": "lager", "count": 1}], empties=empties)
    if paths is None:
        assert response.status_code in (200, 400), response.data
        return
    assert response.status_code == 400, response.data
    print(problem_paths(response))
    assert problem_paths(response)[0].startswith(paths[0])


@pytest.mark.parametrize(
    "empties",
    ["crate", [{"id": "crate", "count": "1"}], [{"id": "crate", "count": True}], [{"id": "crate", "count": 1.5}]],
)
def test_response_empties_bad_json_types(drinks, empties):
    d = place(drinks, [{"id": "lager", "count": 1}])
    response = respond(drinks, d["id"], {"type": "ACCEPT", "empties": empties})
    assert response.status_code == 400, response.data
    assert problem_paths(response)[0].startswith("empties"), response.data


def test_response_empties_51(drinks):
    for i in range(47):
        drinks.put(f"/deposits/t{i:02d}", {"name": "Type", "price": 1})
    d = place(drinks, [{"id": "lager", "count": 1}])
    empties = [{"id": f"t{i:02d}", "count": 0} for i in range(47)] + [
        {"id": x, "count": 0} for x in ("bottle", "crate", "keg", "pallet")
    ]
    bad(respond(drinks, d["id"], {"type": "ACCEPT", "empties": empties}), ["empties"])
    ok = respond(drinks, d["id"], {"type": "ACCEPT", "empties": empties[1:]})
    assert ok.status_code == 200, ok.data


def test_reject_with_nonempty_empties_and_update_zero(drinks):
    d = place(drinks, [{"id": "lager", "count": 1}], empties=[{"id": "crate", "count": 2}])
    bad(respond(drinks, d["id"], {"type": "REJECT", "empties": [{"id": "crate", "count": 1}]}), ["empties"])
    assert respond(drinks, d["id"], {"type": "ACCEPT"}).status_code == 200
    r = respond(drinks, d["id"], {"type": "UPDATE", "empties": [{"id": "crate", "count": 0}]})
    assert r.status_code == 200, r.data
    assert r.data["responses"][-1]["empties"] == [{**CRATE_E, "count": 0}]
    assert r.data["deposits"] == {"charged": [{**BOTTLE_E, "count": 1}], "returned": [], "total": 8}
    bad(respond(drinks, d["id"], {"type": "REJECT", "empties": [{"id": "crate", "count": 1}]}), ["empties"])


def test_deposits_absent_when_everything_returned_is_zero(drinks):
    d = place(drinks, [{"id": "water", "count": 1}], empties=[{"id": "crate", "count": 2}])
    assert "deposits" not in d  # announced only
    r = respond(drinks, d["id"], {"type": "ACCEPT", "empties": [{"id": "crate", "count": 0}]}).data
    assert "deposits" not in r
    assert r["request"]["empties"] == [{**CRATE_E, "count": 2}]
    assert "deposits" not in drinks.get(f"/deliveries/{d['id']}").data
    assert list(r["responses"][0])[-1] == "empties"


def test_response_item_count_zero_charges_nothing(drinks):
    d = place(drinks, [{"id": "lager", "count": 2, "bundle": CRATE}])
    r = respond(drinks, d["id"], {"type": "ACCEPT", "items": [{"id": "lager", "count": 0}]}).data
    assert "deposits" not in r, r.get("deposits")


def test_latest_response_listing_the_item(drinks):
    d = place(drinks, [{"id": "lager", "count": 2, "bundle": CRATE}, {"id": "water", "count": 1}])
    respond(drinks, d["id"], {"type": "ACCEPT", "items": [{"id": "lager", "count": 1}]})
    r = respond(drinks, d["id"], {"type": "UPDATE", "items": [{"id": "water", "count": 3}]}).data
    assert r["deposits"]["charged"] == [{**BOTTLE_E, "count": 20}, {**CRATE_E, "count": 1}]


def test_receive_is_one_feed_entry(drinks):
    d = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}], empties=[{"id": "keg", "count": 1}])
    respond(drinks, d["id"], {"type": "ACCEPT"})
    start = drinks.get("/changes?after=latest").data["last_sequence"]
    drinks.post(f"/customer/deliveries/{d['id']}/receive", {}, token=CUSTOMER_TOKEN)
    changes = drinks.get(f"/changes?after={start}&include=data").data["changes"]
    assert [(c["type"], c["id"]) for c in changes] == [("delivery.delivered", str(d["id"]))] or [
        (c["type"], c["id"]) for c in changes
    ] == [("delivery.delivered", d["id"])]
    assert changes[0]["data"]["deposits"]["total"] == 160 + 150 - 3000


def test_balances_shape_and_order(drinks):
    r = drinks.get(f"/customers/{CUSTOMER}/deposits")
    assert r.status_code == 200
    assert list(r.data) == ["deposits", "total"]
    assert [d["id"] for d in r.data["deposits"]] == ["bottle", "crate", "keg", "pallet"]
    assert list(r.data["deposits"][0]) == ["id", "name", "price", "balance"]
    drinks.put("/deposits/crate", {"name": "Crate II", "price": 200})
    drinks.post(f"/customers/{CUSTOMER}/deposits", {"id": "crate", "count": 3, "message": "x"})
    r = drinks.get("/customer/deposits", token=CUSTOMER_TOKEN).data
    assert r["deposits"][1] == {"id": "crate", "name": "Crate II", "price": 200, "balance": 3}
    assert r["total"] == 600


def test_balances_of_an_account_with_no_types(shop):
    assert shop.get(f"/customers/{CUSTOMER}/deposits").data == {"deposits": [], "total": 0}


@pytest.mark.parametrize(
    "body, paths",
    [
        ({"id": "crate", "count": True, "message": "m"}, ["count"]),
        ({"id": "crate", "count": "5", "message": "m"}, ["count"]),
        ({"id": "crate", "count": None, "message": "m"}, ["count"]),
        ({"id": "crate", "message": "m"}, ["count"]),
        ({"id": "crate", "count": 1, "message": 5}, ["message"]),
        ({"id": 5, "count": 1, "message": "m"}, ["id"]),
        ({"id": "a b", "count": 1, "message": "m"}, ["id"]),
    ],
)
def test_adjustment_bad_types(drinks, body, paths):
    bad(drinks.post(f"/customers/{CUSTOMER}/deposits", body), paths)


def test_adjustment_edges_pass(drinks):
    def keg() -> int:
        listed = drinks.get(f"/customers/{CUSTOMER}/deposits").data["deposits"]
        return next(d["balance"] for d in listed if d["id"] == "keg")

    before = keg()
    for count in (1, -1, 100_000):
        r = drinks.post(f"/customers/{CUSTOMER}/deposits", {"id": "keg", "count": count, "message": "m"})
        assert r.status_code == 200, r.data
    assert (
        drinks.post(f"/customers/{CUSTOMER}/deposits", {"id": "keg", "count": 1, "message": "x" * 500}).status_code
        == 200
    )
    assert keg() == before + 1 - 1 + 100_000 + 1  # every adjustment moved the balance


def test_adjustment_unknown_customer_before_deposit(drinks):
    assert drinks.post("/customers/nobody/deposits", {"id": "nope", "count": 1, "message": "m"}).status_code in (
        400,
        404,
    )


def test_adjustment_feed_include_data(drinks):
    start = drinks.get("/changes?after=latest").data["last_sequence"]
    r = drinks.post(f"/customers/{CUSTOMER}/deposits", {"id": "keg", "count": 1, "message": "m"}).data
    changes = drinks.get(f"/changes?after={start}&include=data").data["changes"]
    assert len(changes) == 1
    assert (
        changes[0]["type"] == "customer-deposits.updated"
        and changes[0]["resource"] == "customer-deposits"
        and changes[0]["id"] == CUSTOMER
    )
    assert changes[0]["data"] == r


def test_pallet_bundle_deposit_comes_from_bundles_entry(drinks):
    from tests.api.deliveries_helpers import put_product

    put_product(
        drinks,
        "cider",
        {
            "status": "ACTIVE",
            "category": "drinks",
            "name": "Cider",
            "vessel": {"size": 0.33, "unit": "l"},
            "bundles": [
                {"type": "CT", "size": 24, "deposit": "crate"},
                {"type": "PX", "size": 10, "deposit": "pallet"},
            ],
            "price": 10,
        },
    )
    d = place(drinks, [{"id": "cider", "count": 2, "bundle": {"type": "PX", "size": 10}}])
    assert d["request"]["items"][0]["deposits"] == [{"id": "crate", "count": 20}, {"id": "pallet", "count": 2}]


def test_vessel_order_charges_only_vessel(drinks):
    d = place(drinks, [{"id": "lager", "count": 3}])
    assert d["request"]["items"][0]["deposits"] == [{"id": "bottle", "count": 3}]
    assert d["deposits"] == {"charged": [{**BOTTLE_E, "count": 3}], "returned": [], "total": 24}


def test_order_file_of_a_return_and_of_responses(drinks):
    d = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}], type="RETURN")
    respond(drinks, d["id"], {"type": "ACCEPT"})
    text = drinks.client.http.get(
        f"/deliveries/{d['id']}/csv", headers={"Authorization": "token test-supplier-token", "Accept": "text/csv"}
    ).body.decode("utf-8-sig")
    lines = text.split("\n")
    i = d["id"]
    assert lines[-3:] == [f"{i},bottle,Bottle,,,,,,,,-20,,8,,empties", f"{i},crate,Crate,,,,,,,,-1,,150,,empties", ""]


def test_order_file_after_a_response(drinks):
    d = place(drinks, [{"id": "lager", "count": 2, "bundle": CRATE}], empties=[{"id": "keg", "count": 2}])
    respond(
        drinks,
        d["id"],
        {
            "type": "ACCEPT",
            "items": [{"id": "lager", "count": 1}],
            "empties": [{"id": "keg", "count": 1}, {"id": "crate", "count": 0}],
        },
    )
    text = drinks.client.http.get(
        f"/deliveries/{d['id']}/csv", headers={"Authorization": "token test-supplier-token", "Accept": "text/csv"}
    ).body.decode("utf-8-sig")
    lines = text.split("\n")
    i = d["id"]
    assert lines[-4:] == [
        f"{i},bottle,Bottle,,,,,,,,20,,8,,deposit",
        f"{i},crate,Crate,,,,,,,,1,,150,,deposit",
        f"{i},keg,Keg,,,,,,,,-1,,3000,,empties",
        "",
    ]


def test_customer_reads_and_cancel_and_webhook_selection(drinks):
    d = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    c = drinks.get(f"/customer/deliveries/{d['id']}", token=CUSTOMER_TOKEN).data
    assert list(c)[-1] in ("deposits", "integration")
    assert "deposits" in c


def test_kg_product_patch_to_kg_with_deposit(drinks):
    r = drinks.patch("/products/lager", {"order_by": "kg"})
    assert r.status_code == 400, r.data
    print(problem_paths(r))
    assert "vessel.deposit" in problem_paths(r)


def test_customer_catalogue_pallet_bundle(drinks):
    products = drinks.get("/customer/products", token=CUSTOMER_TOKEN).data["products"]
    lager = next(p for p in products if p["id"] == "lager")
    assert list(lager["vessel"])[-1] == "deposit"
    assert [list(b)[-1] for b in lager["bundles"]] == ["deposit", "deposit"]


# -- every wrong field at once (decisions §3)
def test_put_type_names_every_wrong_field(api):
    bad(api.put("/deposits/crate", {"id": "keg", "name": "ab", "price": -1}), ["id", "name", "price"])
    bad(api.put("/deposits/" + "x" * 65, {"name": "ab", "price": -1}), ["id", "name", "price"])
    bad(api.put("/deposits/crate", {"id": "a b", "name": "Crate", "price": 1}), ["id"])
    assert api.get("/deposits").data == {"deposits": []}


@pytest.mark.parametrize(
    "body, paths",
    [
        ({"id": "nope", "count": 0, "message": ""}, ["id", "count", "message"]),
        ({"id": "nope", "count": 0, "message": "m"}, ["id", "count"]),
        ({"id": "crate", "count": 0, "message": ""}, ["count", "message"]),
        ({"id": "nope", "count": 1, "message": ""}, ["id", "message"]),
    ],
)
def test_adjustment_names_every_wrong_field(drinks, body, paths):
    bad(drinks.post(f"/customers/{CUSTOMER}/deposits", body), paths)


def test_order_names_item_and_empties_problems_in_body_order(drinks):
    response = order(drinks, [{"id": "nope", "count": 1}], empties=[{"id": "nope", "count": 0}])
    bad(response, ["items[0].id", "empties[0].id", "empties[0].count"])
