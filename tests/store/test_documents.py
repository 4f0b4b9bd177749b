"""service/documents.update: field-wise changes of a `data` map in one request, creating the item only when asked."""

import datetime as dt
import functools

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.service import documents as service
from chalicelib.store import documents, feed, keys, outcomes, table
from tests.api.customer_support import dynamodb_calls
from tests.stream import drain
from tests.transactions import intercept

# A customer's document: its changes are marked on the very item the update writes (store/feed_marks.py).
KEY = keys.customer_key("acme", "thing")
CREATED, UPDATED = Change(ChangeType.CUSTOMER_CREATED, "thing"), Change(ChangeType.CUSTOMER_UPDATED, "thing")

pytestmark = pytest.mark.pending_feed  # the calls counted are the write's own: the stream is numbered when drained

update = functools.partial(service.update, "acme", created=CREATED, updated=UPDATED)


def feed_types() -> list[str]:
    drain()
    read = feed.read("acme", 0, 100, dt.datetime.now(dt.timezone.utc))
    return [entry["type"] for entry in read.entries] if isinstance(read, feed.Entries) else []


def test_a_missing_item_stays_missing_without_create_with(ddb):
    assert update(KEY, {"a": 1}, ("b",)) == outcomes.Gone()
    assert documents.get(KEY) is None
    assert feed_types() == []


def test_create_with_creates_then_later_updates_read_then_write(ddb):
    assert update(KEY, {"a": 1}, ("b",), create_with={"a": 1, "keep": True}) == {"a": 1, "keep": True}
    with dynamodb_calls() as calls:
        assert update(KEY, {"b": {"x": [1, 2]}}, ("a",), create_with={"never": "used"}) == {
            "keep": True,
            "b": {"x": [1, 2]},
        }
    # The read, then the one item with its change marked on it: a single UpdateItem, no transaction.
    assert calls == ["BatchGetItem", "UpdateItem"]
    assert feed_types() == ["customer.created", "customer.updated"]


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
    raced = []

    def racing_put(send, **request):
        # Someone else creates the item just before our create (a conditional PutItem: it must not exist).
        if not raced:
            raced.append(True)
            send(TableName=table.name(), Item=table.to_item({**KEY, "data": {"theirs": 1}}))
        return send(**request)

    intercept(monkeypatch, racing_put, "put_item")
    assert update(KEY, {"ours": 2}, (), create_with={"ours": 2}) == {"theirs": 1, "ours": 2}
    assert raced == [True]
    monkeypatch.undo()
    assert feed_types() == ["customer.updated"]  # ours is an update of theirs; theirs marked nothing


@pytest.mark.parametrize("create_with, expected", [(None, outcomes.Gone()), ({"d": 1}, {"d": 1})])
def test_no_changes_write_nothing(ddb, create_with, expected):
    assert update(KEY, {}, (), create_with=create_with) == expected
    assert documents.get(KEY) is None
    assert feed_types() == []
