"""The delivery store: ids, creation, the conditional change and its named outcomes, on moto and DynamoDB Local."""

import json
import random

import pytest

from chalicelib.domain.feed import STATUS_CHANGE, ChangeType, delivery_change
from chalicelib.store import deliveries as store
from chalicelib.store import delivery_lists, delivery_writes, keys, outcomes, table
from chalicelib.store.unit_of_work import unit_of_work
from tests import delivery_units

from .conftest import NOW, sample_product, save_product

DELIVERY = {
    "id": 1,
    "type": "DELIVERY",
    "status": "REQUESTED",
    "customer": {"id": "c1", "company": None, "address": None, "contact": None},
    "request": {"customer_id": "c1", "items": [{"id": "cola", "count": 1}]},
    "responses": [],
}


def place(account: str, deliveries: list[dict], used: list[str]):
    """The deliveries placed as an order places them, with their delivery.requested Changes."""
    changes = [delivery_change(ChangeType.DELIVERY_REQUESTED, delivery) for delivery in deliveries]
    return delivery_units.place(account, deliveries, used, None, None, changes=changes, now=NOW)


def change(account: str, delivery: dict, version: int, integration=None):
    """The delivery changed as a response or a customer's action changes it, with its Change."""
    changes = [delivery_change(STATUS_CHANGE[delivery["status"]], delivery)]
    return delivery_units.change(account, delivery, version, integration, changes=changes, now=NOW)


def add_integration(account: str, stored: store.StoredDelivery, write: store.IntegrationWrite):
    """A delivery stored before integration states given its first one, as service/migrations.py does."""
    with unit_of_work(account, NOW) as uow:
        uow.add(*delivery_writes.adding_integration(account, stored.delivery["id"], write))
        return uow.commit()


@pytest.fixture
def stored(drinks):
    save_product("acme", sample_product(), now=NOW)
    assert place("acme", [DELIVERY], ["cola"]) is None
    return DELIVERY


def test_ids_are_allocated_in_blocks(engine):
    assert store.allocate_ids("acme", 1) == [1]
    assert store.allocate_ids("acme", 2) == [2, 3]
    assert store.allocate_ids("other", 1) == [1]


def test_a_delivery_is_created_once(stored):
    assert place("acme", [DELIVERY], ["cola"]) == outcomes.Stale()


def test_an_order_of_a_deleted_product_is_products_gone(drinks):
    assert place("acme", [DELIVERY], ["cola"]) == outcomes.ProductsGone(frozenset({"cola"}))
    assert store.get("acme", 1) is None


def test_changes_are_conditional_on_the_version_read(stored):
    accepted = {**stored, "status": "ACCEPTED"}
    assert change("acme", accepted, 0) is None
    assert change("acme", accepted, 0) == outcomes.Stale()
    again = store.get("acme", 1)
    assert (again.version, again.delivery["status"]) == (1, "ACCEPTED")
    assert again.delivery["request"]["items"] == DELIVERY["request"]["items"]
    assert [json.loads(d)["id"] for d in delivery_lists.list_page("acme", 10, None, "ACCEPTED").items] == [
        1
    ]  # JSON texts
    assert delivery_lists.list_page("acme", 10, None, "REQUESTED").items == []
    assert store.refresh("acme", store.StoredDelivery(stored, 0)) == again


def test_a_delivery_too_large_for_one_item_is_too_large(stored):
    # Random 4-byte characters: the stored JSON is deflated (store/rendered.py), so repeated text would fit.
    chars = random.Random(1)
    huge = {
        **stored,
        "responses": [
            {"type": "ACCEPT", "message": "".join(chr(chars.randrange(0x10000, 0x10FFF)) for _ in range(2000))}
            for _ in range(250)
        ],
    }
    assert change("acme", huge, 0) == outcomes.TooLarge()
    assert store.get("acme", 1).version == 0


# Cancellation reasons are read by item (issue 26.4): what the store answers names the item that refused.


def cancel_once(monkeypatch, code_of) -> list:
    """The next transaction is cancelled with `code_of(item)` for each of its items; the ones after go through."""
    from tests.transactions import cancelled as cancellation

    real, cancelled = table.client().transact_write_items, []

    def transact(**request):
        if cancelled:
            return real(**request)
        cancelled.append(request)
        raise cancellation([code_of(table.item_key(item)) for item in request["TransactItems"]])

    monkeypatch.setattr(table.client(), "transact_write_items", transact)
    return cancelled


def on_item(key: dict, code: str):
    """`code` for the item of `key`, None (it would have been written) for every other."""
    return lambda item_key: code if item_key == table.key_of(key) else "None"


def test_an_order_names_only_the_products_that_are_gone(drinks):
    save_product("acme", sample_product("cola"), now=NOW)
    answer = place("acme", [DELIVERY], ["tea", "cola", "juice"])
    assert answer == outcomes.ProductsGone(frozenset({"tea", "juice"}))


