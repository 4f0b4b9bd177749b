"""A small shop for delivery tests: products, a customer with a token, account delivery settings.

Customers and settings are written straight into the table in the formats the brief fixes (their own routes
live elsewhere); products go through the API.
"""

import copy
import datetime as dt

import pytest

from chalicelib.store import keys, products, table, tokens
from tests.conftest import clock_at

ACCOUNT = "acme"
CUSTOMER = "c1"
CUSTOMER_TOKEN = "customer-c1-token"
OTHER_CUSTOMER_TOKEN = "customer-c2-token"
NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)  # a Monday

ADDRESS = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}
CONTACT = {"name": "Carla Customer", "email": "carla@example.com"}
USER = {"name": "Olli Orderer", "email": "olli@example.com"}

BEER = {
    "status": "ACTIVE",
    "category": "drinks",
    "name": "Pale Ale",
    "vessel": {"id": "v-33", "size": 0.33, "unit": "l", "type": "BO"},
    "bundles": [
        {"id": "crate", "id_override": "beer-crate", "type": "CT", "size": 24},
        {"id": "pallet", "type": "PX", "size": 10},
    ],
    "price": 150,
    "price_per": "vessel",
}
WINE = {
    "status": "OUT_OF_STOCK",
    "category": "drinks",
    "name": "Red Wine",
    "vessel": {"size": 0.75, "unit": "l"},
    "price": 900,
}
OLD = {"status": "INACTIVE", "category": "drinks", "name": "Old Cider", "price": 100}
CHEESE = {
    "status": "ACTIVE",
    "category": "drinks",
    "name": "Cheddar",
    "order_by": "kg",
    "price": 1200,
    "min_order_count": 0.5,
}
WATER = {"status": "ACTIVE", "category": "drinks", "name": "Water", "vessel": {"size": 1, "unit": "l"}}


def put_item(item: dict) -> None:
    table.client().put_item(TableName=table.name(), Item=table.to_item(item))


def put_customer(customer_id: str, **data) -> None:
    put_item({**keys.customer_key(ACCOUNT, customer_id), "data": {"id": customer_id, "name": customer_id, **data}})


def put_settings(**data) -> None:
    put_item({**keys.settings_key(ACCOUNT, "DELIVERIES"), "data": {"timezone": "UTC", **data}})


def _born(product_id: str) -> dict:
    """Pricing belongs to the product born as it is now (store/products.py `belongs`)."""
    found = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.product_key(ACCOUNT, product_id)))
    born = found.get("Item", {}).get(products.BORN)
    return {products.BORN: born["S"]} if born else {}


def put_customer_pricing(product_id: str, customer_id: str, **data) -> None:
    put_item({**keys.customer_pricing_key(ACCOUNT, product_id, customer_id), "data": data, **_born(product_id)})


def put_price_groups(product_id: str, groups: dict) -> None:
    put_item({**keys.price_groups_key(ACCOUNT, product_id), "data": groups, **_born(product_id)})


def put_product(api, product_id: str, data: dict) -> None:
    response = api.put(f"/products/{product_id}", body=data)
    assert response.status_code == 200, response.data


def order(api, items, token=CUSTOMER_TOKEN, **fields):
    return api.post("/customer/deliveries", body={"items": items, "user": USER, **fields}, token=token)


def place(api, items, **fields) -> dict:
    """Place an order that must succeed; its only delivery."""
    response = order(api, items, **fields)
    assert response.status_code == 200, response.data
    (delivery,) = response.data["deliveries"]
    return delivery


def respond(api, delivery_id, body, **kw):
    return api.post(f"/deliveries/{delivery_id}/responses", body=body, **kw)


def _moto_tables() -> dict:
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[DEFAULT_ACCOUNT_ID][table.client().meta.region_name].tables


# The shop as the first test of this process built it through the API, with its feed entries numbered or left
# pending (the `pending_feed` mark): later tests start from a copy of those tables instead of building it again
# (most of a delivery test's time went into the five product PUTs).
_built_shops: dict[bool, dict] = {}


@pytest.fixture
def shop(api, monkeypatch, request):
    """acme sells beer, wine (out of stock), an inactive cider, cheese by the kilo and unpriced water."""
    clock_at(monkeypatch, NOW)
    if "amazonaws.com" not in table.client().meta.endpoint_url:  # a real engine: build it every time
        _build_shop(api)
        return api
    pending = request.node.get_closest_marker("pending_feed") is not None
    tables = _moto_tables()
    if pending in _built_shops:
        tables.clear()
        tables.update(copy.deepcopy(_built_shops[pending]))
        return api
    _build_shop(api)
    _built_shops[pending] = copy.deepcopy(dict(tables))
    return api


def _build_shop(api) -> None:
    assert api.put("/categories/drinks", body={"name": "Drinks"}).status_code == 200
    for product_id, data in (("beer", BEER), ("wine", WINE), ("old", OLD), ("cheese", CHEESE), ("water", WATER)):
        put_product(api, product_id, data)
    put_customer(CUSTOMER, company="Bar Oy", address=ADDRESS, contact=CONTACT)
    put_customer("c2", company="Pub Ab", address=ADDRESS, contact=CONTACT)
    tokens.create(ACCOUNT, "customer", CUSTOMER, secret=CUSTOMER_TOKEN)
    tokens.create(ACCOUNT, "customer", "c2", secret=OTHER_CUSTOMER_TOKEN)
    put_settings(allow_delivery_comments=True, allow_product_comments=True)


def assert_shape(model, response) -> None:
    """The body is exactly what the route's response model declares (numbers read as the API parses them)."""
    import json
    from decimal import Decimal

    model.model_validate(json.loads(response.body, parse_float=Decimal))
