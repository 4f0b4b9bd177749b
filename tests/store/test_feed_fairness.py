"""Issue 34: numbering is fair. A busy account never keeps quiet accounts of its shard from being numbered (and
so from their webhook events), and an order's change is not held up behind the numbering of its own account's
import of thousands of rows. On moto and DynamoDB Local, with the fake clock."""

import datetime as dt

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.service import catalogue, clock, webhooks
from chalicelib.service import feed_numbering as numbering
from chalicelib.store import event_lists, feed, feed_numbering, keys, table
from tests.transactions import intercept, record_changes

pytestmark = pytest.mark.pending_feed

BUSY = "busy"


def items_per_query(monkeypatch) -> list[int]:
    """From now on, how many items each Query answers, in order."""
    counts = []

    def query(send, **request):
        answer = send(**request)
        counts.append(len(answer.get("Items", [])))
        return answer

    intercept(monkeypatch, query, operation="query")
    return counts


@pytest.fixture
def fake_clock(engine):
    fake = clock.FakeClock(dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc))
    previous = clock.use(fake)
    yield fake
    clock.use(previous)


def accounts_in_shard(shard: int, count: int, prefix: str) -> list[str]:
    found, n = [], 0
    while len(found) < count:
        name = f"{prefix}{n}"
        if keys.queue_shard(name) == shard:
            found.append(name)
        n += 1
    return found


def select_created(account: str) -> None:
    webhooks.put_settings(account, {"url": "https://erp.example.com/hook", "events": ["category.created"]})
    feed_numbering.number(account, clock.now())


def event_types(account: str) -> list[str]:
    return [event["type"] for event in event_lists.list_page(account, 100, None).items]


def test_a_busy_account_does_not_keep_the_quiet_accounts_of_its_shard_from_their_events(fake_clock):
    """The issue's measurement: the busy account created 150 categories and renames one every 0.1 s; 40 quiet
    accounts of its shard (and some of other shards) each create one category. Every sweep numbers every quiet
    account, whatever the busy one keeps pending."""
    quiet = accounts_in_shard(keys.queue_shard(BUSY), 40, "quiet-") + [f"elsewhere-{n}" for n in range(5)]
    for account in [BUSY] + quiet:
        select_created(account)
    for n in range(150):
        catalogue.put_category(BUSY, f"c{n}", {"name": f"C{n}"})
    fake_clock.advance(numbering.SWEEP_SETTLE + dt.timedelta(milliseconds=1))
    numbering.sweep(clock.after(30))  # the busy account's 150 entries are emptied, kept while it is busy
    for account in quiet:
        catalogue.put_category(account, "mine", {"name": "Mine"})
    for n in range(6):
        catalogue.put_category(BUSY, "c0", {"name": f"Renamed {n}"})
        fake_clock.advance(dt.timedelta(milliseconds=100))
    numbering.sweep(clock.after(30))
    late = [account for account in quiet if event_types(account) != ["category.created"]]
    assert late == []
    assert [feed.read_head(account).sequence for account in quiet] == [2] * len(quiet)


def test_the_sweep_reads_one_index_entry_per_account_however_many_one_account_has_pending(fake_clock, monkeypatch):
    quiet = accounts_in_shard(keys.queue_shard(BUSY), 3, "quiet-")
    for n in range(120):
        catalogue.put_category(BUSY, f"c{n}", {"name": f"C{n}"})
    for account in quiet:
        catalogue.put_category(account, "mine", {"name": "Mine"})
    read = items_per_query(monkeypatch)
    from chalicelib.store import feed_queue

    assert sorted(feed_queue.accounts_pending(100)) == sorted([BUSY] + quiet)
    assert sum(read) == 4  # one index entry per account
    assert len(read) <= len(keys.queue_partitions(keys.FEED_PENDING)) + 4


def test_a_quiet_resources_entry_leaves_the_pending_index_when_numbered(fake_clock):
    catalogue.put_category("acme", "once", {"name": "Once"})
    fake_clock.advance(feed_numbering.QUIET + dt.timedelta(milliseconds=1))
    feed_numbering.number("acme", clock.now())
    state = feed_numbering.read_state("acme")
    assert (state.pending, state.emptied) == ([], [])
    from chalicelib.store import feed_queue

    assert "acme" not in feed_queue.accounts_pending(100)


IMPORT_ROWS = 3000


def pend_import(account: str, rows: int) -> None:
    """What an import's chunks leave pending: one product.created per row (written 99 to a transaction)."""
    now = clock.now()
    for start in range(0, rows, 99):
        changes = [Change(ChangeType("product.created"), f"p{n}") for n in range(start, min(rows, start + 99))]
        record_changes(account, changes, now)


