"""What every response carries (decisions §3): X-Request-Id and `instance`, HEAD beside GET, Retry-After on 409,
CORS when CORS_ALLOW_ORIGINS allows the Origin."""

import json
from types import SimpleNamespace

import pytest

from chalicelib.domain.errors import Busy
from chalicelib.http.request_ids import request_id
from chalicelib.service import catalogue
from tests.problems import assert_problem


@pytest.fixture
def product(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    api.put("/products/cola", {"status": "ACTIVE", "category": "drinks", "name": "Cola"})
    return api


@pytest.mark.parametrize(
    "method, path, token, status",
    [
        ("GET", "/products/cola", ..., 200),
        ("GET", "/products/nope", ..., 404),
        ("GET", "/products", None, 401),
        ("GET", "/no/such/path", ..., 404),
        ("POST", "/products/cola", ..., 405),
        ("GET", "/openapi.json", None, 200),
    ],
)
def test_every_response_has_a_request_id_and_problems_repeat_it(product, method, path, token, status):
    response = product.request(method, path, token=token)
    assert response.status_code == status
    identifier = response.headers["X-Request-Id"]
    assert len(identifier) >= 16
    if status >= 400:
        assert response.data["instance"] == identifier


def test_request_ids_differ_per_request(product):
    assert (
        product.get("/products/cola").headers["X-Request-Id"] != product.get("/products/cola").headers["X-Request-Id"]
    )


def test_api_gateways_request_id_is_used_when_there_is_one():
    assert request_id(SimpleNamespace(context={"requestId": "gw-1"}, lambda_context=None)) == "gw-1"


def test_head_answers_as_get_without_a_body(product):
    get = product.get("/products/cola")
    head = product.request("HEAD", "/products/cola")
    assert head.status_code == 200
    assert head.body == b""
    assert head.headers["ETag"] == get.headers["ETag"]
    assert head.headers["Content-Type"] == "application/json"
    assert head.headers["Content-Length"] == str(len(get.body))


@pytest.mark.parametrize(
    "path, status", [("/products/nope", 404), ("/no/such/path", 404), ("/customer/deliveries/1/cancel", 405)]
)
def test_head_failures_carry_no_body_either(product, path, status):
    head = product.request("HEAD", path)
    assert head.status_code == status
    assert head.body == b""


def test_every_get_route_answers_head(product):
    from app import app

    missing = [path for path, entries in app.routes.items() if "GET" in entries and "HEAD" not in entries]
    assert missing == []


def test_allow_lists_head_and_options(product):
    response = product.request("POST", "/products/cola")
    assert response.status_code == 405
    assert response.headers["Allow"] == "DELETE, GET, HEAD, OPTIONS, PATCH, PUT"


def test_a_409_says_when_to_retry(product, monkeypatch):
    def busy(*_args):
        raise Busy("the product is being changed; try again")

    monkeypatch.setattr(catalogue, "get_product", busy)
    response = product.get("/products/cola")
    assert_problem(response, 409, "conflict")
    assert response.headers["Retry-After"] == "1"


PREFLIGHT = {
    "Origin": "https://shop.example.com",
    "Access-Control-Request-Method": "PUT",
    "Access-Control-Request-Headers": "authorization, content-type",
}


def test_no_cors_by_default(product, monkeypatch):
    monkeypatch.delenv("CORS_ALLOW_ORIGINS", raising=False)
    response = product.request("OPTIONS", "/products/cola", token=None, headers=PREFLIGHT)
    assert response.status_code == 204
    assert "Access-Control-Allow-Origin" not in response.headers
    assert (
        "Access-Control-Allow-Origin"
        not in product.get("/products/cola", headers={"Origin": PREFLIGHT["Origin"]}).headers
    )


def test_cors_preflight_and_response_for_an_allowed_origin(product, monkeypatch):
    monkeypatch.setenv("CORS_ALLOW_ORIGINS", "https://other.example, https://shop.example.com")
    response = product.request("OPTIONS", "/products/cola", token=None, headers=PREFLIGHT)
    assert response.status_code == 204
    assert response.body == b""
    assert response.headers["Access-Control-Allow-Origin"] == "https://shop.example.com"
    assert response.headers["Access-Control-Allow-Methods"] == "DELETE, GET, HEAD, OPTIONS, PATCH, PUT"
    assert "If-Match" in response.headers["Access-Control-Allow-Headers"]
    assert response.headers["Vary"] == "Origin"
    read = product.get("/products/cola", headers={"Origin": "https://shop.example.com"})
    assert read.headers["Access-Control-Allow-Origin"] == "https://shop.example.com"
    assert "X-Request-Id" in read.headers["Access-Control-Expose-Headers"]
    foreign = product.get("/products/cola", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in foreign.headers


def test_cors_for_any_origin(product, monkeypatch):
    monkeypatch.setenv("CORS_ALLOW_ORIGINS", "*")
    read = product.get("/products/cola", headers={"Origin": "https://anyone.example"})
    assert read.headers["Access-Control-Allow-Origin"] == "*"
    assert json.loads(read.body)["id"] == "cola"
