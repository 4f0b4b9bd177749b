"""Request logs: one JSON line per request with who, what and how it went; never a token, body or cursor."""

import json
from types import SimpleNamespace

import pytest

from chalicelib.http import logs
from chalicelib.service import catalogue
from tests.conftest import SUPPLIER_TOKEN

UNKNOWN_TOKEN = "never-log-this-unknown-token"
REQUEST_KEYS = {"request_id", "method", "route", "status", "duration_ms"}


def lines(capsys) -> list[dict]:
    out = capsys.readouterr().out
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def request_lines(capsys) -> list[dict]:
    return [line for line in lines(capsys) if line["message"] == "request"]


@pytest.fixture
def quiet(api, capsys):
    """The api fixture, with whatever its setup logged discarded."""
    capsys.readouterr()
    return api


def test_one_json_line_per_request_with_account_route_status_and_duration(quiet, capsys):
    quiet.put("/categories/drinks", {"name": "Drinks"})
    quiet.get("/products/cola")
    every = lines(capsys)
    assert [line["message"] for line in every] == ["request", "request"]
    put, get = every
    assert REQUEST_KEYS <= set(put)
    assert (put["method"], put["route"], put["status"]) == ("PUT", "/categories/{category_id}", 200)
    assert put["account"] == "acme" and put["token_id"]
    assert (get["method"], get["route"], get["status"]) == ("GET", "/products/{product_id}", 404)
    assert get["problem"] == "not-found"
    assert put["service"] == "supplier-ordering" and put["level"] == "INFO"
    assert isinstance(put["duration_ms"], (int, float)) and put["duration_ms"] >= 0
    assert put["request_id"] and put["request_id"] != get["request_id"]


def test_unauthenticated_requests_are_logged_without_an_account(quiet, capsys):
    quiet.get("/products", token=UNKNOWN_TOKEN)
    quiet.get("/products", token=None)
    quiet.get("/openapi.json", token=None)
    first, second, third = request_lines(capsys)
    assert (first["status"], first["problem"]) == (401, "unauthorized")
    assert second["status"] == 401
    assert third["status"] == 200
    assert "account" not in first and "account" not in third


def test_errors_the_service_answers_before_any_handler_are_logged(quiet, capsys):
    quiet.post("/products", raw="x" * (1024 * 1024 + 1))
    quiet.delete("/products")
    quiet.get("/no/such/path")
    too_large, not_allowed, not_found = request_lines(capsys)
    assert (too_large["status"], too_large["problem"]) == (413, "payload-too-large")
    assert (not_allowed["status"], not_allowed["route"]) == (405, "/products")
    assert not_allowed["problem"] == "method-not-allowed"
    assert (not_found["status"], not_found["problem"]) == (404, "not-found")


def test_no_token_body_or_cursor_appears_in_the_logs(quiet, capsys):
    secret_body = {"name": "secret-category-name-in-body"}
    quiet.put("/categories/drinks", secret_body)
    quiet.get("/products?cursor=secret-cursor-value&limit=5")
    quiet.get("/products", token=UNKNOWN_TOKEN)
    quiet.request("GET", "/products", token=None, headers={"Authorization": f"Bearer {UNKNOWN_TOKEN}x"})
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert output.count('"message":"request"') == 4
    secrets = (SUPPLIER_TOKEN, UNKNOWN_TOKEN, "secret-category-name-in-body", "secret-cursor-value", "Authorization")
    for secret in secrets:
        assert secret not in output


def test_an_unexpected_failure_is_one_request_line_at_error_level(quiet, capsys, monkeypatch):
    def fail(*_args):
        raise RuntimeError("storage exploded")

    monkeypatch.setattr(catalogue, "list_products", fail)
    response = quiet.get("/products")
    assert response.status_code == 500
    every = lines(capsys)  # Chalice's own report of the exception comes out as JSON too
    requests = [line for line in every if line["message"] == "request"]
    assert len(requests) == 1
    line = requests[0]
    assert (line["level"], line["status"], line["problem"]) == ("ERROR", 500, "internal-error")
    assert any(line.get("exception_name") == "RuntimeError" for line in every)


def test_request_id_prefers_api_gateway_then_lambda():
    response = SimpleNamespace(status_code=204, headers={}, body="")
    lambda_context = SimpleNamespace(aws_request_id="l-1")
    gateway_context = {"requestId": "gw-1", "resourcePath": "/x"}
    gateway = SimpleNamespace(method="GET", context=gateway_context, lambda_context=lambda_context)
    assert logs.request_line(gateway, response, 0.001)["request_id"] == "gw-1"
    lambda_only = SimpleNamespace(method="GET", context={}, lambda_context=lambda_context)
    assert logs.request_line(lambda_only, response, 0.001)["request_id"] == "l-1"
    bare = SimpleNamespace(method="GET", context={}, lambda_context=None)
    assert len(logs.request_line(bare, response, 0.001)["request_id"]) == 32
    assert logs.request_line(bare, None, 0.0015)["status"] == 500
