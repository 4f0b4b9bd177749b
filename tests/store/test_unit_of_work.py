"""The unit of work (store/unit_of_work.py) on moto and DynamoDB Local: one transaction or nothing, every refusal
answered as its outcome here, nowhere else, and the feed's marks (store/feed_marks.py) on exactly the items of the
resources it changed. Nothing is numbered here (no stream drain): the marks are read off the items."""

import re

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.store import feed_marks, idempotency, keys, table
from chalicelib.store.outcomes import Contended, Gone, LostClaim, ProductsGone, Stale, Taken
from chalicelib.store.unit_of_work import Operation, unit_of_work
from tests.transactions import cancelled, intercept

from .conftest import ACCOUNT, NOW

pytestmark = pytest.mark.pending_feed

AT = "2026-05-04T09:30:00.000Z"  # NOW as an entry says it
WRITES = {"put_item", "update_item", "delete_item", "transact_write_items"}


def _put(category_id: str, name: str, condition: str | None = "attribute_not_exists(PK)") -> dict:
    request = {
        "TableName": table.name(),
        "Item": table.to_item({**keys.category_key(ACCOUNT, category_id), "name": name}),
    }
    if condition is not None:
        request["ConditionExpression"] = condition
    return {"Put": request}


def _exists(category_id: str) -> dict:
    key = table.to_item(keys.category_key(ACCOUNT, category_id))
    return {"ConditionCheck": {"TableName": table.name(), "Key": key, "ConditionExpression": "attribute_exists(PK)"}}


def _delete(category_id: str) -> dict:
    return {"Delete": {"TableName": table.name(), "Key": table.to_item(keys.category_key(ACCOUNT, category_id))}}


def _update(category_id: str, expression: str, **values) -> dict:
    request = {
        "TableName": table.name(),
        "Key": table.to_item(keys.category_key(ACCOUNT, category_id)),
        "UpdateExpression": expression,
        "ConditionExpression": "attribute_exists(PK)",
    }
    if "#n" in expression:
        request["ExpressionAttributeNames"] = {"#n": "name"}
    if values:
        request["ExpressionAttributeValues"] = table.values(**values)
    return {"Update": request}


def _items() -> dict[tuple[str, str], dict]:
    """Every item of the table by its key."""
    found, start = {}, {}
    while True:
        response = table.client().scan(TableName=table.name(), ConsistentRead=True, **start)
        for item in map(table.from_item, response["Items"]):
            found[(item["PK"], item["SK"])] = item
        if "LastEvaluatedKey" not in response:
            return found
        start = {"ExclusiveStartKey": response["LastEvaluatedKey"]}


def _names() -> dict[str, str]:
    return {keys.category_id_of(item): item["name"] for item in _items().values() if "name" in item}


def _marks() -> dict[str, dict]:
    """The mark of every marked item, by its sort key."""
    return {sk: item[feed_marks.MARK] for (pk, sk), item in _items().items() if feed_marks.MARK in item}


def _marked_on(category_id: str) -> list[dict]:
    """The changes the category's item is marked with, the mark checked to be a unit's of the account."""
    mark = _marks()[f"{keys.CATEGORY_PREFIX}{category_id}"]
    assert set(mark) == {"unit", "account", "changes"} and mark["account"] == ACCOUNT
    assert re.fullmatch("[0-9a-f]{16}", mark["unit"])
    return mark["changes"]


def _created(category_id: str) -> Change:
    return Change(ChangeType.CATEGORY_CREATED, category_id)


def _said(change_type: str, category_id: str) -> dict:
    return {"type": change_type, "resource": "category", "id": category_id, "at": AT}


def _write(*operations: Operation, changes=()) -> object:
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.add(*operations)
        uow.record(*changes)
        return uow.commit()


def _calls(monkeypatch) -> list[str]:
    """The writes table.client() sends from now on, by name."""
    real, calls = table.client(), []

    class Recorded:
        def __getattr__(self, name):
            attribute = getattr(real, name)
            if name not in WRITES:
                return attribute

            def call(**request):
                calls.append(name)
                return attribute(**request)

            return call

    monkeypatch.setattr(table, "client", lambda: Recorded())
    return calls


