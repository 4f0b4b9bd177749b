"""Reading marks back from the table's stream (store/feed_marks.changes_of, deleted_change) and a batch's marked
changes per account (service/feed_numbering.marked, from Chalice's DynamoDBRecords as Lambda hands them over)."""

import datetime as dt

import pytest
from chalice.app import DynamoDBEvent

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.localdev.stream import _as_lambda_record
from chalicelib.service import feed_numbering as numbering
from chalicelib.store import feed_marks, keys, table
from chalicelib.store.feed_numbering import Marked
from tests.conftest import clock_at

AT = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
CREATED = {"type": "category.created", "resource": "category", "id": "drinks", "at": "2026-05-04T09:29:00.000Z"}
UPDATED = {**CREATED, "type": "category.updated", "at": "2026-05-04T09:29:30.000Z"}


def image(key: dict, unit: str | None = None, changes=(CREATED,), account: str = "acme", **fields) -> dict:
    """An item as a stream record's image shows it (DynamoDB JSON), marked by `unit` unless None."""
    item = {**key, **fields}
    if unit is not None:
        item[feed_marks.MARK] = {"unit": unit, "account": account, "changes": list(changes)}
    return table.to_item(item)


DRINKS = keys.category_key("acme", "drinks")


def test_an_insert_or_modify_with_a_new_mark_is_its_changes_in_order():
    shown = feed_marks.changes_of("INSERT", image(DRINKS, "u1"), None, AT)
    assert shown == ("acme", [CREATED])
    old, new = image(DRINKS, "u1"), image(DRINKS, "u2", changes=[UPDATED, CREATED])
    assert feed_marks.changes_of("MODIFY", new, old, AT) == ("acme", [UPDATED, CREATED])
    assert feed_marks.changes_of("MODIFY", image(DRINKS, "u1", account="other"), image(DRINKS), AT) == (
        "other",
        [CREATED],
    )


def test_a_write_that_leaves_the_mark_as_it_was_or_no_mark_is_no_change():
    kept = feed_marks.changes_of("MODIFY", image(DRINKS, "u1", name="New"), image(DRINKS, "u1", name="Old"), AT)
    assert kept is None  # a housekeeping write (a claim, a counter) on a marked item
    assert feed_marks.changes_of("MODIFY", image(DRINKS, name="New"), image(DRINKS, name="Old"), AT) is None
    assert feed_marks.changes_of("INSERT", image(DRINKS, name="New"), None, AT) is None
    assert feed_marks.changes_of("MODIFY", image(DRINKS), image(DRINKS, "u1"), AT) is None


@pytest.mark.parametrize(
    "key, change",
    [
        (keys.product_key("acme", "cola"), Change(ChangeType.PRODUCT_DELETED, "cola")),
        (keys.category_key("acme", "drinks"), Change(ChangeType.CATEGORY_DELETED, "drinks")),
        (
            keys.customer_pricing_key("acme", "cola", "c1"),
            Change(ChangeType.CUSTOMER_PRICING_DELETED, "cola", customer_id="c1"),
        ),
        (
            keys.standing_order_key("acme", "c1", "weekly"),
            Change(ChangeType.STANDING_ORDER_DELETED, "weekly", customer_id="c1"),
        ),
    ],
    ids=["product", "category", "customer-pricing", "standing-order"],
)
def test_the_remove_of_a_deleted_resources_item_is_its_deletion_named_by_the_key(key, change):
    assert feed_marks.deleted_change(key) == ("acme", change)
    said = {
        "type": str(change.type),
        "resource": str(change.resource),
        "id": change.id,
        "at": "2026-05-04T09:30:00.000Z",
    }
    if change.customer_id:
        said["customer_id"] = change.customer_id
    # Marked or not before, whatever else it held: the key alone says it, at the time given.
    assert feed_marks.changes_of("REMOVE", None, image(key, "u1", name="x"), AT) == ("acme", [said])
    assert feed_marks.changes_of("REMOVE", None, image(key), AT) == ("acme", [said])


