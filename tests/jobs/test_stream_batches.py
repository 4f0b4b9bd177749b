"""Issue 34: the table stream's two functions. `table_feed` numbers what a batch's marks show and answers the
records of accounts whose numbering failed (Powertools' batch utility), so the event source mapping hands those
over again from the first of them instead of a failure being dropped or one account holding the others' shard.
`table_stream` sends the batch's new events and starts queued images and imports."""

import datetime as dt

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.service import clock
from chalicelib.store import event_lists, feed, feed_marks, feed_numbering, keys, table

pytestmark = [pytest.mark.usefixtures("accounts_ready", "fake_clock"), pytest.mark.pending_feed]


def created(category: str, change_type: ChangeType = ChangeType.CATEGORY_CREATED) -> dict:
    """What a category change's entry says, but its sequence."""
    return feed_marks.said(Change(change_type, category), clock.now())


def marked_record(sequence_number: str, account: str = "acme", changes: list[dict] | None = None) -> dict:
    """A stream record as Lambda hands it over: a MODIFY of a category whose new image carries a unit's mark
    (store/feed_marks.py) that its old image did not."""
    changes = changes if changes is not None else [created("mine")]
    key = keys.category_key(account, changes[0]["id"])
    mark = {"unit": f"{int(sequence_number):016x}", "account": account, "changes": changes}
    return {
        "eventID": sequence_number,
        "eventName": "MODIFY",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x",
        "dynamodb": {
            "ApproximateCreationDateTime": int(clock.now().timestamp()),
            "Keys": table.to_item(key),
            "NewImage": table.to_item({**key, feed_marks.MARK: mark}),
            "OldImage": table.to_item(key),
            "SequenceNumber": sequence_number,
            "SizeBytes": 10,
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        },
    }


def invoke(function: str, records: list[dict], shard: str = "shard-1") -> dict:
    from chalice.test import Client

    from app import app

    with Client(app) as client:
        return client.lambda_.invoke(function, {"Records": records, "shardId": shard}).payload


def fed(account: str) -> list[tuple[int, str, str]]:
    read = feed.read(account, 0, 100, clock.now())
    return [(entry["sequence"], entry["type"], entry["id"]) for entry in getattr(read, "entries", [])]


def test_a_batch_numbers_the_changes_its_marks_show_and_answers_no_failure():
    records = [
        marked_record("101", changes=[created("a"), created("a", ChangeType.CATEGORY_UPDATED)]),
        marked_record("102", "other", [created("b")]),
        marked_record("103", changes=[created("c")]),
    ]
    assert invoke("table_feed", records) == {"batchItemFailures": [], "state": {}}
    assert fed("acme") == [(1, "category.created", "a"), (2, "category.updated", "a"), (3, "category.created", "c")]
    assert fed("other") == [(1, "category.created", "b")]
    assert feed.read_head("acme").positions == {"shard-1": {"seq": "103", "at": int(clock.now().timestamp())}}


def test_only_the_records_of_an_account_whose_numbering_failed_are_answered_and_numbered_once_when_handed_again(
    monkeypatch,
):
    records = [
        marked_record("101", changes=[created("a")]),
        marked_record("102", "other", [created("b")]),
        marked_record("103", changes=[created("c")]),
        marked_record("104", "other", [created("d")]),
    ]
    real = feed_numbering.number

    def failing_for_acme(account, shard, turn):
        if account == "acme":
            raise RuntimeError("DynamoDB hiccup")
        return real(account, shard, turn)

    monkeypatch.setattr(feed_numbering, "number", failing_for_acme)
    answer = invoke("table_feed", records)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "101"}, {"itemIdentifier": "103"}], "state": {}}
    assert (fed("acme"), fed("other")) == ([], [(1, "category.created", "b"), (2, "category.created", "d")])

    monkeypatch.setattr(feed_numbering, "number", real)
    # The mapping hands the batch over again from its first failed record (101), so other's 102 and 104 too.
    assert invoke("table_feed", records) == {"batchItemFailures": [], "state": {}}
    assert fed("acme") == [(1, "category.created", "a"), (2, "category.created", "c")]
    assert fed("other") == [(1, "category.created", "b"), (2, "category.created", "d")]