def test_leaving_without_commit_writes_nothing(engine):
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.add(Operation(_put("drinks", "Drinks"), Taken()), Operation(_put("food", "Food"), Taken()))
        uow.record(_created("drinks"), _created("food"))
    assert _items() == {}


def test_a_commit_marks_each_changed_resources_item_with_the_units_changes_and_no_other_item(engine):
    _write(Operation(_put("tea", "Tea")))
    operations = (
        Operation(_put("drinks", "Drinks"), Taken()),
        Operation(_put("food", "Food"), Taken()),
        Operation(_exists("tea"), Gone()),  # checked, not changed: not marked
    )
    assert _write(*operations, changes=[_created("drinks"), _created("food")]) is None
    assert _names() == {"drinks": "Drinks", "food": "Food", "tea": "Tea"}
    marks = _marks()
    assert sorted(marks) == ["CATEGORY#drinks", "CATEGORY#food"]
    unit = marks["CATEGORY#drinks"]["unit"]
    assert re.fullmatch("[0-9a-f]{16}", unit)
    assert marks == {
        "CATEGORY#drinks": {"unit": unit, "account": ACCOUNT, "changes": [_said("category.created", "drinks")]},
        "CATEGORY#food": {"unit": unit, "account": ACCOUNT, "changes": [_said("category.created", "food")]},
    }
    _write(Operation(_put("drinks", "Drinks 2", None)), changes=[Change(ChangeType.CATEGORY_UPDATED, "drinks")])
    again = _marks()["CATEGORY#drinks"]
    assert again["unit"] != unit and again["changes"] == [_said("category.updated", "drinks")]


def test_a_commit_with_no_change_writes_no_mark(engine):
    assert _write(Operation(_put("drinks", "Drinks"), Taken())) is None
    assert _write(Operation(_put("food", "Food"), Taken()), Operation(_put("tea", "Tea"), Taken())) is None
    assert _names() == {"drinks": "Drinks", "food": "Food", "tea": "Tea"} and _marks() == {}


def test_two_changes_of_one_resource_share_its_mark_in_the_order_recorded(engine):
    changes = [_created("drinks"), Change(ChangeType.CATEGORY_UPDATED, "drinks")]
    assert _write(Operation(_put("drinks", "Drinks")), Operation(_put("food", "Food")), changes=changes) is None
    assert _marked_on("drinks") == [_said("category.created", "drinks"), _said("category.updated", "drinks")]


@pytest.mark.parametrize("together", [False, True], ids=["alone", "in-a-transaction"])
@pytest.mark.parametrize(
    "expression, values, left",
    [
        ("SET #n = :n", {"n": "Renamed"}, {"name": "Renamed", "extra": "x"}),
        ("SET #n = :n REMOVE extra", {"n": "Renamed"}, {"name": "Renamed"}),
        ("REMOVE extra SET #n = :n", {"n": "Renamed"}, {"name": "Renamed"}),
        ("REMOVE extra", {}, {"name": "Drinks"}),
        ("ADD visits :one", {"one": 1}, {"name": "Drinks", "extra": "x", "visits": 1}),
    ],
    ids=["set", "set-remove", "remove-set", "remove-only", "add-only"],
)
def test_an_update_carries_the_mark_beside_its_own_clauses(engine, expression, values, left, together):
    item = {**keys.category_key(ACCOUNT, "drinks"), "name": "Drinks", "extra": "x"}
    table.client().put_item(TableName=table.name(), Item=table.to_item(item))
    operations = [Operation(_update("drinks", expression, **values))]
    operations += [Operation(_put("food", "Food"))] if together else []
    assert _write(*operations, changes=[Change(ChangeType.CATEGORY_UPDATED, "drinks")]) is None
    assert _marked_on("drinks") == [_said("category.updated", "drinks")]
    stored = _items()[table.key_of(keys.category_key(ACCOUNT, "drinks"))]
    assert {name: value for name, value in stored.items() if name not in ("PK", "SK", feed_marks.MARK)} == left


