"""Paging (decisions §4): limit, signed cursors bound to account and query, no repeats while items are added."""

import base64
import json
from urllib.parse import quote

import pytest

from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem


def add_products(api, ids, token=...):
    for product_id in ids:
        body = {"id": product_id, "status": "ACTIVE", "category": "drinks", "name": f"Product {product_id}"}
        assert api.post("/products", body, token=token).status_code == 200


def page(api, limit=None, cursor=None, path="/products", token=...):
    query = []
    if limit is not None:
        query.append(f"limit={limit}")
    if cursor is not None:
        query.append(f"cursor={quote(cursor)}")
    response = api.get(path + ("?" + "&".join(query) if query else ""), token=token)
    assert response.status_code == 200, response.body
    return response.data


def all_pages(api, limit, path="/products", name="products"):
    pages, cursor = [], None
    while True:
        data = page(api, limit, cursor, path)
        pages.append([item["id"] for item in data[name]])
        cursor = data.get("cursor")
        if cursor is None:
            return pages
        assert set(data) == {name, "cursor"}


SEVEN = ["p5", "p3", "p7", "p1", "p6", "p2", "p4"]


def test_seven_products_in_pages_of_three(catalogue):
    add_products(catalogue, SEVEN)
    pages = all_pages(catalogue, 3)
    assert [len(p) for p in pages] == [3, 3, 1]
    assert sum(pages, []) == sorted(SEVEN)


def test_the_last_page_has_no_cursor(catalogue):
    add_products(catalogue, SEVEN)
    first = page(catalogue, 3)
    second = page(catalogue, 3, first["cursor"])
    last = page(catalogue, 3, second["cursor"])
    assert set(last) == {"products"}
    assert [p["id"] for p in last["products"]] == ["p7"]


def test_pages_carry_full_products(catalogue):
    add_products(catalogue, ["a"])
    assert page(catalogue, 1) == {
        "products": [{"id": "a", "status": "ACTIVE", "category": "drinks", "name": "Product a"}]
    }


def test_exactly_limit_items_has_no_cursor(catalogue):
    add_products(catalogue, ["a", "b", "c"])
    data = page(catalogue, 3)
    assert [p["id"] for p in data["products"]] == ["a", "b", "c"]
    assert "cursor" not in data


def test_twice_limit_items_makes_two_full_pages(catalogue):
    add_products(catalogue, ["a", "b", "c", "d"])
    assert all_pages(catalogue, 2) == [["a", "b"], ["c", "d"]]


def test_empty_list_has_no_cursor(catalogue):
    assert page(catalogue) == {"products": []}


@pytest.mark.parametrize("limit", ["0", "101", "abc", "-1", "1.5", "", "1e1", "%201", "%C2%B2", "%D9%A3", "9" * 5000])
def test_invalid_limit(catalogue, limit):
    response = catalogue.get(f"/products?limit={limit}")
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["limit"]


@pytest.mark.parametrize("limit", ["1", "100"])
def test_limit_bounds_accepted(catalogue, limit):
    add_products(catalogue, ["a", "b"])
    data = page(catalogue, limit)
    assert len(data["products"]) == min(int(limit), 2)


def test_default_limit_is_50(catalogue):
    ids = [f"p{i:02d}" for i in range(51)]
    add_products(catalogue, ids)
    first = page(catalogue)
    assert [p["id"] for p in first["products"]] == ids[:50]
    last = page(catalogue, cursor=first["cursor"])
    assert last == {"products": [{"id": "p50", "status": "ACTIVE", "category": "drinks", "name": "Product p50"}]}


def test_unknown_query_parameters_are_ignored(catalogue):
    add_products(catalogue, ["a", "b"])
    response = catalogue.get("/products?limit=1&colour=red")
    assert response.status_code == 200
    assert [p["id"] for p in response.data["products"]] == ["a"]


# --- cursors ---


