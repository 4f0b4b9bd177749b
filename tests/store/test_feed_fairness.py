"""Issues 34 and 43: numbering is fair. The feed queue hands over one account's messages at a time, and one hand-over
may hold several accounts: an account's import backlog (a record per imported row, many messages) does not keep the
other accounts of the hand-over from being numbered (and so from their webhook events) after its first message; an
account whose numbering fails holds no other account; events list newest first in sequence order; a change type this
release does not know blocks nothing. The real stream and feed queue on moto and DynamoDB Local (tests/stream.py),
with the fake clock."""

import datetime as dt
import json
import uuid

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.service import catalogue, clock, webhooks
from chalicelib.service import feed_forwarding as forwarding
from chalicelib.service import feed_numbering as numbering
from chalicelib.store import batch, event_lists, feed, feed_marks, feed_sequencer, keys, table
from tests.stream import drain, poller
from tests.transactions import intercept, record_changes

pytestmark = pytest.mark.pending_feed

IMPORT_ROWS = 3 * forwarding.MESSAGE_RECORDS
OTHERS = [f"quiet-{n}" for n in range(5)]


@pytest.fixture
def fake_clock(engine):
    fake = clock.FakeClock(dt.datetime.now(dt.timezone.utc).replace(microsecond=0))
    previous = clock.use(fake)
    yield fake
    clock.use(previous)


def select_created(account: str) -> None:
    webhooks.put_settings(account, {"url": "https://erp.example.com/hook", "events": ["category.created"]})


def marked_item(account: str, key: dict, changes: list[Change]) -> dict:
    """An item as a committed unit of work leaves it (store/feed_marks.py): its feed mark names the changes."""
    said = [feed_marks.said(change, clock.now()) for change in changes]
    mark = {"unit": uuid.uuid4().hex[:16], "account": account, "changes": said}
    return {**key, feed_marks.MARK: mark}


def import_backlog(account: str, rows: int) -> None:
    """What an import's chunks leave in the stream: one record per product, each with its product.created."""
    items = [
        marked_item(account, keys.product_key(account, f"p{n}"), [Change(ChangeType.PRODUCT_CREATED, f"p{n}")])
        for n in range(rows)
    ]
    batch.write_items([{"PutRequest": {"Item": table.to_item(item)}} for item in items])


def numbering_commits(monkeypatch) -> list[tuple[str, int]]:
    """From now on, each numbering transaction as (account, entries it writes), in the order they commit."""
    commits: list[tuple[str, int]] = []

    def transact(send, **request):
        answer = send(**request)
        head = table.from_item(request["TransactItems"][0]["Update"]["Key"])
        account = head["PK"].removeprefix(keys.ACCOUNT_PREFIX)
        entries = [
            item
            for item in request["TransactItems"]
            if "Put" in item and item["Put"]["Item"]["PK"]["S"] == keys.feed_pk(account)
        ]
        commits.append((account, len(entries)))
        return answer

    intercept(monkeypatch, transact)
    return commits


def fed(account: str) -> list[tuple[str, str]]:
    read = feed.read(account, 0, 1000, clock.now())
    return [(entry["type"], entry["id"]) for entry in read.entries]


def test_an_import_backlog_in_a_hand_over_leaves_the_other_accounts_changes_to_their_first_turn(
    fake_clock, monkeypatch
):
    """The stream brings an account's 600 imported rows first (three messages of its group), then one change of
    each of five other accounts. Each of the others is numbered right after the import's first message, before any
    more of the import."""
    import_backlog("acme", IMPORT_ROWS)
    for account in OTHERS:
        catalogue.put_category(account, "mine", {"name": "Mine"})
    commits = numbering_commits(monkeypatch)
    drain()

    numbered_before: dict[str, int] = {}
    acme_numbered = 0
    for account, entries in commits:
        if account == "acme":
            acme_numbered += entries
        else:
            numbered_before[account] = acme_numbered
    assert numbered_before == {account: forwarding.MESSAGE_RECORDS for account in OTHERS}
    assert acme_numbered == IMPORT_ROWS
    assert [fed(account) for account in OTHERS] == [[("category.created", "mine")]] * len(OTHERS)
    assert fed("acme") == [("product.created", f"p{n}") for n in range(IMPORT_ROWS)]


def test_an_import_backlog_left_for_lack_of_time_comes_back_at_once_and_is_numbered_once_in_order(
    fake_clock, monkeypatch
):
    """The hand-over's time (30 s with make run; in AWS the function's remaining time, less a margin) runs out after
    the import's first message and the other account's: the import's messages from there come back at once, handed
    over again and numbered from where the head says it stopped."""
    import_backlog("acme", IMPORT_ROWS)
    catalogue.put_category("other", "mine", {"name": "Mine"})

    def slow(send, **request):
        fake_clock.advance(dt.timedelta(seconds=5))  # a message of the import (5 transactions) takes 25 s
        return send(**request)

    intercept(monkeypatch, slow)
    answers = []

    def numbering_answered(event):
        from chalice.app import SQSEvent

        from chalicelib.jobs import handlers

        answers.append(handlers.number_changes(SQSEvent(event, None)))
        return answers[-1]

    poller().handler = numbering_answered
    drain()
    assert [len(answer["batchItemFailures"]) for answer in answers[:2]] == [2, 0]
    assert fed("other") == [("category.created", "mine")]
    assert fed("acme") == [("product.created", f"p{n}") for n in range(IMPORT_ROWS)]