@pytest.mark.parametrize(
    "key",
    [
        keys.token_key("f00d"),
        keys.token_ref_key("acme", "t1"),
        keys.event_key("acme", "2026-05-04T09:30:00.000Z#e1"),
        keys.deposit_type_key("acme", "bottle"),
        keys.customer_key("acme", "c1"),
        keys.feed_entry_key("acme", 7),
        keys.feed_head_key("acme"),
        keys.idempotency_key("acme", "orders", "k1"),
        keys.standing_failed_key("acme", "c1", "weekly", "2031-01-02"),
        keys.price_groups_key("acme", "cola"),  # removed with its product: the product's deletion says it
    ],
    ids=[
        "token",
        "token-ref",
        "event",
        "deposit-refs",
        "customer",
        "entry",
        "head",
        "idempotency",
        "failed-date",
        "price-groups",
    ],
)
def test_the_remove_of_any_other_item_is_no_change(key):
    assert feed_marks.deleted_change(key) is None
    assert feed_marks.changes_of("REMOVE", None, image(key, "u1"), AT) is None


def record(sequence: str, name: str, created: dt.datetime, new: dict | None = None, old: dict | None = None):
    """A stream record as Lambda hands it over (creation to the second, as the stream gives it)."""
    dynamodb = {
        "ApproximateCreationDateTime": created,
        "Keys": table.to_item({"PK": (new or old)["PK"]["S"], "SK": (new or old)["SK"]["S"]}),
        "SequenceNumber": sequence,
        "SizeBytes": 100,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new is not None:
        dynamodb["NewImage"] = new
    if old is not None:
        dynamodb["OldImage"] = old
    raw = {"eventID": sequence, "eventName": name, "eventSource": "aws:dynamodb", "awsRegion": "us-east-1"}
    return _as_lambda_record({**raw, "dynamodb": dynamodb}, "arn:aws:dynamodb:us-east-1:1:table/t/stream/s")


def test_a_batch_is_its_marked_changes_per_account_in_the_streams_order(monkeypatch):
    clock_at(monkeypatch, AT)
    created = AT - dt.timedelta(seconds=5)
    cola = keys.product_key("acme", "cola")
    records = [
        record("101", "INSERT", created, image(DRINKS, "u1")),
        record("102", "MODIFY", created, image(keys.category_key("other", "x"), "u2", account="other")),
        record("103", "MODIFY", created, image(DRINKS, "u1", name="claimed"), image(DRINKS, "u1")),  # no change
        record("104", "MODIFY", created, image(DRINKS, "u3", changes=[UPDATED]), image(DRINKS, "u1")),
        record("105", "REMOVE", created, old=image(cola)),
        record("106", "INSERT", created, image(keys.token_key("f00d"))),  # not a feed item
    ]
    found = numbering.marked(DynamoDBEvent({"Records": records}, None))
    epoch = int(created.timestamp())
    # A deletion seconds old says when the numbering saw it: the stream's time is only to the second (or minute).
    deleted = {"type": "product.deleted", "resource": "product", "id": "cola", "at": "2026-05-04T09:30:00.000Z"}
    assert found == {
        "acme": [Marked("101", epoch, [CREATED]), Marked("104", epoch, [UPDATED]), Marked("105", epoch, [deleted])],
        "other": [Marked("102", epoch, [CREATED])],
    }


def test_a_deletion_handed_over_late_says_when_its_record_was_made(monkeypatch):
    created = AT - numbering.RECORD_TIME_TRUSTED_AFTER
    clock_at(monkeypatch, AT)
    late = record("201", "REMOVE", created, old=image(keys.product_key("acme", "cola")))
    just = record("202", "REMOVE", created + dt.timedelta(seconds=1), old=image(keys.product_key("acme", "tea")))
    found = numbering.marked(DynamoDBEvent({"Records": [late, just]}, None))
    assert [(marked.changes[0]["id"], marked.changes[0]["at"]) for marked in found["acme"]] == [
        ("cola", "2026-05-04T09:25:00.000Z"),  # RECORD_TIME_TRUSTED_AFTER (5 minutes) before
        ("tea", "2026-05-04T09:30:00.000Z"),
    ]
