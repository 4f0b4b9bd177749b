"""The unit of work (store/unit_of_work.py) on moto and DynamoDB Local: one transaction or nothing, and every
refusal answered as its outcome here, nowhere else. Its entries stay pending (no prompt sequencer)."""

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.store import feed_numbering, idempotency, keys, table
from chalicelib.store.outcomes import Contended, Gone, LostClaim, ProductsGone, Stale, Taken
from chalicelib.store.unit_of_work import Operation, unit_of_work
from tests.transactions import cancelled, intercept

from .conftest import ACCOUNT, NOW

pytestmark = pytest.mark.pending_feed


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


def _names() -> dict[str, str]:
    response = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues=table.values(pk=keys.account_pk(ACCOUNT), prefix=keys.CATEGORY_PREFIX),
        ConsistentRead=True,
    )
    return {keys.category_id_of(item): item["name"] for item in map(table.from_item, response["Items"])}


def _pending() -> list[tuple[str, str]]:
    state = feed_numbering.read_state(ACCOUNT)
    return [(change["type"], change["id"]) for item in state.pending for change in item["changes"]]


def _created(category_id: str) -> Change:
    return Change(ChangeType.CATEGORY_CREATED, category_id)


def _write(*operations: Operation, changes=()) -> object:
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.add(*operations)
        uow.record(*changes)
        return uow.commit()


def test_leaving_without_commit_writes_nothing(engine):
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.add(Operation(_put("drinks", "Drinks"), Taken()), Operation(_put("food", "Food"), Taken()))
        uow.record(_created("drinks"), _created("food"))
    assert _names() == {} and _pending() == []


def test_a_commit_writes_the_operations_and_the_pending_entries_of_its_changes_together(engine):
    operations = Operation(_put("drinks", "Drinks"), Taken()), Operation(_put("food", "Food"), Taken())
    assert _write(*operations, changes=[_created("drinks"), _created("food")]) is None
    assert _names() == {"drinks": "Drinks", "food": "Food"}
    assert sorted(_pending()) == [("category.created", "drinks"), ("category.created", "food")]


def test_a_commit_with_no_change_writes_no_pending_entry(engine):
    assert _write(Operation(_put("drinks", "Drinks"), Taken())) is None
    assert _write(Operation(_put("food", "Food"), Taken()), Operation(_put("tea", "Tea"), Taken())) is None
    assert _names() == {"drinks": "Drinks", "food": "Food", "tea": "Tea"} and _pending() == []


def test_a_failed_condition_is_the_refusal_its_operation_declared_and_writes_nothing(engine):
    _write(Operation(_put("drinks", "Drinks"), Taken()), changes=[_created("drinks")])
    refused = _write(
        Operation(_put("food", "Food"), Taken()),
        Operation(_put("drinks", "Again"), Taken()),
        changes=[_created("food"), _created("drinks")],
    )
    assert refused == Taken()
    assert _names() == {"drinks": "Drinks"} and _pending() == [("category.created", "drinks")]
    # Alone, without a change: the single-item write answers the same.
    assert _write(Operation(_put("drinks", "Alone"), Taken())) == Taken()
    assert _names() == {"drinks": "Drinks"}


def test_a_callable_refusal_is_asked_after_the_failure_and_the_highest_rank_answers(engine):
    asked = []

    def which() -> Gone:
        asked.append(_names())  # it may read: the refused write left nothing
        return Gone()

    refused = _write(Operation(_put("drinks", "Drinks")), Operation(_exists("missing"), which))
    assert (refused, asked) == (Gone(), [{}])
    _write(Operation(_put("drinks", "Drinks"), Taken()))
    both = _write(Operation(_put("drinks", "Again"), Taken()), Operation(_exists("missing"), Stale(), rank=1))
    assert both == Stale()


def test_products_gone_on_several_operations_is_one_answer_naming_them_all(engine):
    refused = _write(
        Operation(_exists("cola"), ProductsGone(frozenset({"cola"}))),
        Operation(_exists("beer"), ProductsGone(frozenset({"beer"}))),
        changes=[_created("x")],
    )
    assert refused == ProductsGone(frozenset({"cola", "beer"})) and _pending() == []


def test_a_failed_condition_no_operation_declared_raises_write_failed(engine):
    _write(Operation(_put("drinks", "Drinks"), Taken()))
    with pytest.raises(table.WriteFailed) as failed:
        _write(Operation(_put("food", "Food"), Taken()), Operation(_put("drinks", "Again")), changes=[_created("x")])
    assert failed.value.reasons[table.key_of(keys.category_key(ACCOUNT, "drinks"))] == table.CONDITION_FAILED
    assert _names() == {"drinks": "Drinks"} and _pending() == []


def test_a_lost_idempotency_claim_is_lost_claim(engine):
    claimed = idempotency.claim(ACCOUNT, "orders", "key-1", "fingerprint", 1_000)
    taken_over = idempotency.ClaimedKey(claimed.account, claimed.scope, claimed.key, "someone-else")
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.add(Operation(_put("drinks", "Drinks"), Taken()))
        uow.record(_created("drinks"))
        uow.answer(idempotency.Completion(taken_over, 201, {}, "{}"))
        assert uow.commit() == LostClaim()
    assert _names() == {} and _pending() == []
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


def test_a_pending_entry_held_by_a_numbering_is_tried_again_or_contended_when_asked_not_to(engine, monkeypatch):
    calls = []

    def held_once(send, **request):
        calls.append(len(request["TransactItems"]))
        if len(calls) == 1:
            raise cancelled(["None", "TransactionConflict"])
        return send(**request)

    intercept(monkeypatch, held_once)
    assert _write(Operation(_put("drinks", "Drinks"), Taken()), changes=[_created("drinks")]) is None
    assert calls == [2, 2] and _pending() == [("category.created", "drinks")]
    calls.clear()
    with unit_of_work(ACCOUNT, NOW, retry_held=False) as uow:
        uow.add(Operation(_put("food", "Food"), Taken()))
        uow.record(_created("food"))
        assert uow.commit() == Contended()
    assert calls == [2]
