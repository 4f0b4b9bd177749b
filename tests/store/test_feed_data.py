"""Every feed resource is declared once with its reader (store/feed_data.py READERS): one left out fails here."""

from chalicelib.domain.feed import ChangeType, Resource
from chalicelib.store import feed_data


def test_every_resource_of_the_feed_has_a_reader():
    assert set(feed_data.READERS) == set(Resource)


def test_every_change_type_names_a_declared_resource():
    assert {change_type.resource for change_type in ChangeType} <= set(feed_data.READERS)


def test_every_change_type_gets_a_pending_entry_and_a_reader_for_its_entries():
    """A change of every type, with what its type carries, makes one pending-entry update (store/feed.py) and its
    entry names the items its reader reads, in the account's own partitions: a resource declared incompletely
    fails here, not at read time."""
    import datetime as dt

    from chalicelib.domain.feed import Change
    from chalicelib.store import feed, keys

    now = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
    for change_type in ChangeType:
        change = Change(change_type, "7", status="REQUESTED", customer_id="c1", integration="PENDING")
        (update,) = feed.pending_updates("acme", [change], now)
        assert update["Update"]["Key"]["SK"]["S"] == keys.feed_pending_key("acme", feed.resource_key(change))["SK"]
        entry = {**feed.pending_change(change, now), "sequence": 1}
        wanted = feed_data.READERS[change.resource].keys("acme", entry)
        assert wanted and all(key["PK"].startswith(keys.account_pk("acme")) for key in wanted), change_type
