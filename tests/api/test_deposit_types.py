"""Deposit types (decisions §15): PUT, GET, list, DELETE with the in-use guard, bounds, the feed."""

import pytest

from tests.api.customer_support import customer_token, make_customer, make_product
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem

CRATE = {"name": "Crate", "price": 150}


def fail(response, status, type_, paths=None):
    assert_problem(response, status, type_)
    if paths is not None:
        assert problem_paths(response) == paths


def test_put_creates_and_answers_the_type(api):
    response = api.put("/deposits/crate", CRATE)
    assert response.status_code == 200
    assert response.data == {"id": "crate", "name": "Crate", "price": 150}
    assert list(response.data) == ["id", "name", "price"]
    assert api.get("/deposits/crate").data == {"id": "crate", "name": "Crate", "price": 150}


def test_put_changes_and_the_same_put_again_changes_nothing(api):
    api.put("/deposits/crate", CRATE)
    assert api.put("/deposits/crate", {"name": " Beer crate ", "price": 300}).data == {
        "id": "crate",
        "name": "Beer crate",
        "price": 300,
    }
    after = api.get("/changes").data["max_sequence"]
    assert api.put("/deposits/crate", {"name": "Beer crate", "price": 300}).status_code == 200
    assert api.get("/changes").data["max_sequence"] == after


def test_body_id_must_equal_the_url_id(api):
    assert api.put("/deposits/crate", {"id": "crate", **CRATE}).status_code == 200
    fail(api.put("/deposits/crate", {"id": "keg", **CRATE}), 400, "validation-error", ["id"])


@pytest.mark.parametrize("deposit_id", ["a", "x" * 64, "Crate_20-b"])
def test_ids_as_product_ids(api, deposit_id):
    assert api.put(f"/deposits/{deposit_id}", CRATE).status_code == 200


@pytest.mark.parametrize("deposit_id", ["x" * 65, "a.b", "a%20b"])
def test_bad_ids(api, deposit_id):
    fail(api.put(f"/deposits/{deposit_id}", CRATE), 400, "validation-error", ["id"])


@pytest.mark.parametrize("name", ["abc", "x" * 64, "  Kiste  "])
def test_names_3_to_64(api, name):
    assert api.put("/deposits/crate", {"name": name, "price": 1}).data["name"] == name.strip()


@pytest.mark.parametrize(
    "name", ["ab", "x" * 65, "   ab  ", "a\tbc", "ab\ncd", "ab\u2028cd", "ab\u2029cd", "ab\x85cd", "ab\x0ccd", 12, None]
)
def test_bad_names(api, name):
    fail(api.put("/deposits/crate", {"name": name, "price": 1}), 400, "validation-error", ["name"])


@pytest.mark.parametrize("price", [0, 100_000])
def test_prices_0_to_100000(api, price):
    assert api.put("/deposits/crate", {"name": "Crate", "price": price}).data["price"] == price


@pytest.mark.parametrize("price", [-1, 100_001, 1.5, "150", None])
def test_bad_prices(api, price):
    fail(api.put("/deposits/crate", {"name": "Crate", "price": price}), 400, "validation-error", ["price"])


def test_name_and_price_are_required(api):
    fail(api.put("/deposits/crate", {}), 400, "validation-error", ["name", "price"])


def test_at_most_200_types(api):
    from chalicelib.store import keys, table

    types = {f"t{i:03d}": {"name": "Crate", "price": 1} for i in range(199)}
    table.client().put_item(
        TableName=table.name(), Item=table.to_item({**keys.deposit_types_key("acme"), "types": types, "count": 199})
    )
    assert api.put("/deposits/t199", CRATE).status_code == 200  # the 200th
    fail(api.put("/deposits/one-more", CRATE), 400, "validation-error", ["id"])
    assert api.put("/deposits/t000", {"name": "Changed", "price": 1}).status_code == 200  # changing still works
    assert api.delete("/deposits/t199").status_code == 204
    assert api.put("/deposits/one-more", CRATE).status_code == 200


def test_unknown_is_404(api):
    fail(api.get("/deposits/nope"), 404, "not-found")
    fail(api.delete("/deposits/nope"), 404, "not-found")


