"""Deposit types and balances in the table (store/deposits.py), on moto and on DynamoDB Local: the reference
counts that keep a named type from being deleted, and balances that add up under concurrent writes."""
from concurrent.futures import ThreadPoolExecutor

import pytest
from decimal import Decimal

from chalicelib.store import deposits, outcomes, products
from tests.store.conftest import ACCOUNT, NOW, sample_product


def bottled(product_id="cola", deposit="bottle"):
    return sample_product(product_id, vessel={"size": Decimal("1.5"), "unit": "l", "deposit": deposit})


def test_types_are_created_changed_and_counted(engine):
    assert deposits.put(ACCOUNT, "bottle", "Bottle", 8, NOW) == {"id": "bottle", "name": "Bottle", "price": 8}
    assert deposits.put(ACCOUNT, "crate", "Crate", 150, NOW) == {"id": "crate", "name": "Crate", "price": 150}
    assert deposits.put(ACCOUNT, "crate", "Crate", 160, NOW)["price"] == 160
    assert deposits.read_types(ACCOUNT, consistent=True) == {
        "bottle": {"name": "Bottle", "price": 8, "refs": 0},
        "crate": {"name": "Crate", "price": 160, "refs": 0},
    }


def test_a_named_type_stays_until_no_product_names_it(engine, drinks):
    deposits.put(ACCOUNT, "bottle", "Bottle", 8, NOW)
    assert isinstance(products.save(ACCOUNT, bottled("cola"), now=NOW, create_only=True), str)
    assert isinstance(products.save(ACCOUNT, bottled("fanta"), now=NOW, create_only=True), str)
    assert deposits.read_types(ACCOUNT, consistent=True)["bottle"]["refs"] == 2
    assert deposits.delete(ACCOUNT, "bottle", NOW) == outcomes.InUse()
    assert products.delete(ACCOUNT, "cola", NOW) is None
    revision = products.get(ACCOUNT, "fanta", consistent=True).revision
    saved = products.save(ACCOUNT, sample_product("fanta"), now=NOW, expected_revision=revision, deposits_before=frozenset({"bottle"}))
    assert isinstance(saved, str)
    assert deposits.read_types(ACCOUNT, consistent=True)["bottle"]["refs"] == 0
    assert deposits.delete(ACCOUNT, "bottle", NOW) is None
    assert deposits.delete(ACCOUNT, "bottle", NOW) == outcomes.Gone()


def test_a_product_naming_a_type_deleted_after_its_read_is_not_written(engine, drinks):
    deposits.put(ACCOUNT, "bottle", "Bottle", 8, NOW)
    deposits.put(ACCOUNT, "crate", "Crate", 150, NOW)
    assert deposits.delete(ACCOUNT, "bottle", NOW) is None  # between the service's check and its write
    assert products.save(ACCOUNT, bottled("cola"), now=NOW, create_only=True) == outcomes.Stale()
    assert products.get(ACCOUNT, "cola", consistent=True) is None


def test_concurrent_adjustments_of_one_customer_all_count(engine):
    if engine == "moto":
        pytest.skip("moto's transactions are not thread-safe; DynamoDB Local's are")
    deposits.put(ACCOUNT, "crate", "Crate", 150, NOW)
    from chalicelib.store import keys, table

    table.client().put_item(TableName=table.name(), Item=table.to_item({**keys.customer_key(ACCOUNT, "bar"), "data": {"id": "bar", "name": "Bar"}}))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda n: deposits.adjust(ACCOUNT, "bar", "crate", n, NOW), range(1, 17)))
    assert results == [None] * 16
    types, held = deposits.read_balances(ACCOUNT, "bar")
    assert held == {"crate": sum(range(1, 17))}


def test_adjusting_an_unknown_customer_or_type(engine):
    deposits.put(ACCOUNT, "crate", "Crate", 150, NOW)
    assert deposits.adjust(ACCOUNT, "nobody", "crate", 1, NOW) == outcomes.Gone()
    from chalicelib.store import keys, table

    table.client().put_item(TableName=table.name(), Item=table.to_item({**keys.customer_key(ACCOUNT, "bar"), "data": {"id": "bar", "name": "Bar"}}))
    assert deposits.adjust(ACCOUNT, "bar", "keg", 1, NOW) == outcomes.Stale()
    assert deposits.read_balances(ACCOUNT, "bar") == ({"crate": {"name": "Crate", "price": 150, "refs": 0}}, {})
    assert deposits.any_balance(ACCOUNT, "crate") is False
    assert deposits.adjust(ACCOUNT, "bar", "crate", 2, NOW) is None
    assert deposits.any_balance(ACCOUNT, "crate") is True