def test_an_order_whose_product_was_held_is_contended(drinks, monkeypatch):
    save_product("acme", sample_product("cola"), now=NOW)
    cancel_once(monkeypatch, on_item(keys.product_key("acme", "cola"), table.TRANSACTION_CONFLICT))
    assert place("acme", [DELIVERY], ["cola"]) == outcomes.Contended()
    assert place("acme", [DELIVERY], ["cola"]) is None  # nothing was written the first time


def test_a_change_refused_for_its_version_is_stale_whichever_item_comes_first(stored, monkeypatch):
    key = keys.delivery_key("acme", 1)
    cancel_once(monkeypatch, on_item(key, table.CONDITION_FAILED))
    write = store.IntegrationWrite({"status": "IMPORTED"}, "2026-05-04T09:30:00Z", {"pending": -1})
    assert change("acme", {**stored, "status": "ACCEPTED"}, 0, integration=write) == outcomes.Stale()


def test_a_transaction_cancelled_for_a_reason_no_caller_plans_for_is_a_named_store_error(stored, monkeypatch):
    """Throttling of one item, say: neither an outcome nor a bare RuntimeError, but table.WriteFailed naming it."""
    summary = keys.delivery_key("acme", 1)
    cancel_once(monkeypatch, on_item(summary, "ThrottlingError"))
    # With its integration counts: a transaction (the change alone is one item, a single UpdateItem).
    write = store.IntegrationWrite({"status": "IMPORTED"}, "2026-05-04T09:30:00Z", {"pending": -1})
    with pytest.raises(table.WriteFailed, match="ThrottlingError") as raised:
        change("acme", {**stored, "status": "ACCEPTED"}, 0, integration=write)
    assert not isinstance(raised.value, RuntimeError)
    assert raised.value.reasons[table.key_of(summary)] == "ThrottlingError"
    assert store.get("acme", 1).version == 0

    cancel_once(monkeypatch, on_item(keys.delivery_key("acme", 2), "ValidationError"))
    with pytest.raises(table.WriteFailed, match="ValidationError"):
        place("acme", [{**DELIVERY, "id": 2}], ["cola"])
    assert store.get("acme", 2) is None


def test_a_first_integration_state_is_taken_once_contended_when_held_and_fails_by_name(stored, monkeypatch):
    without = store.get("acme", 1)
    assert without.integration is None  # stored before integration states
    write = store.IntegrationWrite({"status": "PENDING"}, "2026-05-04T09:30:00Z", {"pending": 1})
    counts = keys.integration_counts_key("acme", 1 % keys.INTEGRATION_COUNT_SHARDS)
    cancel_once(monkeypatch, on_item(counts, table.TRANSACTION_CONFLICT))
    assert add_integration("acme", without, write) == outcomes.Contended()
    cancel_once(monkeypatch, on_item(counts, "ThrottlingError"))
    with pytest.raises(table.WriteFailed, match="ThrottlingError"):
        add_integration("acme", without, write)
    assert add_integration("acme", without, write) is None
    assert add_integration("acme", without, write) == outcomes.Taken()
    assert store.get("acme", 1).integration == {"status": "PENDING"}


def test_a_product_read_as_used_is_checked_not_written_and_one_without_the_flag_refuses(drinks):
    """Orders of a product already used (a standing order's 300 bars at once) only check its flag: they never
    write its item, so they do not contend for it; a product without the flag (made again) is ProductsGone."""
    from chalicelib.store import products

    save_product("acme", sample_product("cola"))
    key = table.to_item(keys.product_key("acme", "cola"))
    assert place("acme", [DELIVERY], ["cola"]) is None  # the first order flags it
    flagged = table.client().get_item(TableName=table.name(), Key=key, ConsistentRead=True)["Item"]
    assert flagged["used"] == {"BOOL": True}
    second = {**DELIVERY, "id": 2}
    changes = [delivery_change(ChangeType.DELIVERY_REQUESTED, second)]
    written = delivery_units.place(
        "acme", [second], ["cola"], None, None, changes=changes, now=NOW, used_already=frozenset({"cola"})
    )
    assert written is None
    assert table.client().get_item(TableName=table.name(), Key=key, ConsistentRead=True)["Item"] == flagged
    save_product("acme", sample_product("fresh"))
    third = {**DELIVERY, "id": 3}
    refused = delivery_units.place(
        "acme",
        [third],
        ["fresh"],
        None,
        None,
        changes=[delivery_change(ChangeType.DELIVERY_REQUESTED, third)],
        now=NOW,
        used_already=frozenset({"fresh"}),
    )
    assert refused == outcomes.ProductsGone(frozenset({"fresh"}))
    assert products.get("acme", "fresh").used is False
