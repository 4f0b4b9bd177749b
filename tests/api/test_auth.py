"""Authentication and tenancy (decisions §2): tokens, roles, accounts that never see each other, the token cache."""

import pytest

from chalicelib.http import auth
from chalicelib.store import table, tokens
from tests.conftest import OTHER_TOKEN, SUPPLIER_TOKEN, problem_paths
from tests.problems import assert_problem


@pytest.fixture
def catalogue(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    api.post("/products", {"id": "p1", "status": "ACTIVE", "category": "drinks", "name": "Apple juice"})
    return api


def test_missing_header_is_401(catalogue):
    assert_problem(catalogue.get("/products", token=None), 401, "unauthorized")
    assert_problem(catalogue.get("/products/p1", token=None), 401, "unauthorized")
    assert_problem(catalogue.post("/products", {"id": "p2"}, token=None), 401, "unauthorized")


@pytest.mark.parametrize(
    "header",
    [
        "",
        "   ",
        SUPPLIER_TOKEN,
        "token",
        "token ",
        "Bearer",
        "Basic " + SUPPLIER_TOKEN,
        "Digest x",
        "token " + SUPPLIER_TOKEN + " extra",
        "tokenx " + SUPPLIER_TOKEN,
        "token\t",
    ],
)
def test_malformed_header_is_401(catalogue, header):
    response = catalogue.get("/products/p1", token=None, headers={"Authorization": header})
    assert_problem(response, 401, "unauthorized")


@pytest.mark.parametrize("secret", ["unknown", SUPPLIER_TOKEN + "x", SUPPLIER_TOKEN.upper(), "x" * 600])
def test_unknown_token_is_401(catalogue, secret):
    assert_problem(catalogue.get("/products/p1", token=secret), 401, "unauthorized")


def test_401_tells_how_to_authenticate(catalogue):
    response = catalogue.get("/products", token=None)
    assert "Bearer" in response.headers["WWW-Authenticate"]


@pytest.mark.parametrize("scheme", ["token", "Token", "TOKEN", "Bearer", "bearer"])
def test_token_and_bearer_forms(catalogue, scheme):
    response = catalogue.get("/products/p1", token=None, headers={"Authorization": f"{scheme} {SUPPLIER_TOKEN}"})
    assert response.status_code == 200
    assert response.data["id"] == "p1"


def test_surrounding_whitespace_is_tolerated(catalogue):
    response = catalogue.get("/products/p1", token=None, headers={"Authorization": f"  Bearer   {SUPPLIER_TOKEN} "})
    assert response.status_code == 200


# --- tenancy ---


def test_another_account_never_sees_the_products(catalogue):
    assert_problem(catalogue.get("/products/p1", token=OTHER_TOKEN), 404, "not-found")
    assert_problem(catalogue.patch("/products/p1", {"name": "Hijacked"}, token=OTHER_TOKEN), 404, "not-found")
    assert_problem(catalogue.delete("/products/p1", token=OTHER_TOKEN), 404, "not-found")
    assert catalogue.get("/products", token=OTHER_TOKEN).data == {"products": []}
    assert catalogue.get("/products/p1").data["name"] == "Apple juice"


def test_the_same_id_in_two_accounts_is_two_products(catalogue):
    catalogue.put("/categories/food", {"name": "Food"}, token=OTHER_TOKEN)
    theirs = catalogue.put(
        "/products/p1", {"status": "INACTIVE", "category": "food", "name": "Their product"}, token=OTHER_TOKEN
    )
    assert theirs.status_code == 200
    assert catalogue.get("/products/p1").data["name"] == "Apple juice"
    assert catalogue.get("/products/p1", token=OTHER_TOKEN).data["name"] == "Their product"
    assert catalogue.delete("/products/p1", token=OTHER_TOKEN).status_code == 204
    assert catalogue.get("/products/p1").status_code == 200


def test_another_accounts_category_is_unknown(catalogue):
    response = catalogue.post(
        "/products", {"id": "p2", "status": "ACTIVE", "category": "drinks", "name": "Pear"}, token=OTHER_TOKEN
    )
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["category"]


# --- roles ---


@pytest.fixture
def customer_token(catalogue):
    _, secret = tokens.create("acme", "customer", "cust1")
    return secret


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/products"),
        ("GET", "/products/p1"),
        ("DELETE", "/products/p1"),
        ("GET", "/categories"),
        ("PUT", "/categories/x"),
    ],
)
def test_customer_token_on_a_supplier_endpoint_is_403(catalogue, customer_token, method, path):
    body = {"name": "X"} if method == "PUT" else None
    assert_problem(catalogue.request(method, path, body, token=customer_token), 403, "forbidden")
    assert catalogue.get("/products/p1").status_code == 200


