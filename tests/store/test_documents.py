"""service/documents.update: field-wise changes of a `data` map in one request, creating the item only when asked."""

import functools

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.service import documents as service
from chalicelib.store import documents, outcomes, table
from tests.api.customer_support import dynamodb_calls

KEY = {"PK": "A#acme", "SK": "THING#1"}
CHANGE = Change(ChangeType.CUSTOMER_UPDATED, "thing")

pytestmark = pytest.mark.pending_feed  # the calls counted are the write's own: no prompt sequencer after it

update = functools.partial(service.update, "acme", created=CHANGE, updated=CHANGE)


def test_a_missing_item_stays_missing_without_create_with(ddb):
    assert update(KEY, {"a": 1}, ("b",)) == outcomes.Gone()
    assert documents.get(KEY) is None


def test_create_with_creates_then_later_updates_read_then_write(ddb):
    assert update(KEY, {"a": 1}, ("b",), create_with={"a": 1, "keep": True}) == {"a": 1, "keep": True}
    with dynamodb_calls() as calls:
        assert update(KEY, {"b": {"x": [1, 2]}}, ("a",), create_with={"never": "used"}) == {
            "keep": True,
            "b": {"x": [1, 2]},
        }
    assert calls == ["BatchGetItem", "TransactWriteItems"]


def test_field_names_are_not_expression_syntax(ddb):
    update(KEY, {"x": 0}, (), create_with={"x": 0})
    assert update(KEY, {"name": "n", "size": 1, "a.b": 2, "#c": 3}, ()) == {
        "x": 0,
        "name": "n",
        "size": 1,
        "a.b": 2,
        "#c": 3,
    }


def test_an_item_created_between_the_two_requests_is_updated(ddb, monkeypatch):
    real_transact = table.client().transact_write_items
    raced = []

    def racing_transact(**request):
        # Someone else creates the item just before our create.
        if not raced:
            raced.append(True)
            table.client().put_item(TableName=table.name(), Item=table.to_item({**KEY, "data": {"theirs": 1}}))
        return real_transact(**request)

    monkeypatch.setattr(table.client(), "transact_write_items", racing_transact)
    assert update(KEY, {"ours": 2}, (), create_with={"ours": 2}) == {"theirs": 1, "ours": 2}


@pytest.mark.parametrize("create_with, expected", [(None, outcomes.Gone()), ({"d": 1}, {"d": 1})])
def test_no_changes_write_nothing(ddb, create_with, expected):
    assert update(KEY, {}, (), create_with=create_with) == expected
    assert documents.get(KEY) is None
