"""Reading marks back from the table's stream (store/feed_marks.record_of) and a batch's marked records in the
stream's order (service/feed_forwarding.records_marked, from Chalice's DynamoDBRecords as Lambda hands them over):
what each record says, and its id, the same however often and from wherever it is handed over."""

import datetime as dt

import pytest
from chalice.app import DynamoDBEvent

from chalicelib.localdev.stream import _as_lambda_record
from chalicelib.service import feed_forwarding as forwarding
from chalicelib.store import feed_marks, keys, table
from chalicelib.store.feed_marks import Marked

AT = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
EPOCH = int(AT.timestamp())
CREATED = {"type": "category.created", "resource": "category", "id": "drinks", "at": "2026-05-04T09:29:00.000Z"}
UPDATED = {**CREATED, "type": "category.updated", "at": "2026-05-04T09:29:30.000Z"}


def image(key: dict, unit: str | None = None, changes=(CREATED,), account: str = "acme", **fields) -> dict:
    """An item as a stream record's image shows it (DynamoDB JSON), marked by `unit` unless None."""
    item = {**key, **fields}
    if unit is not None:
        item[feed_marks.MARK] = {"unit": unit, "account": account, "changes": list(changes)}
    return table.to_item(item)


def record_of(event_name: str, key: dict, new: dict | None, old: dict | None, at: dt.datetime = AT, event="e1"):
    return feed_marks.record_of(event_name, table.to_item(key), new, old, at, event)


DRINKS = keys.category_key("acme", "drinks")


def test_an_insert_or_modify_with_a_new_mark_is_its_changes_in_order_with_an_id_of_its_unit_and_item():
    inserted = record_of("INSERT", DRINKS, image(DRINKS, "u1"), None)
    assert (inserted.account, inserted.changes, inserted.unit, inserted.created) == ("acme", [CREATED], "u1", EPOCH)
    old, new = image(DRINKS, "u1"), image(DRINKS, "u2", changes=[UPDATED, CREATED])
    modified = record_of("MODIFY", DRINKS, new, old)
    assert (modified.changes, modified.unit) == ([UPDATED, CREATED], "u2")
    other = record_of("MODIFY", DRINKS, image(DRINKS, "u1", account="other"), image(DRINKS))
    assert other.account == "other"
    # One unit marks several items: each record its own id; the same record handed over again, the same id.
    beer = keys.category_key("acme", "beer")
    assert record_of("INSERT", beer, image(beer, "u1"), None).id != inserted.id
    assert record_of("INSERT", DRINKS, image(DRINKS, "u1"), None, AT + dt.timedelta(hours=20), "e9").id == inserted.id
    assert inserted.id.startswith("u1.") and len(inserted.id) == len("u1.") + 12


def test_a_write_that_leaves_the_mark_as_it_was_or_no_mark_is_no_change():
    kept = record_of("MODIFY", DRINKS, image(DRINKS, "u1", name="New"), image(DRINKS, "u1", name="Old"))
    assert kept is None  # a housekeeping write (a claim, a counter) on a marked item
    assert record_of("MODIFY", DRINKS, image(DRINKS, name="New"), image(DRINKS, name="Old")) is None
    assert record_of("INSERT", DRINKS, image(DRINKS, name="New"), None) is None
    assert record_of("MODIFY", DRINKS, image(DRINKS), image(DRINKS, "u1")) is None


@pytest.mark.parametrize(
    "mark, problem",
    [
        ("not a map", "a mark without its unit or account"),
        ({"unit": "u1", "changes": [CREATED]}, "a mark without its unit or account"),
        ({"unit": "u1", "account": "acme", "changes": []}, "a mark without changes, or with more than one write makes"),
        ({"unit": "u1", "account": "acme", "changes": [CREATED] * 11}, "a mark without changes"),
        ({"unit": "u1", "account": "acme", "changes": [{"type": "x", "id": 1, "at": "t"}]}, "without its type"),
        ({"unit": "u1", "account": "acme", "changes": [{**CREATED, "at": "yesterday"}]}, "is not a time"),
    ],
    ids=["not-a-map", "no-account", "no-changes", "too-many", "id-not-text", "at-not-a-time"],
)
def test_a_mark_that_cannot_be_read_is_an_unreadable_record_of_the_items_account_never_dropped(mark, problem):
    new = table.to_item({**DRINKS, feed_marks.MARK: mark})
    found = record_of("MODIFY", DRINKS, new, image(DRINKS, "u0"), event="event-7")
    assert (found.id, found.account, found.changes, found.unit) == ("mark.event-7", "acme", [], None)
    assert problem in found.unreadable and found.unreadable.endswith("A#acme CATEGORY#drinks")
    outside = keys.token_key("f00d")  # no account to number it in: logged, not numbered
    assert record_of("INSERT", outside, table.to_item({**outside, feed_marks.MARK: mark}), None) is None