def test_a_change_type_this_release_does_not_know_is_numbered_without_an_event_and_fails_nothing():
    """A newer release wrote a change type this code does not know (a deploy in progress): its batch numbers it as
    it is, and the known change behind it with its event, and reports no failure (no retries, no alarm)."""
    from chalicelib.service import webhooks

    webhooks.put_settings("acme", {"url": "https://erp.example.com/hook", "events": ["category.created"]})
    unknown = {**created("w1"), "type": "widget.created", "resource": "widget"}
    records = [marked_record("201", changes=[unknown]), marked_record("202", changes=[created("c")])]
    assert invoke("table_feed", records) == {"batchItemFailures": [], "state": {}}
    assert fed("acme") == [(1, "widget.created", "w1"), (2, "category.created", "c")]
    assert [event["sequence"] for event in event_lists.list_page("acme", 10, None).items] == [2]


def test_a_batch_without_marks_numbers_nothing_and_answers_no_failure():
    record = marked_record("301")
    record["dynamodb"]["OldImage"] = record["dynamodb"]["NewImage"]  # a write that left the mark as it was
    assert invoke("table_feed", [record]) == {"batchItemFailures": [], "state": {}}
    assert feed.read_head("acme").exists is False


@pytest.fixture
def background_work(monkeypatch):
    """What each record wakes, by its category (`background.woken` is tested with the stores); what was started."""
    from chalicelib.jobs import event_lanes, images, import_turns
    from chalicelib.service import background

    wakes = {
        keys.category_key("acme", "e1")["SK"]: background.Woken({"event_id": "e1", "account": "acme"}, False, False),
        keys.category_key("acme", "img")["SK"]: background.Woken(None, True, False),
        keys.category_key("acme", "e2")["SK"]: background.Woken({"event_id": "e2", "account": "other"}, False, False),
        keys.category_key("acme", "imp")["SK"]: background.Woken(None, False, True),
    }
    monkeypatch.setattr(
        background, "woken", lambda name, image: wakes.get(image["SK"]["S"], background.Woken(None, False, False))
    )
    started: dict[str, object] = {}
    monkeypatch.setattr(event_lanes, "dispatch_new", lambda events, deadline: started.update(events=(events, deadline)))
    monkeypatch.setattr(images, "run", lambda deadline: started.update(images=deadline) or {"due": 0})
    monkeypatch.setattr(import_turns, "advance_imports", lambda deadline: started.update(imports=deadline) or {})
    return started


def woken_batch() -> list[dict]:
    return [marked_record(str(n), changes=[created(name)]) for n, name in enumerate(["e1", "img", "x", "e2", "imp"])]


def test_in_aws_a_batch_sends_its_new_events_and_starts_one_step_of_images_and_imports(background_work):
    """The next batch waits for this one: images and imports woken by the stream get one step's time (the schedule
    comes only every minute), the events are the batch's own, each account in its lane."""
    from chalicelib.domain.event_policy import SEND_TIMEOUT_SECONDS
    from chalicelib.domain.limits import IMAGE_DOWNLOAD_SECONDS, IMPORT_CHUNK_SECONDS
    from chalicelib.jobs import budget

    assert invoke("table_stream", woken_batch()) == {"batchItemFailures": []}

    def deadline(longest_step: float, one_step: bool = True) -> dt.datetime:
        """The phase's in a 30 s invocation; for one step, no later than that step's time."""
        window = budget.LAMBDA_TIMEOUT_SECONDS - budget.RECORD_MARGIN_SECONDS - longest_step
        return clock.now() + dt.timedelta(seconds=min(window, longest_step) if one_step else window)

    assert background_work == {
        "events": (
            [{"event_id": "e1", "account": "acme"}, {"event_id": "e2", "account": "other"}],
            deadline(SEND_TIMEOUT_SECONDS, one_step=False),
        ),
        "images": deadline(IMAGE_DOWNLOAD_SECONDS),
        "imports": deadline(IMPORT_CHUNK_SECONDS),
    }
