"""One row per feed resource (store/feed_resources.py): every resource and change type has one, and each row's parts
agree: the item a change is marked on is what its entry's data is read from, and the REMOVE of that item is the
resource's deletion exactly when the resource is deleted by removing it. A resource declared incompletely fails
here, not at a write or a read."""

import datetime as dt

import pytest

from chalicelib.domain.feed import Change, ChangeType, Resource
from chalicelib.store import feed_marks, keys
from chalicelib.store.feed_resources import FEED_RESOURCES, deletion_of, item_of

NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
# Resources whose data is read from another item first (whether the resource exists), the marked one beside.
MARKED_BESIDE = {
    Resource.PRICE_GROUPS: "the product",
    Resource.CUSTOMER_DEPOSITS: "the customer",
    Resource.CLAIM: "the delivery",
}


def test_every_resource_of_the_feed_has_a_row():
    assert set(FEED_RESOURCES) == set(Resource)
    assert {change_type.resource for change_type in ChangeType} <= set(FEED_RESOURCES)


@pytest.mark.parametrize("change_type", list(ChangeType), ids=str)
def test_a_change_is_marked_on_an_item_of_the_account_that_its_entry_reads(change_type):
    date = "2031-01-02" if change_type == ChangeType.STANDING_ORDER_FAILED else None
    resource_id = "7:1" if change_type.resource == Resource.CLAIM else "7"  # a claim's id: "<delivery>:<number>"
    change = Change(change_type, resource_id, status="REQUESTED", customer_id="c1", integration="PENDING", date=date)
    item = item_of("acme", change)
    assert item["PK"].startswith(keys.account_pk("acme"))
    entry = {**feed_marks.said(change, NOW), "sequence": 1}
    wanted = FEED_RESOURCES[change.resource].reads("acme", entry)
    assert item in wanted
    assert wanted[0] == item or change.resource in MARKED_BESIDE


@pytest.mark.parametrize("change_type", [t for t in ChangeType if t.value.endswith(".deleted")], ids=str)
def test_a_deletion_is_the_remove_of_the_item_its_resources_other_changes_are_marked_on(change_type):
    whose = "c1" if change_type.resource in (Resource.CUSTOMER_PRICING, Resource.STANDING_ORDER) else None
    change = Change(change_type, "7", customer_id=whose)
    if change_type.resource == Resource.DEPOSIT:  # every type in one item: its deletion is an update of it
        assert FEED_RESOURCES[Resource.DEPOSIT].deleted is None
        assert deletion_of(item_of("acme", change)) is None
        return
    updated = Change(ChangeType(change_type.value.replace(".deleted", ".updated")), "7", customer_id=whose)
    assert item_of("acme", change) == item_of("acme", updated)
    assert deletion_of(item_of("acme", change)) == ("acme", change)


def test_removing_an_item_of_a_resource_never_deleted_by_removal_is_no_deletion():
    for resource, row in FEED_RESOURCES.items():
        if row.deleted is None and resource != Resource.DEPOSIT:
            change_type = next(t for t in ChangeType if t.resource == resource)
            resource_id = "7:1" if resource == Resource.CLAIM else "7"
            key = item_of("acme", Change(change_type, resource_id, customer_id="c1", date=None))
            assert deletion_of(key) is None, resource
    assert deletion_of(keys.product_key("acme", "x") | {"SK": "PRODUCTX"}) is None