@pytest.mark.parametrize(
    "key, change",
    [
        (keys.product_key("acme", "cola"), {"type": "product.deleted", "resource": "product", "id": "cola"}),
        (keys.category_key("acme", "drinks"), {"type": "category.deleted", "resource": "category", "id": "drinks"}),
        (
            keys.customer_pricing_key("acme", "cola", "c1"),
            {"type": "customer-pricing.deleted", "resource": "customer-pricing", "id": "cola", "customer_id": "c1"},
        ),
        (
            keys.standing_order_key("acme", "c1", "weekly"),
            {"type": "standing-order.deleted", "resource": "standing-order", "id": "weekly", "customer_id": "c1"},
        ),
    ],
    ids=["product", "category", "customer-pricing", "standing-order"],
)
def test_the_remove_of_a_deleted_resources_item_is_its_deletion_after_its_last_change(key, change):
    before = AT - dt.timedelta(minutes=10)
    last = [{**CREATED, "at": "2026-05-04T09:29:50.000Z"}]
    removed = record_of(
        "REMOVE", key, None, image(key, "u1", changes=last, name="x"), at=before + dt.timedelta(minutes=10)
    )
    assert (removed.account, removed.changes) == ("acme", [{**change, "at": "2026-05-04T09:30:00.000Z"}])
    assert removed.id.startswith("u1.") and removed.id.endswith(".gone") and removed.unit is None
    # The stream's clock to the minute (DynamoDB Local) or behind: never before the item's last change.
    early = record_of("REMOVE", key, None, image(key, "u1", changes=last), at=AT - dt.timedelta(seconds=40))
    assert early.changes[0]["at"] == "2026-05-04T09:29:50.000Z" and early.id == removed.id
    unmarked = record_of("REMOVE", key, None, image(key), event="ev-3")  # written before marks existed
    assert (unmarked.id, unmarked.changes[0]["at"]) == ("gone.ev-3", "2026-05-04T09:30:00.000Z")


def test_an_expiry_or_a_retirement_is_no_change():
    """An item that carries the table's TTL attribute was retired (set to expire), not deleted: its REMOVE, by
    the TTL or by a purge, is no change."""
    pricing = keys.customer_pricing_key("acme", "cola", "c1")
    assert record_of("REMOVE", pricing, None, image(pricing, "u1", expires_at=EPOCH)) is None


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
        keys.feed_record_key("acme", "u1.abc"),
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
        "record",
        "idempotency",
        "failed-date",
        "price-groups",
    ],
)
def test_the_remove_of_any_other_item_is_no_change(key):
    assert record_of("REMOVE", key, None, image(key, "u1")) is None


def stream_record(sequence: str, name: str, created: dt.datetime, new: dict | None = None, old: dict | None = None):
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
    raw = {"eventID": f"ev{sequence}", "eventName": name, "eventSource": "aws:dynamodb", "awsRegion": "us-east-1"}
    return _as_lambda_record({**raw, "dynamodb": dynamodb}, "arn:aws:dynamodb:us-east-1:1:table/t/stream/s")


def test_a_batch_is_its_marked_records_in_the_streams_order_with_their_sequence_numbers():
    created = AT - dt.timedelta(seconds=5)
    cola = keys.product_key("acme", "cola")
    records = [
        stream_record("101", "INSERT", created, image(DRINKS, "u1")),
        stream_record("102", "MODIFY", created, image(keys.category_key("other", "x"), "u2", account="other")),
        stream_record("103", "MODIFY", created, image(DRINKS, "u1", name="claimed"), image(DRINKS, "u1")),  # none
        stream_record("104", "MODIFY", created, image(DRINKS, "u3", changes=[UPDATED]), image(DRINKS, "u1")),
        stream_record("105", "REMOVE", created, old=image(cola)),
        stream_record("106", "INSERT", created, image(keys.token_key("f00d"))),  # not a feed item
    ]
    found = forwarding.records_marked(DynamoDBEvent({"Records": records}, None))
    epoch = int(created.timestamp())
    deleted = {"type": "product.deleted", "resource": "product", "id": "cola", "at": "2026-05-04T09:29:55.000Z"}
    drinks, other = feed_marks._item_id(DRINKS), feed_marks._item_id(keys.category_key("other", "x"))
    assert found == [
        ("101", Marked(f"u1.{drinks}", "acme", epoch, [CREATED], unit="u1", seq="101")),
        ("102", Marked(f"u2.{other}", "other", epoch, [CREATED], unit="u2", seq="102")),
        ("104", Marked(f"u3.{drinks}", "acme", epoch, [UPDATED], unit="u3", seq="104")),
        ("105", Marked("gone.ev105", "acme", epoch, [deleted], seq="105")),
    ]
