"""Issue 34: under `make run` the table's stream wakes the loops (jobs/wakeups.py): the events it brings are sent
at once without reading the due queue, which is read only on the loop's slow safety-net interval."""

import threading

import pytest
from werkzeug import Response

from chalicelib.jobs import event_lanes, handlers
from chalicelib.jobs.wakeups import Bells
from chalicelib.service import event_sending as sending

from .support import configure, delivery, write_event, write_events
from .test_stream_batches import background_work, woken_batch  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("accounts_ready")

GENEROUS = 30  # seconds: a bound on waits for what happens at once, never a timing assertion


class Scans(list):
    """The reads of the whole due queue the loop made."""

    def __init__(self):
        super().__init__()
        self.first_done = threading.Event()


@pytest.fixture
def scans(monkeypatch):
    counted = Scans()
    real = sending.due_events

    def due_events(*args, **kwargs):
        found = real(*args, **kwargs)
        counted.append(len(found))
        counted.first_done.set()
        return found

    monkeypatch.setattr(sending, "due_events", due_events)
    return counted


@pytest.fixture
def events_loop():
    """The `make run` events loop with its bell and a safety net far longer than any test."""
    bells = Bells()
    loop = threading.Thread(
        target=event_lanes.run_forever, args=(bells.stop_event, 3600), kwargs={"bell": bells.events}
    )
    loop.start()
    yield bells
    bells.stop()
    loop.join(timeout=GENEROUS)
    assert not loop.is_alive()


class Receiver:
    """Answers 200; the first request waits until the test lets it go, so its account's lane stays busy."""

    def __init__(self, httpserver):
        self.arrived = threading.Semaphore(0)
        self.first_held, self.release = threading.Event(), threading.Event()
        self.ids: list[str] = []
        httpserver.expect_request("/hook").respond_with_handler(self.answer)

    def answer(self, request):
        self.ids.append(request.headers["webhook-id"])
        if len(self.ids) == 1:
            self.first_held.set()
            self.release.wait(GENEROUS)
        self.arrived.release()
        return Response("", status=200)


def test_an_event_the_stream_rings_is_sent_without_reading_the_due_queue(httpserver, scans, events_loop):
    receiver = Receiver(httpserver)
    receiver.release.set()
    configure(url=httpserver.url_for("/hook"))
    assert scans.first_done.wait(GENEROUS)  # the loop read the queue once as it started, then waits on its bell
    event = write_event()
    events_loop.events.ring([event])
    assert receiver.arrived.acquire(timeout=GENEROUS)
    assert receiver.ids == [event["event_id"]]
    assert len(scans) == 1  # the loop's first run; after that only the ring


def test_events_rung_while_their_accounts_lane_runs_are_sent_when_it_ends_not_at_the_next_scan(
    httpserver, scans, events_loop
):
    receiver = Receiver(httpserver)
    configure(url=httpserver.url_for("/hook"))
    assert scans.first_done.wait(GENEROUS)
    first = write_event(data=delivery(1))
    events_loop.events.ring([first])
    assert receiver.first_held.wait(GENEROUS)  # the account's lane waits on its receiver
    second = write_event(data=delivery(2))
    events_loop.events.ring([second])  # its account is busy: the event waits for the lane, not for a scan
    receiver.release.set()
    assert receiver.arrived.acquire(timeout=GENEROUS) and receiver.arrived.acquire(timeout=GENEROUS)
    assert receiver.ids == [first["event_id"], second["event_id"]]
    assert len(scans) == 1


def test_a_burst_larger_than_one_turn_is_all_sent_without_waiting_for_the_safety_net(httpserver, scans, events_loop):
    receiver = Receiver(httpserver)
    receiver.release.set()
    configure(url=httpserver.url_for("/hook"))
    assert scans.first_done.wait(GENEROUS)
    burst = write_events("acme", sending.PER_TURN + 5)
    events_loop.events.ring(burst)  # one turn sends PER_TURN of them; the loop reads the queue for the rest
    for _ in burst:
        assert receiver.arrived.acquire(timeout=GENEROUS)
    assert sorted(receiver.ids) == sorted(event["event_id"] for event in burst)
    assert len(scans) == 2


def test_a_stream_batch_in_make_run_rings_the_loops_and_sends_or_starts_nothing_itself(background_work):
    """The feeder hands the next batch (and its numbering) over only when this one returns: its events, images
    and imports are left to the loops it rings."""
    from chalice.app import DynamoDBEvent

    bells = Bells()
    event = DynamoDBEvent({"Records": woken_batch(), "shardId": "shard-1"}, None)
    assert handlers.on_table_change(event, local=bells) == {"batchItemFailures": []}
    assert background_work == {}  # nothing sent, downloaded or imported in the batch
    assert bells.events.wait(0)
    assert bells.events.take_events() == [{"event_id": "e1", "account": "acme"}, {"event_id": "e2", "account": "other"}]
    assert bells.images.wait(0) and bells.imports.wait(0)
    assert not bells.events.wait(0)  # rung once, answered once
