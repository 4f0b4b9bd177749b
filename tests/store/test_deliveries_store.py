"""The delivery store on moto: ids, the conditional update, and a delivery that outgrows one item."""
import pytest

from chalicelib.domain.errors import ValidationFailed
from chalicelib.store import deliveries as store

DELIVERY = {
    "id": 1,
    "type": "DELIVERY",
    "status": "REQUESTED",
    "customer": {"id": "c1", "company": None, "address": None, "contact": None},
    "request": {"customer_id": "c1", "items": [{"id": "beer", "count": 1}]},
    "responses": [],
}


@pytest.fixture
def stored(ddb):
    assert store.transact(store.create_operations("acme", DELIVERY)) is None
    return DELIVERY


def test_ids_are_allocated_in_blocks(ddb):
    assert store.allocate_ids("acme", 1) == [1]
    assert store.allocate_ids("acme", 2) == [2, 3]
    assert store.allocate_ids("other", 1) == [1]


def test_a_delivery_is_created_once(stored):
    codes = store.transact(store.create_operations("acme", DELIVERY))
    assert codes == ["ConditionalCheckFailed", "ConditionalCheckFailed"]


def test_updates_are_conditional_on_the_version_read(stored):
    accepted = {**stored, "status": "ACCEPTED"}
    assert store.update(store.update_operation("acme", accepted, 0)) is True
    assert store.update(store.update_operation("acme", accepted, 0)) is False
    again = store.get("acme", 1)
    assert (again.version, again.delivery["status"]) == (1, "ACCEPTED")
    assert again.delivery["request"]["items"] == DELIVERY["request"]["items"]
    assert [d["id"] for d in store.list_page("acme", 10, None, "ACCEPTED").items] == [1]
    assert store.list_page("acme", 10, None, "REQUESTED").items == []


def test_a_delivery_too_large_for_one_item_is_a_400(stored):
    huge = {**stored, "responses": [{"type": "ACCEPT", "message": "x" * 2000}] * 250}
    with pytest.raises(ValidationFailed) as failure:
        store.update(store.update_operation("acme", huge, 0))
    assert [e.path for e in failure.value.errors] == ["body"]


@pytest.mark.parametrize("text, expected", [("1", 1), ("42", 42), ("0", None), ("01", None), ("-1", None), ("x", None), ("", None)])
def test_parse_id(text, expected):
    assert store.parse_id(text) == expected
