"""The store's one door (store/operations.py `write`, `commit`, `refusal`) on moto and DynamoDB Local: a refusal is
the outcome its item declared, found by the item's key whatever its place in the transaction; what nobody declared
is raised, never answered as something else."""

import pytest

from chalicelib.store import keys, operations, table
from chalicelib.store.operations import Operation
from chalicelib.store.outcomes import Contended, Gone, Stale, Taken, TooLarge
from tests.transactions import cancelled, intercept

from .conftest import ACCOUNT


def _put(category_id: str, condition: str | None = "attribute_not_exists(PK)") -> dict:
    request = {"TableName": table.name(), "Item": table.to_item({**keys.category_key(ACCOUNT, category_id), "n": 1})}
    return {"Put": {**request, "ConditionExpression": condition} if condition else request}


def _exists(category_id: str) -> dict:
    key = table.to_item(keys.category_key(ACCOUNT, category_id))
    return {"ConditionCheck": {"TableName": table.name(), "Key": key, "ConditionExpression": "attribute_exists(PK)"}}


def _stored(category_id: str) -> dict | None:
    key = table.to_item(keys.category_key(ACCOUNT, category_id))
    found = table.client().get_item(TableName=table.name(), Key=key, ConsistentRead=True)
    return table.from_item(found["Item"]) if "Item" in found else None


@pytest.mark.parametrize("place", [0, 1, 2])
def test_the_refused_item_answers_by_its_key_wherever_it_stands(engine, place):
    assert operations.write(Operation(_put("taken"))) is None
    refused = Operation(_put("taken"), Taken())
    others = [Operation(_put("a"), Gone()), Operation(_put("b"), Stale())]
    items = [op.item for op in others]
    items.insert(place, refused.item)
    # The declared operations in another order than the items: only the key ties them.
    assert operations.commit(items, [*reversed(others), refused]) == Taken()
    assert _stored("a") is None and _stored("b") is None  # nothing written


def test_a_single_write_answers_its_declared_refusal_or_what_it_returned(engine):
    assert operations.write(Operation(_put("x"), Taken())) is None
    assert operations.write(Operation(_put("x"), Taken())) == Taken()
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.category_key(ACCOUNT, "x")),
        "UpdateExpression": "ADD n :one",
        "ConditionExpression": "attribute_exists(PK)",
        "ExpressionAttributeValues": table.values(one=1),
    }
    assert operations.write(Operation({"Update": update}, Gone()), "ALL_NEW")["n"] == 2
    assert (
        operations.write(
            Operation({"Update": {**update, "Key": table.to_item(keys.category_key(ACCOUNT, "y"))}}, Gone())
        )
        == Gone()
    )


def test_a_failed_condition_nobody_declared_is_raised_not_answered(engine):
    with pytest.raises(table.WriteFailed):
        operations.commit([_put("a"), _exists("missing")], [Operation(_put("a"))])
    assert _stored("a") is None


def test_a_conflict_is_contended_and_an_item_past_its_size_its_declared_outcome(engine, monkeypatch):
    items = [_put("a"), _put("b")]
    declared = [Operation(items[0], Taken()), Operation(items[1], Taken(), oversized=TooLarge())]

    def refuse(send, **request):
        raise refusal

    intercept(monkeypatch, refuse)
    refusal = cancelled(["None", "TransactionConflict"])
    assert operations.commit(items, declared) == Contended()
    refusal = cancelled(["ValidationError", "None"])
    with pytest.raises(table.WriteFailed):  # the first item's size was not planned for
        operations.commit(items, declared)
    refusal = cancelled(["None", "ValidationError"])
    assert operations.commit(items, declared) == TooLarge()
    refusal = cancelled(["ThrottlingError", "None"])
    with pytest.raises(table.WriteFailed, match="ThrottlingError"):
        operations.commit(items, declared)