def test_an_order_is_numbered_without_rereading_the_imports_backlog_for_every_transaction(fake_clock, monkeypatch):
    """An account's import of thousands of rows waits to be numbered; an order comes in behind it. Numbering takes
    the backlog in transactions of ~49 from one read of up to 1000 pending entries (before: one read of 1000 per
    transaction, so an order waited ~60 reads of 1000 entries behind a 3000-row import)."""
    pend_import("acme", IMPORT_ROWS)
    record_changes("acme", [Change(ChangeType("delivery.requested"), "1", "PENDING")], clock.now())
    items_read = items_per_query(monkeypatch)
    fake_clock.advance(numbering.SWEEP_SETTLE + dt.timedelta(milliseconds=1))
    assert numbering.number_accounts(["acme"], clock.after(30), numbering.SWEEP_SETTLE) == {
        "numbered": IMPORT_ROWS + 1,
        "left": 0,
    }
    assert sum(items_read) <= 2 * (IMPORT_ROWS + 1)
    assert feed.read_head("acme").sequence == IMPORT_ROWS + 1


def test_an_accounts_import_backlog_is_numbered_in_turns_with_other_accounts(fake_clock, monkeypatch):
    """A sweep's accounts take turns: one account's 1000 pending rows use at most a turn before another account's
    one change is numbered, even when the sweep's time runs out before the backlog is done."""
    pend_import("acme", 1000)
    catalogue.put_category("other", "mine", {"name": "Mine"})
    real = table.client()

    class Slow:  # each transaction takes 100 ms of the clock
        def __getattr__(self, name):
            if name != "transact_write_items":
                return getattr(real, name)

            def transact(**request):
                fake_clock.advance(dt.timedelta(milliseconds=100))
                return real.transact_write_items(**request)

            return transact

    monkeypatch.setattr(table, "client", lambda: Slow())
    outcome = numbering.number_accounts(["acme", "other"], clock.after(1.5))
    monkeypatch.setattr(table, "client", lambda: real)
    assert feed.read_head("other").sequence == 1
    assert outcome["left"] == 1 and 0 < feed.read_head("acme").sequence < 1000


def test_events_list_newest_first_in_sequence_order_within_a_numbering_and_across_sequencers_clocks(fake_clock):
    """GET /account/events lists newest first: two events of one numbering (made in the same millisecond) and
    events of a later numbering whose sequencer's clock is behind still follow the sequence."""
    select_created("acme")
    for n in range(30):
        catalogue.put_category("acme", f"c{n}", {"name": f"C{n}"})
    feed_numbering.number("acme", clock.now())
    for n in range(30, 40):
        catalogue.put_category("acme", f"c{n}", {"name": f"C{n}"})
    feed_numbering.number("acme", clock.now() - dt.timedelta(seconds=2))  # another sequencer, its clock behind
    listed = [int(event["sequence"]) for event in event_lists.list_page("acme", 100, None).items]
    assert listed == sorted(listed, reverse=True) and len(listed) == 40


def test_a_change_type_this_release_does_not_know_is_numbered_as_it_is_and_blocks_nothing(fake_clock):
    """A newer release (during a deploy) commits a type this code does not know: numbering goes on, the entry
    says the type as written, and the account's other changes and events are made."""
    select_created("acme")
    before = feed.read_head("acme").sequence
    catalogue.put_category("acme", "first", {"name": "First"})
    table.client().update_item(
        TableName=table.name(),
        Key=table.to_item(keys.feed_pending_key("acme", "widget#w1")),
        UpdateExpression="SET changes = :new, GSI3PK = :queue, GSI3SK = :key",
        ExpressionAttributeValues=table.values(
            new=[{"type": "widget.created", "resource": "widget", "id": "w1", "at": "2026-05-04T09:29:59.000Z"}],
            **{
                "queue": keys.feed_pending_gsi("acme", "widget#w1")["GSI3PK"],
                "key": keys.feed_pending_gsi("acme", "widget#w1")["GSI3SK"],
            },
        ),
    )
    catalogue.put_category("acme", "second", {"name": "Second"})
    assert feed_numbering.number("acme", clock.now()).done
    read = feed.read("acme", before, 10, clock.now())
    assert sorted((e["type"], e["id"]) for e in read.entries) == [
        ("category.created", "first"),
        ("category.created", "second"),
        ("widget.created", "w1"),
    ]
    assert event_types("acme") == ["category.created", "category.created"]
