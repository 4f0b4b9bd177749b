"""The feed's two functions (issue 43): `table_feed` forwards what a stream batch's marks show to the feed queue,
each account's records in the stream's order to its own message group, and answers the records whose message the
queue refused, so the event source mapping hands those over again; `feed_sequencer` numbers what the queue hands
over and answers each failed account's messages from its first, which the queue hands over again later, alone.
`table_stream` sends the batch's new events and starts queued images and imports."""

import datetime as dt
import json

import pytest

from chalicelib.adapters import feed_queue
from chalicelib.domain.feed import Change, ChangeType
from chalicelib.service import clock
from chalicelib.store import feed, feed_marks, feed_sequencer, keys, table
from tests import stream

pytestmark = [pytest.mark.usefixtures("accounts_ready", "fake_clock", "feed_queue_made"), pytest.mark.pending_feed]


@pytest.fixture
def feed_queue_made():
    """The feed queue of the test's table (tests/stream.py makes it on first use, as make run does at start)."""
    stream.poller()


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
        "eventID": f"ev{sequence_number}",
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


def invoke(function: str, records: list[dict]) -> dict:
    from chalice.test import Client

    from app import app

    with Client(app) as client:
        return client.lambda_.invoke(function, {"Records": records}).payload


def fed(account: str) -> list[tuple[int, str, str]]:
    read = feed.read(account, 0, 100, clock.now())
    return [(entry["sequence"], entry["type"], entry["id"]) for entry in getattr(read, "entries", [])]


def queued() -> list[dict]:
    """What the feed queue holds now, received as its event source would (and hidden for the queue's visibility)."""
    queue = stream.poller()
    messages = []
    while True:
        found = queue.sqs.receive_message(QueueUrl=queue.queue_url, MaxNumberOfMessages=10, AttributeNames=["All"])
        if not found.get("Messages"):
            return messages
        messages += found["Messages"]


def groups(messages: list[dict]) -> dict[str, list[str]]:
    """Per message group, the ids of the changes its messages carry, in order."""
    found: dict[str, list[str]] = {}
    for message in messages:
        body = json.loads(message["Body"])
        assert body["account"] == message["Attributes"]["MessageGroupId"]
        found.setdefault(body["account"], []).extend(c["id"] for r in body["records"] for c in r["changes"])
    return found


def as_lambda(message: dict) -> dict:
    from chalicelib.localdev.queue import _as_lambda_record

    return _as_lambda_record(message)


def test_a_stream_batch_forwards_each_accounts_records_in_order_to_its_own_message_group():
    records = [
        marked_record("101", changes=[created("a1")]),
        marked_record("102", account="other", changes=[created("b1")]),
        marked_record("103", changes=[created("a2")]),
    ]
    assert invoke("table_feed", records) == {"batchItemFailures": []}
    assert groups(queued()) == {"acme": ["a1", "a2"], "other": ["b1"]}
    assert fed("acme") == []  # forwarding numbers nothing: the queue's numbering does


@pytest.mark.parametrize("records", [[], ["unmarked"]], ids=["empty", "no-marks"])
def test_a_batch_with_nothing_to_forward_sends_nothing_and_answers_no_failure(records):
    """A mapping may invoke with no record at all (a window's end): it must not fail, or the shard would stop."""
    if records:
        record = marked_record("301")
        record["dynamodb"]["OldImage"] = record["dynamodb"]["NewImage"]  # a write that left the mark as it was
        records = [record]
    assert invoke("table_feed", records) == {"batchItemFailures": []}
    assert queued() == []


def test_the_records_of_a_message_the_queue_refused_are_answered_and_numbered_once_when_handed_over_again(monkeypatch):
    real = feed_queue.client()
    refusing = {"other"}

    class Refusing:
        def __getattr__(self, name):
            return getattr(real, name)

        def send_message_batch(self, QueueUrl, Entries):
            kept = [entry for entry in Entries if entry["MessageGroupId"] not in refusing]
            answer = real.send_message_batch(QueueUrl=QueueUrl, Entries=kept) if kept else {}
            failed = [{"Id": e["Id"], "Code": "Throttled", "SenderFault": False} for e in Entries if e not in kept]
            return {"Successful": answer.get("Successful", []), "Failed": failed}

    monkeypatch.setattr(feed_queue, "client", lambda: Refusing())
    batch = [
        marked_record("101", changes=[created("a1")]),
        marked_record("102", account="other", changes=[created("b1")]),
        marked_record("103", account="other", changes=[created("b2")]),
        marked_record("104", changes=[created("a2")]),
    ]
    assert invoke("table_feed", batch) == {"batchItemFailures": [{"itemIdentifier": "102"}, {"itemIdentifier": "103"}]}
    refusing.clear()
    assert invoke("table_feed", batch[1:]) == {"batchItemFailures": []}  # from the first failed record, as Lambda does
    messages = queued()
    assert groups(messages) == {"acme": ["a1", "a2", "a2"], "other": ["b1", "b2"]}  # a2 again, in a new message
    assert invoke("feed_numbering", [as_lambda(m) for m in messages]) == {"batchItemFailures": []}
    assert [entry[2] for entry in fed("acme")] == ["a1", "a2"] and [entry[2] for entry in fed("other")] == ["b1", "b2"]


