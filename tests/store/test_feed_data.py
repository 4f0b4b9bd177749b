"""Every feed resource is declared once with its reader (store/feed_data.py READERS): one left out fails here."""

from chalicelib.domain.feed import ChangeType, Resource
from chalicelib.store import feed_data


def test_every_resource_of_the_feed_has_a_reader():
    assert set(feed_data.READERS) == set(Resource)


def test_every_change_type_names_a_declared_resource():
    assert {change_type.resource for change_type in ChangeType} <= set(feed_data.READERS)