def test_customer_token_on_an_unknown_path_is_404(catalogue, customer_token):
    assert_problem(catalogue.get("/nope", token=customer_token), 404, "not-found")


# --- revocation and the token cache ---


@pytest.fixture
def clock(fake_clock):
    return fake_clock


def test_a_new_token_works_at_once(catalogue):
    _, secret = tokens.create("acme", "supplier")
    assert catalogue.get("/products/p1", token=secret).status_code == 200


def test_a_revoked_token_stops_working_when_the_cache_expires(catalogue, clock):
    token_id, secret = tokens.create("acme", "supplier")
    assert catalogue.get("/products/p1", token=secret).status_code == 200
    tokens.revoke("acme", token_id)

    clock.advance(auth.CACHE_SECONDS - 1)
    assert catalogue.get("/products/p1", token=secret).status_code == 200  # still cached

    clock.advance(2)
    assert_problem(catalogue.get("/products/p1", token=secret), 401, "unauthorized")
    assert catalogue.get("/products/p1").status_code == 200  # other tokens are unaffected


def test_revocation_takes_effect_within_60_seconds(catalogue, clock):
    token_id, secret = tokens.create("acme", "supplier")
    assert catalogue.get("/products/p1", token=secret).status_code == 200
    tokens.revoke("acme", token_id)
    clock.advance(60)
    assert_problem(catalogue.get("/products/p1", token=secret), 401, "unauthorized")


def test_a_revoked_token_fails_at_once_after_forget_all(catalogue):
    token_id, secret = tokens.create("acme", "supplier")
    assert catalogue.get("/products/p1", token=secret).status_code == 200
    tokens.revoke("acme", token_id)
    auth.forget_all()
    assert_problem(catalogue.get("/products/p1", token=secret), 401, "unauthorized")


def test_a_revoked_token_never_in_the_cache_fails_at_once(catalogue):
    token_id, secret = tokens.create("acme", "supplier")
    tokens.revoke("acme", token_id)
    assert_problem(catalogue.get("/products/p1", token=secret), 401, "unauthorized")


@pytest.fixture
def dynamodb_calls():
    calls = []

    def count(model, **_):
        calls.append(model.name)

    events = table.client().meta.events
    events.register("before-call.dynamodb", count)
    yield calls
    events.unregister("before-call.dynamodb", count)


def test_a_cached_token_costs_no_dynamodb_call(catalogue, dynamodb_calls):
    auth.forget_all()
    assert catalogue.get("/products/p1").status_code == 200
    assert dynamodb_calls == ["GetItem", "GetItem"]  # the token, then the product
    dynamodb_calls.clear()

    assert catalogue.get("/products/p1").status_code == 200
    assert dynamodb_calls == ["GetItem"]  # the product only


def test_a_bearer_and_a_token_header_share_the_cache(catalogue, dynamodb_calls):
    auth.forget_all()
    catalogue.get("/products/p1", token=None, headers={"Authorization": f"token {SUPPLIER_TOKEN}"})
    dynamodb_calls.clear()
    catalogue.get("/products/p1", token=None, headers={"Authorization": f"Bearer {SUPPLIER_TOKEN}"})
    assert dynamodb_calls == ["GetItem"]


def test_a_malformed_header_costs_no_dynamodb_call(catalogue, dynamodb_calls):
    catalogue.get("/products/p1", token=None, headers={"Authorization": "Basic abc"})
    assert dynamodb_calls == []
