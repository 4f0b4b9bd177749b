"""Categories (decisions §5): PUT creates or replaces, GET one and list, DELETE unless a product uses it."""

import pytest

from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem as problem
from tests.transactions import condition_failed, intercept


def product(category, product_id="p1"):
    return {"id": product_id, "status": "ACTIVE", "category": category, "name": "Apple juice"}


def test_put_creates_and_returns_id_and_name(api):
    response = api.put("/categories/drinks", {"name": "Drinks"})
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.data == {"id": "drinks", "name": "Drinks"}
    assert api.get("/categories/drinks").data == {"id": "drinks", "name": "Drinks"}


def test_put_replaces(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    response = api.put("/categories/drinks", {"name": "Beverages"})
    assert response.status_code == 200
    assert response.data == {"id": "drinks", "name": "Beverages"}
    assert api.get("/categories/drinks").data == {"id": "drinks", "name": "Beverages"}
    assert api.get("/categories").data == {"categories": [{"id": "drinks", "name": "Beverages"}]}


def test_put_accepts_a_body_id_equal_to_the_url_id(api):
    response = api.put("/categories/drinks", {"id": "drinks", "name": "Drinks"})
    assert response.status_code == 200
    assert response.data == {"id": "drinks", "name": "Drinks"}


def test_put_refuses_a_body_id_other_than_the_url_id(api):
    response = api.put("/categories/drinks", {"id": "food", "name": "Drinks"})
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["id"]


@pytest.mark.parametrize("name", ["D", "x" * 64, "Getränke & Säfte", "a\u00a0b\u200bc"])
def test_name_1_to_64_characters(api, name):
    response = api.put("/categories/drinks", {"name": name})
    assert response.status_code == 200
    assert response.data["name"] == name


@pytest.mark.parametrize("name", ["", "   ", "x" * 65, 12, None, "a\nb", "a\u2028b", "a\x85b", "a\x0bb"])
def test_name_refused(api, name):
    response = api.put("/categories/drinks", {"name": name})
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["name"]
    problem(api.get("/categories/drinks"), 404, "not-found")


def test_name_required(api):
    response = api.put("/categories/drinks", {})
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["name"]


def test_unknown_field_refused(api):
    response = api.put("/categories/drinks", {"name": "Drinks", "colour": "red"})
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["colour"]


def test_every_wrong_field_is_listed(api):
    response = api.put("/categories/drinks", {"name": "", "colour": "red"})
    problem(response, 400, "validation-error")
    assert sorted(problem_paths(response)) == ["colour", "name"]


def test_name_is_trimmed(api):
    assert api.put("/categories/drinks", {"name": "  Drinks "}).data == {"id": "drinks", "name": "Drinks"}


@pytest.mark.parametrize("bad_id", ["bad.id", "a" * 129, "with%20space"])
def test_invalid_url_id_refused(api, bad_id):
    response = api.put(f"/categories/{bad_id}", {"name": "Drinks"})
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["id"]


def test_get_absent_is_404(api):
    problem(api.get("/categories/nope"), 404, "not-found")
    problem(api.get("/categories/bad.id"), 404, "not-found")


def test_list_is_paged_by_id_ascending(api):
    for category_id in ("c", "a", "e", "b", "d"):
        api.put(f"/categories/{category_id}", {"name": category_id.upper()})
    first = api.get("/categories?limit=2")
    assert first.status_code == 200
    assert first.data["categories"] == [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}]
    second = api.get(f"/categories?limit=2&cursor={first.data['cursor']}")
    assert [c["id"] for c in second.data["categories"]] == ["c", "d"]
    last = api.get(f"/categories?limit=2&cursor={second.data['cursor']}")
    assert last.data == {"categories": [{"id": "e", "name": "E"}]}


def test_list_empty(api):
    assert api.get("/categories").data == {"categories": []}


def test_list_refuses_a_bad_limit(api):
    response = api.get("/categories?limit=0")
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["limit"]


