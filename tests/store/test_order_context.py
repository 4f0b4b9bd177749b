"""order_context.load: one BatchGetItem for everything an order needs, chunked and retried."""

import pytest

from chalicelib.store import batch, keys, order_context, table
from tests.api.customer_support import dynamodb_calls

ACCOUNT = "acme"


def put(key: dict, data: dict, **extra):
    table.client().put_item(TableName=table.name(), Item=table.to_item({**key, "data": data, **extra}))


def product(product_id: str, **fields) -> dict:
    data = {"id": product_id, "status": "ACTIVE", "category": "c", "name": f"Product {product_id}", **fields}
    put(keys.product_key(ACCOUNT, product_id), data, rev="r1")
    return data


@pytest.fixture
def stored(ddb, monkeypatch):
    monkeypatch.setenv("TIMEZONE", "Europe/Helsinki")
    put(
        keys.settings_key(ACCOUNT, "DELIVERIES"),
        {
            "timezone": "Asia/Tokyo",
            "allow_delivery_comments": True,
            "allow_product_comments": False,
            "delivery_days": {},
        },
    )
    put(keys.customer_key(ACCOUNT, "bar"), {"id": "bar", "name": "Bar", "price_group": "gold"})
    beer, wine = product("beer", price=100), product("wine", price=900)
    put(keys.customer_pricing_key(ACCOUNT, "beer", "bar"), {"price": 80})
    put(keys.price_groups_key(ACCOUNT, "wine"), {"gold": {"price": 850}})
    return {"beer": beer, "wine": wine}


def test_load_reads_everything_in_one_request(stored):
    with dynamodb_calls() as calls:
        context = order_context.load(ACCOUNT, "bar", ["beer", "wine", "beer"])
    assert calls == ["BatchGetItem"]
    assert context.settings == {
        "timezone": "Asia/Tokyo",
        "allow_delivery_comments": True,
        "allow_product_comments": False,
        "claim_window_hours": 72,  # the default (decisions §18)
        "delivery_days": {},
    }
    assert context.customer == {"id": "bar", "name": "Bar", "price_group": "gold"}
    assert context.products == stored
    assert context.customer_pricing == {"beer": {"price": 80}}
    assert context.price_groups == {"wine": {"gold": {"price": 850}}}


def test_missing_things_are_absent_and_settings_default(ddb, monkeypatch):
    monkeypatch.setenv("TIMEZONE", "Europe/Helsinki")  # never the process's zone: an account keeps its own (§7)
    context = order_context.load(ACCOUNT, "nobody", ["nothing"])
    assert context.settings == {
        "timezone": "UTC",
        "allow_delivery_comments": False,
        "allow_product_comments": False,
        "claim_window_hours": 72,
    }
    assert context.customer is None
    assert (context.products, context.customer_pricing, context.price_groups) == ({}, {}, {})


def test_without_a_customer_only_settings_products_and_groups_are_read(stored):
    context = order_context.load(ACCOUNT, None, ["beer", "wine"])
    assert context.customer is None
    assert context.customer_pricing == {}
    assert set(context.products) == {"beer", "wine"}
    assert context.price_groups == {"wine": {"gold": {"price": 850}}}


def test_reads_can_leave_out_products_or_pricing(stored):
    no_products = order_context.load(ACCOUNT, "bar", ["beer", "wine"], read_products=False)
    assert no_products.products == {} and no_products.customer_pricing == {"beer": {"price": 80}}
    no_pricing = order_context.load(ACCOUNT, "bar", ["beer", "wine"], read_pricing=False)
    assert set(no_pricing.products) == {"beer", "wine"}
    assert no_pricing.customer_pricing == {} and no_pricing.price_groups == {}


def test_other_accounts_are_not_read(stored):
    context = order_context.load("other", "bar", ["beer"])
    assert context.customer is None and context.products == {} and context.customer_pricing == {}


def test_more_than_100_keys_are_read_in_chunks(ddb):
    ids = [f"p{n:03}" for n in range(120)]
    for product_id in ids:
        product(product_id)
    with dynamodb_calls() as calls:
        context = order_context.load(ACCOUNT, "bar", ids)  # 2 + 3 x 120 keys
    assert calls == ["BatchGetItem"] * 4
    assert sorted(context.products) == ids


def test_unprocessed_keys_are_asked_for_again(stored, monkeypatch):
    real = table.client().batch_get_item
    rounds = []

    def throttled(RequestItems):
        # The first answer leaves every key but the first unprocessed, as DynamoDB does when throttled.
        request = RequestItems[table.name()]
        rounds.append(len(request["Keys"]))
        if len(rounds) > 1:
            return real(RequestItems=RequestItems)
        first = real(RequestItems={table.name(): {**request, "Keys": request["Keys"][:1]}})
        return {**first, "UnprocessedKeys": {table.name(): {**request, "Keys": request["Keys"][1:]}}}

    monkeypatch.setattr(table.client(), "batch_get_item", throttled)
    monkeypatch.setattr(batch.time, "sleep", lambda seconds: None)
    context = order_context.load(ACCOUNT, "bar", ["beer", "wine"])
    assert rounds == [8, 7]
    assert set(context.products) == {"beer", "wine"}
    assert context.customer_pricing == {"beer": {"price": 80}}


def test_keys_left_unprocessed_for_good_are_an_error(stored, monkeypatch):
    def never(RequestItems):
        return {"Responses": {}, "UnprocessedKeys": RequestItems}

    monkeypatch.setattr(table.client(), "batch_get_item", never)
    monkeypatch.setattr(batch.time, "sleep", lambda seconds: None)
    with pytest.raises(batch.StillThrottled):
        order_context.load(ACCOUNT, "bar", ["beer"])