def tampered(cursor: str) -> list[str]:
    body, signature = cursor.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["k"]["SK"]["S"] = "PRODUCT#a"  # resume elsewhere, keeping the old signature
    forged = base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    return [
        forged.decode().rstrip("=") + "." + signature,
        body + "." + flipped,
        body,
        cursor + "x",
        "x" + cursor,
        cursor + "." + signature,
        "not-a-cursor",
        "%%%",
        "..",
    ]


def test_tampered_cursor_is_refused(catalogue):
    add_products(catalogue, SEVEN)
    cursor = page(catalogue, 3)["cursor"]
    for bad in tampered(cursor):
        response = catalogue.get(f"/products?limit=3&cursor={quote(bad)}")
        assert_problem(response, 400, "validation-error")
        assert problem_paths(response) == ["cursor"], bad


def test_empty_cursor_is_refused(catalogue):
    response = catalogue.get("/products?cursor=")
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["cursor"]


def test_cursor_of_another_list_is_refused(catalogue):
    for category_id in ("a", "b", "c"):
        catalogue.put(f"/categories/{category_id}", {"name": category_id})
    add_products(catalogue, SEVEN)
    cursor = page(catalogue, 2, path="/categories")["cursor"]
    response = catalogue.get(f"/products?limit=2&cursor={quote(cursor)}")
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["cursor"]
    # ... and the other way round.
    product_cursor = page(catalogue, 2)["cursor"]
    response = catalogue.get(f"/categories?limit=2&cursor={quote(product_cursor)}")
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["cursor"]


def test_cursor_of_another_account_is_refused(catalogue):
    add_products(catalogue, SEVEN)
    catalogue.put("/categories/drinks", {"name": "Drinks"}, token=OTHER_TOKEN)
    add_products(catalogue, SEVEN, token=OTHER_TOKEN)
    cursor = page(catalogue, 3)["cursor"]
    response = catalogue.get(f"/products?limit=3&cursor={quote(cursor)}", token=OTHER_TOKEN)
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["cursor"]


def test_cursor_is_url_safe(catalogue):
    add_products(catalogue, SEVEN)
    cursor = page(catalogue, 3)["cursor"]
    assert quote(cursor, safe="") == cursor
    # Used unquoted, as a client copying it into a URL would.
    assert catalogue.get(f"/products?limit=3&cursor={cursor}").status_code == 200


def test_a_cursor_may_be_used_with_another_limit(catalogue):
    add_products(catalogue, SEVEN)
    cursor = page(catalogue, 2)["cursor"]
    assert [p["id"] for p in page(catalogue, 5, cursor)["products"]] == ["p3", "p4", "p5", "p6", "p7"]


def test_a_cursor_survives_deletion_of_its_last_item(catalogue):
    add_products(catalogue, SEVEN)
    first = page(catalogue, 3)
    assert catalogue.delete("/products/p3").status_code == 204
    assert [p["id"] for p in page(catalogue, 3, first["cursor"])["products"]] == ["p4", "p5", "p6"]


def test_paging_while_products_are_added_never_repeats(catalogue):
    add_products(catalogue, ["b", "d", "f", "h", "j"])
    seen, ahead, cursor = [], [], None
    while True:
        data = page(catalogue, 2, cursor)
        ids = [p["id"] for p in data["products"]]
        seen += ids
        # One product lands behind the position reached ("0..." sorts first), one right ahead of it ("d" < "d0").
        add_products(catalogue, [f"0{len(seen)}", ids[-1] + "0"])
        ahead.append(ids[-1] + "0")
        cursor = data.get("cursor")
        if cursor is None:
            break
    assert len(seen) == len(set(seen))
    assert seen == sorted(seen)
    assert not any(product_id.startswith("0") for product_id in seen)
    assert set(["b", "d", "f", "h", "j"] + ahead[:-1]) <= set(seen)


def test_categories_are_paged_the_same_way(catalogue):
    for category_id in ("g", "f", "e", "d", "c", "b"):
        catalogue.put(f"/categories/{category_id}", {"name": category_id})
    pages = all_pages(catalogue, 3, "/categories", "categories")
    assert pages == [["b", "c", "d"], ["drinks", "e", "f"], ["g"]]