def test_an_account_whose_numbering_fails_holds_no_other_account_and_is_numbered_once_when_it_recovers(
    fake_clock, monkeypatch
):
    real = feed_sequencer.number
    monkeypatch.setattr(
        feed_sequencer,
        "number",
        lambda account, *a, **k: (_ for _ in ()).throw(RuntimeError("down"))
        if account == "acme"
        else real(account, *a, **k),
    )
    catalogue.put_category("acme", "first", {"name": "First"})
    for account in OTHERS:
        catalogue.put_category(account, "mine", {"name": "Mine"})
    drain()
    assert [fed(account) for account in OTHERS] == [[("category.created", "mine")]] * len(OTHERS)
    assert feed.read_head("acme").sequence == 0
    catalogue.put_category("acme", "second", {"name": "Second"})
    drain()
    assert feed.read_head("acme").sequence == 0  # its messages wait behind the failed one: none out of order
    monkeypatch.setattr(feed_sequencer, "number", real)
    _back_now(poller())
    drain()
    assert fed("acme") == [("category.created", "first"), ("category.created", "second")]


def messages_of(account: str, sizes: list[int]) -> list[numbering.QueueMessage]:
    """The account's messages as one forwarder per stream shard sends them: each with `size` category changes."""
    out, n = [], 0
    for index, size in enumerate(sizes):
        records = []
        for _ in range(size):
            change = feed_marks.said(Change(ChangeType.CATEGORY_CREATED, f"c{n}"), clock.now())
            records.append(feed_marks.Marked(f"u{n}.r", account, int(clock.now().timestamp()), [change], unit=f"u{n}"))
            n += 1
        body = json.dumps({"account": account, "records": [record.as_json() for record in records]})
        out.append(numbering.QueueMessage(f"m{index}", account, body))
    return out


@pytest.mark.parametrize("turn_records, numberings", [(numbering.TURN_RECORDS, 1), (6, 4), (3, 8)])
def test_an_accounts_small_messages_in_a_hand_over_are_numbered_together_up_to_a_turn(
    fake_clock, monkeypatch, turn_records, numberings
):
    """Eight messages of three changes (one account's changes over eight stream shards): one head read for all of
    them, not one per message (issue 43: numbered per second at 64 shards no lower than at 1)."""
    monkeypatch.setattr(numbering, "TURN_RECORDS", turn_records)
    calls = []
    real = feed_sequencer.number
    monkeypatch.setattr(
        feed_sequencer,
        "number",
        lambda account, records, **k: calls.append(len(records)) or real(account, records, **k),
    )
    left = numbering.number_messages(messages_of("acme", [3] * 8), clock.now() + dt.timedelta(minutes=1))
    assert (left, len(calls), sum(calls)) == (set(), numberings, 24)
    assert fed("acme") == [("category.created", f"c{n}") for n in range(24)]


def test_a_turn_numbered_in_part_is_done_up_to_its_first_message_not_numbered(fake_clock, monkeypatch):
    """Messages whose records are all numbered are done; from the first that is not, the account's messages go back
    to the queue (in order) and are skipped where numbered when they come again."""
    real = feed_sequencer.number

    def first_four(account, records, **named):
        outcome = real(account, records[:4], **named)
        return feed_sequencer.Numbered(outcome.count, outcome.done, outcome.head)

    monkeypatch.setattr(feed_sequencer, "number", first_four)
    messages = messages_of("acme", [3, 3, 3])
    assert numbering.number_messages(messages, clock.now() + dt.timedelta(minutes=1)) == {"m1", "m2"}
    monkeypatch.setattr(feed_sequencer, "number", real)
    assert numbering.number_messages(messages[1:], clock.now() + dt.timedelta(minutes=1)) == set()
    assert fed("acme") == [("category.created", f"c{n}") for n in range(9)]


def _back_now(queue) -> None:
    """The failed messages' pause over: visible again (the queue's clock is the machine's, not the test's)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.sqs.models import sqs_backends

    for message in sqs_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].queues[queue.queue_url.rsplit("/", 1)[1]]._messages:
        message.change_visibility(0)


def test_events_list_newest_first_in_sequence_order_within_a_numbering_and_across_numberings_clocks(fake_clock):
    """GET /account/events lists newest first: thirty events of one numbering made in the same millisecond, then
    ten of a later numbering whose changes' writer's clock was two seconds behind, still follow the sequence."""
    select_created("acme")
    now = clock.now()
    record_changes("acme", [Change(ChangeType.CATEGORY_CREATED, f"c{n}") for n in range(30)], now)
    behind = now - dt.timedelta(seconds=2)
    record_changes("acme", [Change(ChangeType.CATEGORY_CREATED, f"c{n}") for n in range(30, 40)], behind)
    listed = [int(event["sequence"]) for event in event_lists.list_page("acme", 100, None).items]
    assert listed == list(range(40, 0, -1))


def test_a_change_type_this_release_does_not_know_is_numbered_as_it_is_and_blocks_nothing(fake_clock):
    """A newer release (during a deploy) committed a type this code does not know: its record is numbered, the
    entry says the type as written, and the account's changes behind it and the other accounts' are numbered with
    their events."""
    for account in ("acme", "other"):
        select_created(account)
    unknown = marked_item("acme", keys.category_key("acme", "w1"), [Change(ChangeType.CATEGORY_CREATED, "w1")])
    unknown[feed_marks.MARK]["changes"][0].update(type="widget.created", resource="widget")
    table.client().put_item(TableName=table.name(), Item=table.to_item(unknown))
    catalogue.put_category("acme", "after", {"name": "After"})
    catalogue.put_category("other", "mine", {"name": "Mine"})
    drain()
    assert fed("acme") == [("settings.updated", "webhooks"), ("widget.created", "w1"), ("category.created", "after")]
    assert fed("other") == [("settings.updated", "webhooks"), ("category.created", "mine")]
    assert [event["type"] for event in event_lists.list_page("acme", 10, None).items] == ["category.created"]