def test_list_in_id_order_paged(api):
    for deposit_id in ["keg", "bottle", "crate"]:
        api.put(f"/deposits/{deposit_id}", CRATE)
    first = api.get("/deposits?limit=2").data
    assert [d["id"] for d in first["deposits"]] == ["bottle", "crate"]
    second = api.get(f"/deposits?limit=2&cursor={first['cursor']}").data
    assert second == {"deposits": [{"id": "keg", "name": "Crate", "price": 150}]}
    assert api.get("/deposits").data["deposits"][0] == {"id": "bottle", "name": "Crate", "price": 150}
    assert api.get("/deposits?limit=3").data.get("cursor") is None


def test_list_of_none(api):
    assert api.get("/deposits").data == {"deposits": []}


def test_bad_cursor_and_limit(api):
    fail(api.get("/deposits?cursor=garbage"), 400, "validation-error", ["cursor"])
    fail(api.get("/deposits?limit=0"), 400, "validation-error", ["limit"])
    fail(api.get("/deposits?limit=101"), 400, "validation-error", ["limit"])


def test_accounts_do_not_see_each_others_types(api):
    api.put("/deposits/crate", CRATE)
    fail(api.get("/deposits/crate", token=OTHER_TOKEN), 404, "not-found")
    assert api.get("/deposits", token=OTHER_TOKEN).data == {"deposits": []}


def test_customers_may_not_manage_types(api):
    make_customer(api, "bar")
    token = customer_token(api, "bar")
    fail(api.get("/deposits", token=token), 403, "forbidden")
    fail(api.put("/deposits/crate", CRATE, token=token), 403, "forbidden")


def test_delete_then_gone(api):
    api.put("/deposits/crate", CRATE)
    assert api.delete("/deposits/crate").status_code == 204
    fail(api.get("/deposits/crate"), 404, "not-found")


def test_delete_refused_while_a_product_names_it(api):
    api.put("/deposits/crate", CRATE)
    make_product(api, "beer", bundles=[{"type": "CR", "size": 20, "deposit": "crate"}])
    fail(api.delete("/deposits/crate"), 400, "conflict")
    assert api.patch("/products/beer", {"bundles": [{"type": "CR", "size": 20}]}).status_code == 200
    assert api.delete("/deposits/crate").status_code == 204


def test_delete_refused_while_a_vessel_names_it_until_the_product_is_deleted(api):
    api.put("/deposits/bottle", CRATE)
    make_product(api, "beer", vessel={"size": 0.5, "unit": "l", "deposit": "bottle"})
    fail(api.delete("/deposits/bottle"), 400, "conflict")
    assert api.delete("/products/beer").status_code == 204
    assert api.delete("/deposits/bottle").status_code == 204


def test_delete_refused_while_a_balance_is_not_zero(api):
    api.put("/deposits/crate", CRATE)
    make_customer(api, "bar")
    api.post("/customers/bar/deposits", {"id": "crate", "count": 2, "message": "opening balance"})
    fail(api.delete("/deposits/crate"), 400, "conflict")
    api.post("/customers/bar/deposits", {"id": "crate", "count": -2, "message": "counted again"})
    assert api.delete("/deposits/crate").status_code == 204


def test_feed_entries_and_data(api):
    start = api.get("/changes?after=latest").data["last_sequence"]
    api.put("/deposits/crate", CRATE)
    api.put("/deposits/crate", {"name": "Crate", "price": 200})
    api.delete("/deposits/crate")
    changes = api.get(f"/changes?after={start}&include=data").data["changes"]
    assert [(c["type"], c["resource"], c["id"]) for c in changes] == [
        ("deposit.created", "deposit", "crate"),
        ("deposit.updated", "deposit", "crate"),
        ("deposit.deleted", "deposit", "crate"),
    ]
    assert changes[0]["data"] is None  # as GET answers now: deleted


def test_feed_data_of_a_type_that_exists(api):
    api.put("/deposits/crate", CRATE)
    changes = api.get("/changes?include=data").data["changes"]
    assert changes[-1]["data"] == {"id": "crate", "name": "Crate", "price": 150}


def test_webhook_events_may_select_deposit_types(api):
    body = {
        "url": "https://example.com/hook",
        "events": ["deposit.created", "deposit.updated", "deposit.deleted", "customer-deposits.updated"],
    }
    response = api.put("/account/settings/webhooks", body)
    assert response.status_code == 200, response.data
    api.put("/deposits/crate", CRATE)
    events = api.get("/account/events").data["events"]
    assert [e["type"] for e in events] == ["deposit.created"]
    assert events[0]["delivery_id"] is None
