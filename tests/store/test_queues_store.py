"""Queues of background work spread over partitions by a shard of the account (issue 17.6; docs/jobs.md)."""

import datetime as dt
from collections import Counter

from chalicelib.domain import event_policy
from chalicelib.store import event_attempts, events, keys, outbox_accounts, outcomes, table

T0 = dt.datetime(2025, 3, 3, 9, 0, tzinfo=dt.timezone.utc)


def delivery(delivery_id=1):
    return {"id": delivery_id}


def test_the_shard_of_an_account_is_stable_and_accounts_spread_over_every_shard():
    # Fixed values: the shard must not change between processes or releases (Python's salted hash() would).
    assert [keys.queue_shard(a) for a in ("acme", "other", "barmate")] == [5, 12, 8]
    spread = Counter(keys.queue_shard(f"account-{n}") for n in range(10_000))
    assert set(spread) == set(range(keys.QUEUE_SHARDS))
    assert max(spread.values()) < 1.2 * 10_000 / keys.QUEUE_SHARDS  # no shard much busier than its share
    assert keys.outbox_pending("acme") == f"OUTBOX#PENDING#{keys.queue_shard('acme')}"


def test_pending_events_are_written_to_their_accounts_shard_and_read_from_every_shard(engine):
    written = {}
    for n in range(40):
        account = f"account-{n}"
        item = events.new_event(account, "request-delivery", delivery(), T0 + dt.timedelta(seconds=n))
        assert item["GSI1PK"] == keys.outbox_pending(account)
        table.client().put_item(TableName=table.name(), Item=table.to_item(item))
        written[item["event_id"]] = account
    assert len({keys.queue_shard(a) for a in written.values()}) > 1
    due = events.due(T0 + dt.timedelta(minutes=1), 1000)
    assert [e["event_id"] for e in due] == sorted(written, key=lambda i: i[:13])  # every shard, earliest first
    assert all("PK" not in e and "GSI1PK" not in e for e in due)  # no keys leave the store


def test_events_queued_before_the_shards_are_still_taken(engine):
    """Items written by an older release carry the bare OUTBOX#PENDING: the due read reads that partition too."""
    item = events.new_event("acme", "request-delivery", delivery(), T0)
    item["GSI1PK"] = keys.OUTBOX_PENDING
    table.client().put_item(TableName=table.name(), Item=table.to_item(item))
    (due,) = events.due(T0, 10)
    assert due["event_id"] == item["event_id"]
    claimed = event_attempts.claim(due, T0 + dt.timedelta(minutes=1))
    assert claimed is not None and claimed["event_id"] == item["event_id"]


def test_a_read_takes_at_most_its_limit_from_each_shard_so_one_backlog_fills_only_its_own(engine):
    flood, quiet = (
        "acme",
        next(a for a in (f"a{n}" for n in range(100)) if keys.queue_shard(a) != keys.queue_shard("acme")),
    )
    for n in range(30):
        item = events.new_event(flood, "request-delivery", delivery(), T0)
        table.client().put_item(TableName=table.name(), Item=table.to_item(item))
    late = events.new_event(quiet, "request-delivery", delivery(), T0 + dt.timedelta(seconds=5))
    table.client().put_item(TableName=table.name(), Item=table.to_item(late))
    due = events.due(T0 + dt.timedelta(minutes=1), 10)
    assert Counter(e["account"] for e in due) == {flood: 10, quiet: 1}


def test_the_resend_window_admits_60_in_any_60_seconds_and_says_when_the_next_is_allowed(engine):
    for n in range(event_policy.RESENDS_PER_WINDOW):
        assert outbox_accounts.accept_resend("acme", T0 + dt.timedelta(seconds=n)) is None
    assert outbox_accounts.accept_resend("acme", T0 + dt.timedelta(seconds=60)) is None  # the first has left the window
    assert outbox_accounts.accept_resend("acme", T0 + dt.timedelta(seconds=60.5)) == outcomes.Throttled(
        T0 + dt.timedelta(seconds=61)
    )
    assert outbox_accounts.accept_resend("other", T0 + dt.timedelta(seconds=60.5)) is None