def test_a_condition_check_of_a_changed_resource_becomes_an_update_that_keeps_its_condition(engine, monkeypatch):
    _write(Operation(_put("drinks", "Drinks")))
    change = Change(ChangeType.CATEGORY_UPDATED, "drinks")
    assert _write(Operation(_exists("drinks"), Gone()), Operation(_put("food", "Food")), changes=[change]) is None
    assert _marked_on("drinks") == [_said("category.updated", "drinks")]
    assert _names() == {"drinks": "Drinks", "food": "Food"}
    before = _items()
    missing = Change(ChangeType.CATEGORY_UPDATED, "tea")
    assert _write(Operation(_exists("tea"), Gone()), Operation(_put("wine", "Wine")), changes=[missing]) == Gone()
    assert _items() == before  # the check still refuses: no item made, nothing written
    calls = _calls(monkeypatch)
    assert _write(Operation(_exists("drinks"), Gone()), changes=[change]) is None  # alone: one single write
    assert calls == ["update_item"]


def test_a_changed_resource_the_unit_does_not_write_gets_its_mark_alone_and_must_exist(engine):
    _write(Operation(_put("tea", "Tea")))
    change = Change(ChangeType.CATEGORY_UPDATED, "tea")
    assert _write(Operation(_put("drinks", "Drinks")), changes=[change]) is None
    assert sorted(_marks()) == ["CATEGORY#tea"]
    assert _marked_on("tea") == [_said("category.updated", "tea")]
    assert _names() == {"drinks": "Drinks", "tea": "Tea"}
    before = _items()
    with pytest.raises(table.WriteFailed):  # nobody declared what a change of a missing resource means
        _write(Operation(_put("food", "Food")), changes=[Change(ChangeType.CATEGORY_UPDATED, "nowhere")])
    assert _items() == before


def test_a_delete_marks_nothing_and_a_delete_recorded_as_another_change_is_an_error(engine, monkeypatch):
    _write(Operation(_put("drinks", "Drinks")), Operation(_put("food", "Food")), Operation(_put("tea", "Tea")))
    deleted = Change(ChangeType.CATEGORY_DELETED, "drinks")
    assert _write(Operation(_delete("drinks")), Operation(_put("wine", "Wine")), changes=[deleted]) is None
    assert _names() == {"food": "Food", "tea": "Tea", "wine": "Wine"} and _marks() == {}
    calls = _calls(monkeypatch)
    assert _write(Operation(_delete("food")), changes=[Change(ChangeType.CATEGORY_DELETED, "food")]) is None
    assert calls == ["delete_item"] and _names() == {"tea": "Tea", "wine": "Wine"}
    with pytest.raises(ValueError):
        _write(Operation(_delete("tea")), changes=[Change(ChangeType.CATEGORY_UPDATED, "tea")])
    assert calls == ["delete_item"] and _names() == {"tea": "Tea", "wine": "Wine"} and _marks() == {}


@pytest.mark.parametrize("kind", ["put", "update"])
def test_one_operation_with_a_change_is_one_single_item_write_carrying_the_mark(engine, monkeypatch, kind):
    _write(Operation(_put("drinks", "Drinks")))
    operation = _put("drinks", "Renamed", None) if kind == "put" else _update("drinks", "SET #n = :n", n="Renamed")
    calls = _calls(monkeypatch)
    assert _write(Operation(operation), changes=[Change(ChangeType.CATEGORY_UPDATED, "drinks")]) is None
    assert calls == [f"{kind}_item"]
    assert _names() == {"drinks": "Renamed"}
    assert _marked_on("drinks") == [_said("category.updated", "drinks")]
    refused = _write(Operation(_put("drinks", "Again"), Taken()), changes=[_created("drinks")])
    assert (refused, calls) == (Taken(), [f"{kind}_item", "put_item"])  # refused alone: the same outcome
    assert _names() == {"drinks": "Renamed"}


def test_a_failed_condition_is_the_refusal_its_operation_declared_and_writes_nothing(engine):
    _write(Operation(_put("drinks", "Drinks"), Taken()), changes=[_created("drinks")])
    before = _items()
    refused = _write(
        Operation(_put("food", "Food"), Taken()),
        Operation(_put("drinks", "Again"), Taken()),
        changes=[_created("food"), _created("drinks")],
    )
    assert refused == Taken() and _items() == before
    assert _write(Operation(_put("drinks", "Alone"), Taken())) == Taken()  # a single write answers the same
    assert _items() == before


