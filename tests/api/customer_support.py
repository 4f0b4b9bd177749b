"""Builders shared by the customer, pricing and customer-portal API tests."""

from contextlib import contextmanager

from chalicelib.store import table


def make_category(api, category_id="drinks"):
    response = api.put(f"/categories/{category_id}", {"name": "Drinks"})
    assert response.status_code == 200, response.data


def make_product(api, product_id, **fields):
    make_category(api)
    body = {"status": "ACTIVE", "category": "drinks", "name": f"Product {product_id}", **fields}
    response = api.put(f"/products/{product_id}", body)
    assert response.status_code == 200, response.data
    return response.data


def make_customer(api, customer_id, **fields):
    response = api.put(f"/customers/{customer_id}", {"name": f"Customer {customer_id}", **fields})
    assert response.status_code == 200, response.data
    return response.data


def customer_token(api, customer_id):
    response = api.post(f"/customers/{customer_id}/tokens")
    assert response.status_code == 200, response.data
    return response.data["token"]


def volume(*points, **extra):
    return {"strategy": "VOLUME", "price_points": [{"from": f, "price": p} for f, p in points], **extra}


@contextmanager
def dynamodb_calls():
    """The DynamoDB operations made inside the block, by name (GetItem, UpdateItem, ...)."""
    calls = []

    def record(model, **_):
        calls.append(model.name)

    events = table.client().meta.events
    events.register("before-call.dynamodb", record)
    try:
        yield calls
    finally:
        events.unregister("before-call.dynamodb", record)