def test_a_batch_handed_over_again_whole_is_taken_once_by_the_queue():
    batch = [marked_record("101", changes=[created("a1")]), marked_record("102", changes=[created("a2")])]
    assert invoke("table_feed", batch) == invoke("table_feed", batch) == {"batchItemFailures": []}
    assert groups(queued()) == {"acme": ["a1", "a2"]}  # the same message within five minutes: deduplicated


def test_a_queue_batch_numbers_each_account_in_order_and_answers_a_failing_accounts_messages_from_its_first(
    monkeypatch,
):
    invoke("table_feed", [marked_record(str(100 + n), changes=[created(f"a{n}")]) for n in range(2)])
    invoke("table_feed", [marked_record("200", account="other", changes=[created("b0")])])
    invoke("table_feed", [marked_record("201", account="other", changes=[created("b1")])])
    messages = queued()
    assert [m["Attributes"]["MessageGroupId"] for m in messages] == ["acme", "other", "other"]
    real, pauses = feed_sequencer.number, []

    def failing(account, records, **named):
        if account == "other":
            raise RuntimeError("the other account's numbering fails")
        return real(account, records, **named)

    monkeypatch.setattr(feed_sequencer, "number", failing)
    monkeypatch.setattr(feed_queue, "postpone", pauses.extend)
    answer = invoke("feed_numbering", [as_lambda(m) for m in messages])
    assert answer == {"batchItemFailures": [{"itemIdentifier": m["MessageId"]} for m in messages[1:]]}
    assert [seconds for _, seconds in pauses] == [1, 1]  # first hand-over: 1 s, doubling with each
    assert fed("acme") == [(1, "category.created", "a0"), (2, "category.created", "a1")]
    monkeypatch.setattr(feed_sequencer, "number", real)
    again = [{**as_lambda(m), "attributes": {**m["Attributes"], "ApproximateReceiveCount": "3"}} for m in messages]
    assert invoke("feed_numbering", again) == {"batchItemFailures": []}  # all of it again: nothing twice
    assert fed("other") == [(1, "category.created", "b0"), (2, "category.created", "b1")]
    assert len(fed("acme")) == 2


def test_a_failed_hand_over_pauses_doubling_with_each_up_to_fifteen_minutes(monkeypatch):
    from chalicelib.service import feed_numbering as numbering

    invoke("table_feed", [marked_record("100")])
    (message,) = queued()
    pauses = []
    monkeypatch.setattr(feed_sequencer, "number", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("down")))
    monkeypatch.setattr(feed_queue, "postpone", pauses.extend)
    for count in (1, 2, 5, 11, 40):
        handed = {**as_lambda(message), "attributes": {**message["Attributes"], "ApproximateReceiveCount": str(count)}}
        invoke("feed_numbering", [handed])
    assert [seconds for _, seconds in pauses] == [1, 2, 16, 900, 900] and numbering.MAX_RETRY_PAUSE_SECONDS == 900


def test_a_message_that_is_not_the_forwarders_is_one_unreadable_entry_of_its_account():
    record = {
        "messageId": "m1",
        "receiptHandle": "",
        "body": "not json",
        "attributes": {"MessageGroupId": "acme", "ApproximateReceiveCount": "1", "MessageDeduplicationId": "d1"},
    }
    assert invoke("feed_numbering", [record]) == {"batchItemFailures": []}
    assert fed("acme") == [(1, "feed.unreadable", "message.d1")]
    assert invoke("feed_numbering", [record]) == {"batchItemFailures": []}  # handed over again: once
    assert len(fed("acme")) == 1


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
