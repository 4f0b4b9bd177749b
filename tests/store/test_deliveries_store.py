"""The delivery store: ids, creation, the conditional change and its named outcomes, on moto and DynamoDB Local."""
import json
import random

import pytest

from chalicelib.store import deliveries as store
from chalicelib.store import delivery_lists, outcomes, products

from .conftest import NOW, sample_product

DELIVERY = {
    "id": 1,
    "type": "DELIVERY",
    "status": "REQUESTED",
    "customer": {"id": "c1", "company": None, "address": None, "contact": None},
    "request": {"customer_id": "c1", "items": [{"id": "cola", "count": 1}]},
    "responses": [],
}


@pytest.fixture
def stored(drinks):
    products.save("acme", sample_product(), now=NOW)
    assert store.place("acme", [DELIVERY], ["cola"], now=NOW) is None
    return DELIVERY


def test_ids_are_allocated_in_blocks(engine):
    assert store.allocate_ids("acme", 1) == [1]
    assert store.allocate_ids("acme", 2) == [2, 3]
    assert store.allocate_ids("other", 1) == [1]


def test_a_delivery_is_created_once(stored):
    assert store.place("acme", [DELIVERY], ["cola"], now=NOW) == outcomes.Stale()


def test_an_order_of_a_deleted_product_is_products_gone(drinks):
    assert store.place("acme", [DELIVERY], ["cola"], now=NOW) == outcomes.ProductsGone(frozenset({"cola"}))
    assert store.get("acme", 1) is None


def test_changes_are_conditional_on_the_version_read(stored):
    accepted = {**stored, "status": "ACCEPTED"}
    assert store.change("acme", accepted, 0, now=NOW) == store.StoredDelivery(accepted, 1)
    assert store.change("acme", accepted, 0, now=NOW) == outcomes.Stale()
    again = store.get("acme", 1)
    assert (again.version, again.delivery["status"]) == (1, "ACCEPTED")
    assert again.delivery["request"]["items"] == DELIVERY["request"]["items"]
    assert [json.loads(d)["id"] for d in delivery_lists.list_page("acme", 10, None, "ACCEPTED").items] == [1]  # JSON texts
    assert delivery_lists.list_page("acme", 10, None, "REQUESTED").items == []
    assert store.refresh("acme", store.StoredDelivery(stored, 0)) == again


def test_a_delivery_too_large_for_one_item_is_too_large(stored):
    # Random 4-byte characters: the stored JSON is deflated (store/rendered.py), so repeated text would fit.
    chars = random.Random(1)
    huge = {**stored, "responses": [
        {"type": "ACCEPT", "message": "".join(chr(chars.randrange(0x10000, 0x10FFF)) for _ in range(2000))}
        for _ in range(250)
    ]}
    assert store.change("acme", huge, 0, now=NOW) == outcomes.TooLarge()
    assert store.get("acme", 1).version == 0
