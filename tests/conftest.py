"""Shared fixtures: a moto DynamoDB with the table, an account with a supplier token, a Chalice test client."""

import json
import os

import pytest

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("SIGNING_SECRET", "test-signing-secret")
os.environ.setdefault("TABLE_NAME", "supplier-ordering-test")
os.environ.setdefault(
    "STANDING_ORDER_WORKERS", "1"
)  # moto's transactions are not safe at once (jobs/standing_order_turns)
os.environ.pop("AWS_ENDPOINT_URL_DYNAMODB", None)

from chalicelib.http import auth  # noqa: E402
from chalicelib.service import accounts  # noqa: E402
from chalicelib.store import table  # noqa: E402

from .moto_in_process import install as moto_in_process  # noqa: E402
from .moto_transactions import install as lean_moto_transactions  # noqa: E402
from .stream import forget as forget_stream  # noqa: E402

lean_moto_transactions()
moto_in_process()

SUPPLIER_TOKEN = "test-supplier-token"
OTHER_TOKEN = "other-supplier-token"


@pytest.fixture
def ddb():
    """A fresh moto DynamoDB with the service's table."""
    from moto import mock_aws

    with mock_aws():
        table.reset_client()
        auth.forget_all()
        table.create_table()
        yield table.client()
    table.reset_client()
    auth.forget_all()
    forget_stream()


@pytest.fixture
def accounts_ready(ddb):
    accounts.create_account("acme", "Acme Drinks", SUPPLIER_TOKEN)
    accounts.create_account("other", "Other Foods", OTHER_TOKEN)


class Api:
    """The Chalice test client with JSON helpers and a default token."""

    def __init__(self, client, token):
        self.client = client
        self.token = token

    def request(self, method, path, body=None, token=..., headers=None, raw=None):
        token = self.token if token is ... else token
        all_headers = {}
        if token is not None:
            all_headers["Authorization"] = f"token {token}"
        if body is not None or raw is not None:
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        response = getattr(self.client.http, method.lower())(path, headers=all_headers, body=data)
        response.data = json.loads(response.body) if response.body else None
        return response

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, body, **kw)

    def patch(self, path, body=None, **kw):
        return self.request("PATCH", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)


@pytest.fixture
def api(accounts_ready):
    from chalice.test import Client

    from app import app

    with Client(app) as client:
        yield Api(client, SUPPLIER_TOKEN)


@pytest.fixture
def catalogue(api):
    """The api with the category "drinks" that the catalogue tests put their products in."""
    assert api.put("/categories/drinks", {"name": "Drinks"}).status_code == 200
    return api


def problem_paths(response) -> list[str]:
    return [e["path"] for e in response.data["errors"]]


@pytest.fixture(autouse=True)
def real_clock_after_each_test():
    """Every test ends on the real clock. `fake_clock` and `clock_at` (a monkeypatch) both put clocks back, and in
    one test their teardowns ran in the order that left the fake one in use for every later test."""
    yield
    from chalicelib.service import clock

    clock.use(clock.Clock())


@pytest.fixture
def fake_clock():
    """The one clock (service/clock.py) stands still at the real time until the test moves it."""
    import datetime as dt

    from chalicelib.service import clock

    fake = clock.FakeClock(dt.datetime.now(dt.timezone.utc).replace(microsecond=0))
    previous = clock.use(fake)
    yield fake
    clock.use(previous)


def clock_at(monkeypatch, moment):
    """Put a FakeClock standing at `moment` in use for the rest of the test (undone with the monkeypatch)."""
    from chalicelib.service import clock

    fake = clock.FakeClock(moment)
    monkeypatch.setattr(clock, "_current", fake)  # what clock.use does, undone when the test ends
    return fake


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "pending_feed: writes wait in the table's stream (no prompt numbering after each commit)"
    )


@pytest.fixture(autouse=True)
def prompt_stream(request, monkeypatch):
    """With `make run` the stream feeder numbers a write within a fraction of a second, and in AWS the table
    stream's function does (docs/feed.md); in-process tests have neither, so the stream is handed to the numbering
    right after each commit, as if it had just been polled. Tests of the waiting itself are marked `pending_feed`."""
    if request.node.get_closest_marker("pending_feed"):
        yield
        return
    from chalicelib.store.unit_of_work import UnitOfWork

    from .stream import drain

    committed = UnitOfWork.commit

    def numbered(uow):
        refused = committed(uow)
        if refused is None and uow.changes:
            drain()
        return refused

    monkeypatch.setattr(UnitOfWork, "commit", numbered)
    yield
