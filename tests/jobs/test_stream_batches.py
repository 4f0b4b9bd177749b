"""Issue 34: the table stream's handler answers the records whose work failed (Powertools' batch utility), so the
event source mapping retries those (bisecting, a bounded number of times, then its on-failure queue) instead of
a failing batch holding its shard, or a failure being dropped."""

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.service import clock
from chalicelib.store import feed, feed_numbering, keys, table
from tests.transactions import record_changes

pytestmark = [pytest.mark.usefixtures("accounts_ready", "fake_clock"), pytest.mark.pending_feed]


def pending_record(account: str, sequence_number: str) -> dict:
    resource = "category#mine"
    item = {
        **keys.feed_pending_key(account, resource),
        **keys.feed_pending_gsi(account, resource),
        "changes": [
            {"type": "category.created", "resource": "category", "id": "mine", "at": "2026-05-04T09:30:00.000Z"}
        ],
    }
    return {
        "eventID": sequence_number,
        "eventName": "MODIFY",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x",
        "dynamodb": {
            "ApproximateCreationDateTime": 1700000000,
            "Keys": table.to_item({"PK": item["PK"], "SK": item["SK"]}),
            "NewImage": table.to_item(item),
            "SequenceNumber": sequence_number,
            "SizeBytes": 10,
            "StreamViewType": "NEW_IMAGE",
        },
    }


def invoke(records: list[dict]) -> dict:
    from chalice.test import Client

    from app import app

    with Client(app) as client:
        return client.lambda_.invoke("table_stream", {"Records": records}).payload


def test_a_batch_whose_work_succeeded_reports_no_failure():
    record_changes("acme", [Change(ChangeType.CATEGORY_CREATED, "mine")], clock.now())
    assert invoke([pending_record("acme", "101")]) == {"batchItemFailures": []}
    assert feed.read_head("acme").sequence == 1


def test_only_the_records_of_an_account_whose_numbering_failed_are_answered_as_failed(monkeypatch):
    for account in ("acme", "other"):
        record_changes(account, [Change(ChangeType.CATEGORY_CREATED, "mine")], clock.now())
    real = feed_numbering.number

    def failing_for_acme(account, now, **options):
        if account == "acme":
            raise RuntimeError("DynamoDB hiccup")
        return real(account, now, **options)

    monkeypatch.setattr(feed_numbering, "number", failing_for_acme)
    answer = invoke([pending_record("acme", "101"), pending_record("other", "102"), pending_record("acme", "103")])
    assert answer == {"batchItemFailures": [{"itemIdentifier": "101"}, {"itemIdentifier": "103"}]}
    assert (feed.read_head("acme").sequence, feed.read_head("other").sequence) == (0, 1)


@pytest.mark.parametrize("in_aws", [True, False], ids=["AWS", "make run"])
def test_a_batch_starts_a_queued_import_for_one_step_in_aws_and_leaves_it_to_the_loop_in_make_run(monkeypatch, in_aws):
    """The next batch, and the numbering in it, waits for this one: an import woken by the stream gets one
    step's time in AWS (the schedule comes only every minute), none in `make run`, whose import loop takes it."""
    import datetime as dt

    from chalice.app import DynamoDBEvent

    from chalicelib.domain.limits import IMPORT_CHUNK_SECONDS
    from chalicelib.jobs import handlers, import_turns
    from chalicelib.jobs.wakeups import Bells
    from chalicelib.service import background

    deadlines = []
    monkeypatch.setattr(background, "woken", lambda name, image: background.Woken(None, False, True, None))
    monkeypatch.setattr(import_turns, "advance_imports", lambda deadline: deadlines.append(deadline) or {"done": 0})
    bells = None if in_aws else Bells()
    answer = handlers.on_table_change(DynamoDBEvent({"Records": [pending_record("acme", "7")]}, None), bells)
    assert answer == {"batchItemFailures": []}
    if in_aws:
        assert deadlines == [clock.now() + dt.timedelta(seconds=IMPORT_CHUNK_SECONDS)]
    else:
        assert deadlines == []
        assert bells.imports.wait(0)  # the import loop is woken at once instead


def test_a_pending_change_of_a_type_this_release_does_not_know_is_numbered_and_blocks_nothing():
    """A newer release wrote a change type this code does not know (a deploy in progress): its stream batch
    numbers it as it is, with the known change behind it, and reports no failure (no retries, no alarm)."""
    record = pending_record("acme", "201")
    unknown = {"type": "widget.created", "resource": "widget", "id": "w1", "at": "2026-05-04T09:30:00.000Z"}
    item = table.from_item(record["dynamodb"]["NewImage"])
    item["changes"] = [unknown, *item["changes"]]
    table.client().put_item(TableName=table.name(), Item=table.to_item(item))
    record["dynamodb"]["NewImage"] = table.to_item(item)

    assert invoke([record]) == {"batchItemFailures": []}
    assert feed.read_head("acme").sequence == 2
