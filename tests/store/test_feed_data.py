"""Every feed resource is declared once with its reader (store/feed_data.py READERS): one left out fails here."""

from chalicelib.domain.feed import ChangeType, Resource
from chalicelib.store import feed_data


def test_every_resource_of_the_feed_has_a_reader():
    assert set(feed_data.READERS) == set(Resource)


def test_every_change_type_names_a_declared_resource():
    assert {change_type.resource for change_type in ChangeType} <= set(feed_data.READERS)


def test_every_change_type_has_a_feed_item_that_its_reader_reads():
    """A change of every type, with what its type carries, is marked on one item of the account's (or, deleted,
    said by that item's REMOVE), and its entry's reader reads that very item: first, or beside the items it
    answers from. A resource declared incompletely fails here, not at read time."""
    import datetime as dt

    from chalicelib.domain.feed import Change
    from chalicelib.store import feed_marks, keys

    now = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
    for change_type in ChangeType:
        date = "2031-01-02" if change_type == ChangeType.STANDING_ORDER_FAILED else None
        resource_id = "7:1" if change_type.resource == Resource.CLAIM else "7"  # a claim's id: "<delivery>:<number>"
        change = Change(
            change_type, resource_id, status="REQUESTED", customer_id="c1", integration="PENDING", date=date
        )
        item = feed_marks.feed_item_key("acme", change)
        assert item["PK"].startswith(keys.account_pk("acme")), change_type
        entry = {**feed_marks.said(change, now), "sequence": 1}
        wanted = feed_data.READERS[change.resource].keys("acme", entry)
        assert item in wanted, change_type
        assert wanted[0] == item or change.resource in MARKED_BESIDE, change_type
        if change_type.value.endswith(".deleted") and change.resource != Resource.DEPOSIT:
            # Its REMOVE record names the change by the key alone (a deposit type is an attribute of one item).
            whose = (
                change.customer_id if change.resource in (Resource.CUSTOMER_PRICING, Resource.STANDING_ORDER) else None
            )
            assert feed_marks.deleted_change(item) == ("acme", Change(change_type, "7", customer_id=whose)), change_type


# Resources whose reader answers from another item first (whether the resource exists), the marked one beside.
MARKED_BESIDE = {
    Resource.PRICE_GROUPS: "the product",
    Resource.CUSTOMER_DEPOSITS: "the customer",
    Resource.CLAIM: "the delivery",
}
