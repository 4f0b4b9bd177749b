"""What reading the feed costs (issue 34: a read with nothing new ≤ 2 capacity units): a read numbers nothing (the
table's stream does), so it is the head's GetItem and, when there is something to read, one Query of entries."""

import pytest

from chalicelib.service import catalogue, changes
from chalicelib.store import table

from .crashing import crashing
from .test_feed_store import ACCOUNT, number_all

pytestmark = pytest.mark.pending_feed


@pytest.fixture
def written(engine):
    for n in range(30):
        catalogue.put_category(ACCOUNT, f"c{n % 10}", {"name": f"C{n}"})
    return number_all()


def test_a_caught_up_read_is_one_get_item_and_a_read_of_new_entries_adds_one_query(written, monkeypatch):
    client = crashing(monkeypatch, None)
    assert changes.read_changes(ACCOUNT, written, 100, False)["changes"] == []
    assert changes.read_changes(ACCOUNT, None, 100, False)["max_sequence"] == written == 30  # after=latest
    assert client.calls == ["get_item", "get_item"]
    client.calls.clear()
    assert [e["sequence"] for e in changes.read_changes(ACCOUNT, written - 2, 100, False)["changes"]] == [29, 30]
    assert client.calls == ["get_item", "query"]


class Metered:
    """The real client, asking DynamoDB what each read consumed (indexes included) and adding it up."""

    def __init__(self, real):
        self.real, self.units = real, 0.0

    def __getattr__(self, name):
        attribute = getattr(self.real, name)
        if name not in ("get_item", "query", "batch_get_item"):
            return attribute

        def call(**request):
            answer = attribute(**request, ReturnConsumedCapacity="TOTAL")
            consumed = answer.get("ConsumedCapacity", [])
            self.units += sum(c["CapacityUnits"] for c in (consumed if isinstance(consumed, list) else [consumed]))
            return answer

        return call


@pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)
def test_a_read_with_nothing_new_costs_one_unit_and_one_with_new_entries_two(written, monkeypatch):
    metered = Metered(table.client())
    monkeypatch.setattr(table, "client", lambda: metered)
    changes.read_changes(ACCOUNT, written, 100, False)
    assert metered.units == 1.0  # the head, read consistently (well under 4 KB)
    metered.units = 0.0
    changes.read_changes(ACCOUNT, written - 2, 100, False)
    assert metered.units == 2.0


def test_a_numbering_seen_in_part_by_a_read_ends_the_page_before_it_never_410(written, monkeypatch):
    """A Query may see part of the transaction that moved the head last (DynamoDB's read-committed Query): the page
    ends at the first entry it does not see yet, max_sequence with it, and the next read gets the rest. Only an
    entry missing at or before where that move began is gone for good (410)."""
    from chalicelib.domain.errors import FeedExpired
    from chalicelib.store import feed, keys

    from .test_feed_store import number_all as numbered

    catalogue.put_category(ACCOUNT, "late", {"name": "Late"})
    numbered()
    head = feed.read_head(ACCOUNT)
    assert (head.sequence, head.previous) == (31, 30)
    real = table.client()

    class InFlight:  # entry 31, of the head's last move, not yet seen by the Query
        def __getattr__(self, name):
            attribute = getattr(real, name)
            if name != "query":
                return attribute

            def query(**request):
                answer = attribute(**request)
                last = keys.padded_id(31)
                return {**answer, "Items": [item for item in answer["Items"] if item["SK"]["S"] != last]}

            return query

    monkeypatch.setattr(table, "client", lambda: InFlight())
    page = changes.read_changes(ACCOUNT, 28, 100, False)
    assert ([e["sequence"] for e in page["changes"]], page["last_sequence"], page["max_sequence"]) == ([29, 30], 30, 30)
    assert changes.read_changes(ACCOUNT, 30, 100, False) == {"changes": [], "last_sequence": 30, "max_sequence": 30}
    monkeypatch.setattr(table, "client", lambda: real)
    assert [e["sequence"] for e in changes.read_changes(ACCOUNT, 30, 100, False)["changes"]] == [31]
    table.client().delete_item(TableName=table.name(), Key=table.to_item(keys.feed_entry_key(ACCOUNT, 28)))
    with pytest.raises(FeedExpired):  # at or before `previous`: gone for good
        changes.read_changes(ACCOUNT, 27, 100, False)


def test_entries_of_the_heads_last_move_removed_long_after_it_are_410_never_a_caught_up_page(fake_clock, written):
    """An audit found a reader behind a quiet account's last move, whose entries the TTL had removed, answered 200
    with max_sequence lowered to its own position: caught up, it would never read them. The head keeps when it
    moved; a minute on, an entry of that move that is not there is gone for good."""
    from chalicelib.domain.errors import FeedExpired
    from chalicelib.domain.timestamps import iso
    from chalicelib.store import feed, keys

    catalogue.put_category(ACCOUNT, "late", {"name": "Late"})
    number_all()
    head = feed.read_head(ACCOUNT)
    assert (head.sequence, head.previous, head.moved_at) == (31, 30, iso(fake_clock.now()))
    table.client().delete_item(TableName=table.name(), Key=table.to_item(keys.feed_entry_key(ACCOUNT, 31)))
    fake_clock.advance(60)  # a move is seen whole well within this: until then, "still being written" is possible
    assert changes.read_changes(ACCOUNT, 30, 100, False) == {"changes": [], "last_sequence": 30, "max_sequence": 30}
    fake_clock.advance(1)
    with pytest.raises(FeedExpired):
        changes.read_changes(ACCOUNT, 30, 100, False)
    assert changes.read_changes(ACCOUNT, 31, 100, False)["max_sequence"] == 31  # a reader past it is caught up