def test_a_callable_refusal_is_asked_after_the_failure_and_the_highest_rank_answers(engine):
    asked = []

    def which() -> Gone:
        asked.append(_names())  # it may read: the refused write left nothing
        return Gone()

    refused = _write(
        Operation(_put("drinks", "Drinks")), Operation(_exists("missing"), which), changes=[_created("drinks")]
    )
    assert (refused, asked, _items()) == (Gone(), [{}], {})
    _write(Operation(_put("drinks", "Drinks"), Taken()))
    both = _write(Operation(_put("drinks", "Again"), Taken()), Operation(_exists("missing"), Stale(), rank=1))
    assert both == Stale()


def test_products_gone_on_several_operations_is_one_answer_naming_them_all(engine):
    _write(Operation(_put("x", "X")))
    before = _items()
    refused = _write(
        Operation(_exists("cola"), ProductsGone(frozenset({"cola"}))),
        Operation(_exists("beer"), ProductsGone(frozenset({"beer"}))),
        changes=[Change(ChangeType.CATEGORY_UPDATED, "x")],
    )
    assert refused == ProductsGone(frozenset({"cola", "beer"})) and _items() == before


def test_a_failed_condition_no_operation_declared_raises_write_failed(engine):
    _write(Operation(_put("drinks", "Drinks"), Taken()))
    before = _items()
    with pytest.raises(table.WriteFailed) as failed:
        _write(Operation(_put("food", "Food"), Taken()), Operation(_put("drinks", "Again")), changes=[_created("food")])
    assert failed.value.reasons[table.key_of(keys.category_key(ACCOUNT, "drinks"))] == table.CONDITION_FAILED
    assert _items() == before


def test_a_lost_idempotency_claim_is_lost_claim(engine):
    claimed = idempotency.claim(ACCOUNT, "orders", "key-1", "fingerprint", 1_000)
    taken_over = idempotency.ClaimedKey(claimed.account, claimed.scope, claimed.key, "someone-else")
    before = _items()
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.add(Operation(_put("drinks", "Drinks"), Taken()))
        uow.record(_created("drinks"))
        uow.answer(idempotency.Completion(taken_over, 201, {}, "{}"))
        assert uow.commit() == LostClaim()
    assert _items() == before
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.add(Operation(_put("drinks", "Drinks"), Taken()))
        uow.answer(idempotency.Completion(claimed, 201, {}, "{}"))
        assert uow.commit() is None
    answered = idempotency.claim(ACCOUNT, "orders", "key-1", "fingerprint", 1_001)
    assert (answered.state, answered.status) == (idempotency.COMPLETE, 201)


@pytest.mark.parametrize("changes", [[], [_created("drinks")]], ids=["alone", "with-change"])
def test_a_transaction_conflict_on_an_operation_is_contended(engine, monkeypatch, changes):
    def conflicting(send, **request):
        raise cancelled(["TransactionConflict"] + ["None"] * (len(request["TransactItems"]) - 1))

    intercept(monkeypatch, conflicting)
    operations = [Operation(_put("drinks", "Drinks"), Taken()), Operation(_put("food", "Food"), Taken())]
    assert _write(*operations, changes=changes) == Contended()
    assert _items() == {}


def test_the_fake_unit_of_work_answers_its_script_writing_nothing_then_commits_for_real(engine, monkeypatch):
    from tests.unit_of_work import REAL, fake_commits

    commits = fake_commits(monkeypatch, Contended(), REAL, Stale())
    assert _write(Operation(_put("drinks", "Drinks"), Taken()), changes=[_created("drinks")]) == Contended()
    assert _items() == {}
    assert _write(Operation(_put("drinks", "Drinks"), Taken()), changes=[_created("drinks")]) is None
    assert _write(Operation(_update("drinks", "SET #n = :n", n="Beer"), Gone())) == Stale()
    assert _names() == {"drinks": "Drinks"}
    assert _write(Operation(_put("drinks", "Again"), Taken())) == Taken()  # the script used up: real answers
    assert commits.answers == [Contended(), None, Stale(), Taken()] and len(commits.units) == 4
    assert _marked_on("drinks") == [_said("category.created", "drinks")]