def test_delete_then_gone(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    response = api.delete("/categories/drinks")
    assert response.status_code == 204
    assert response.body == b""
    problem(api.get("/categories/drinks"), 404, "not-found")
    problem(api.delete("/categories/drinks"), 404, "not-found")


def test_delete_absent_is_404(api):
    problem(api.delete("/categories/nope"), 404, "not-found")


def test_delete_while_a_product_uses_it_is_a_conflict(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    api.put("/categories/food", {"name": "Food"})
    assert api.post("/products", product("drinks")).status_code == 200
    problem(api.delete("/categories/drinks"), 400, "conflict")
    assert api.get("/categories/drinks").status_code == 200

    # Once the product moves to another category, the old one can go.
    assert api.patch("/products/p1", {"category": "food"}).status_code == 200
    assert api.delete("/categories/drinks").status_code == 204
    problem(api.delete("/categories/food"), 400, "conflict")

    assert api.delete("/products/p1").status_code == 204
    assert api.delete("/categories/food").status_code == 204


def test_product_with_unknown_category_refused(api):
    response = api.post("/products", product("nope"))
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["category"]
    put = api.put("/products/p1", {"status": "ACTIVE", "category": "nope", "name": "Apple juice"})
    problem(put, 400, "validation-error")
    assert problem_paths(put) == ["category"]


def test_categories_belong_to_one_account(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    problem(api.get("/categories/drinks", token=OTHER_TOKEN), 404, "not-found")
    problem(api.delete("/categories/drinks", token=OTHER_TOKEN), 404, "not-found")
    assert api.get("/categories", token=OTHER_TOKEN).data == {"categories": []}
    # Another account's category cannot be used by this account's products.
    response = api.post("/products", product("drinks"), token=OTHER_TOKEN)
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["category"]


def test_post_creates_with_the_body_id(api):
    response = api.post("/categories", {"id": "drinks", "name": "Drinks"})
    assert response.status_code == 200
    assert response.data == {"id": "drinks", "name": "Drinks"}
    assert api.get("/categories/drinks").data == {"id": "drinks", "name": "Drinks"}


def test_post_refuses_an_existing_id_and_keeps_the_stored_name(api):
    api.post("/categories", {"id": "drinks", "name": "Drinks"})
    response = api.post("/categories", {"id": "drinks", "name": "Beverages"})
    problem(response, 400, "conflict")
    assert "drinks" in response.data["detail"]
    assert api.get("/categories/drinks").data == {"id": "drinks", "name": "Drinks"}


@pytest.mark.parametrize(
    "body, paths",
    [
        ({"name": "Drinks"}, ["id"]),
        ({"id": "a b", "name": "Drinks"}, ["id"]),
        ({"id": "drinks"}, ["name"]),
        ({"id": "drinks", "name": ""}, ["name"]),
        ({"id": "drinks", "name": "Drinks", "colour": "red"}, ["colour"]),
    ],
)
def test_post_names_each_wrong_field(api, body, paths):
    response = api.post("/categories", body)
    problem(response, 400, "validation-error")
    assert problem_paths(response) == paths


def test_a_category_that_keeps_changing_under_a_put_is_409_and_unchanged(api, monkeypatch):
    """Every write of the category loses to a change made between its read and its write (its one conditional
    PutItem, with its feed mark): the PUT reads and tries again CATEGORY_ATTEMPTS times, then answers 409."""
    from chalicelib.service import catalogue

    assert api.put("/categories/drinks", {"name": "Drinks"}).status_code == 200
    tried = []

    def changed_meanwhile(send, **request):
        tried.append(request["Item"]["name"]["S"])
        raise condition_failed()

    intercept(monkeypatch, changed_meanwhile, "put_item")
    response = api.put("/categories/drinks", {"name": "Beverages"})
    problem(response, 409, "conflict")
    assert response.data["detail"] == "the account is being changed by many requests at once; try again"
    assert tried == ["Beverages"] * catalogue.CATEGORY_ATTEMPTS == ["Beverages"] * 5
    monkeypatch.undo()
    assert api.get("/categories/drinks").data == {"id": "drinks", "name": "Drinks"}


@pytest.mark.pending_feed
def test_changes_waiting_for_the_stream_never_hold_a_write_back(api):
    """No bound on a resource's changes not yet numbered: each write is answered at once, and the stream's
    numbering gives them their places in the order they committed, the delete's (its REMOVE record) among them."""
    from tests.stream import drain

    drain()
    before = api.get("/changes?after=latest").data["max_sequence"]
    assert api.put("/categories/full", {"name": "Full"}).status_code == 200
    for n in range(5):
        assert api.put("/categories/full", {"name": f"Full {n}"}).status_code == 200
    assert api.delete("/categories/full").status_code == 204
    created = api.post("/categories", {"id": "full", "name": "Again"}, headers={"Idempotency-Key": "create-full"})
    assert (created.status_code, created.data) == (200, {"id": "full", "name": "Again"})
    assert api.get("/changes?after=latest").data["max_sequence"] == before  # nothing numbered yet
    drain()
    page = api.get(f"/changes?after={before}&limit=100").data
    assert [(e["sequence"] - before, e["type"]) for e in page["changes"]] == [
        (1, "category.created"),
        *[(n, "category.updated") for n in range(2, 7)],
        (7, "category.deleted"),
        (8, "category.created"),
    ]
    assert {e["id"] for e in page["changes"]} == {"full"}
