"""No account can hold up or poison another's events (decisions §10), with real receivers on loopback."""

import datetime as dt
import json
import socket
import threading
import time

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

from chalicelib.domain.timestamps import iso
from chalicelib.jobs import event_lanes as dispatcher
from chalicelib.service import clock
from chalicelib.service import event_sending as sending
from chalicelib.store import event_attempts, events, table

from .support import T0, configure, delivery, dispatch_at, park, stored, write_event, write_events

pytestmark = pytest.mark.usefixtures("accounts_ready", "fake_clock")

TIMEOUT = 0.5  # the send timeout in these tests (10 s in service): the rule is the same, the tests are fast


@pytest.fixture
def short_timeout(monkeypatch):
    monkeypatch.setattr(sending.policy, "SEND_TIMEOUT_SECONDS", TIMEOUT)


@pytest.fixture
def receivers():
    """Threaded receivers, so a receiver that sleeps holds only its own requests."""
    started = []

    def start() -> HTTPServer:
        server = HTTPServer(threaded=True)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.clear()
        server.stop()


def sleeping(seconds, arrived: threading.Event | None = None, release: threading.Event | None = None):
    """A receiver that answers late: after `seconds`, or once `release` is set. It sets `arrived` when a
    request comes in, so a test waits for that condition instead of a guessed time."""

    def handler(_request):
        if arrived is not None:
            arrived.set()
        if release is not None:
            release.wait(seconds)
            return Response("down", status=503)  # let go early: it fails all the same
        time.sleep(seconds)  # the receiver's own slowness, not the test's timing
        return Response("late", status=200)

    return handler


def failing_and_healthy(receivers, failure) -> tuple[HTTPServer, HTTPServer]:
    """Account "other" sends to a receiver that fails (a status, or a handler), "acme" to one that answers 200."""
    failing, healthy = receivers(), receivers()
    if isinstance(failure, int):
        failing.expect_request("/hook").respond_with_data("down", status=failure)
    else:
        failing.expect_request("/hook").respond_with_handler(failure)
    healthy.expect_request("/hook").respond_with_data("ok")
    configure("other", url=failing.url_for("/hook"))
    configure("acme", url=healthy.url_for("/hook"))
    return failing, healthy


def arrivals(server) -> list[dict]:
    return [json.loads(request.get_data()) for request, _ in server.log]


def maximal_delivery(delivery_id: int) -> dict:
    """50 lines with 2000-character messages of 4-byte characters: about 400 KB of request items."""
    base = delivery(delivery_id)
    line = base["request"]["items"][0]
    items = [{**line, "id": f"item-{n}", "message": "🍺" * 1990} for n in range(50)]
    return {**base, "request": {**base["request"], "items": items}}


def item_size(event: dict) -> int:
    return len(json.dumps(table.to_item(stored(event))))


def test_a_receiver_slower_than_the_timeout_delays_only_its_own_account_under_make_run(receivers, short_timeout):
    slow_is_holding = threading.Event()
    slow, healthy = failing_and_healthy(receivers, sleeping(TIMEOUT * 3, arrived=slow_is_holding))
    now = clock.now()
    backlog = write_events("other", 40, now)  # the slow account has many events waiting
    stop = threading.Event()
    runner = threading.Thread(target=dispatcher.run_forever, args=(stop, 0.05))
    runner.start()
    try:
        assert slow_is_holding.wait(10)  # the slow account's lane is now waiting on its receiver
        written = time.monotonic()
        event = write_event("acme", data=delivery(1), now=clock.now())
        while not healthy.log and time.monotonic() - written < 10:
            time.sleep(0.02)
        delay = time.monotonic() - written
        while stored(event)["status"] != "DELIVERED" and time.monotonic() - written < 10:
            time.sleep(0.02)  # the lane records the attempt just after the receiver answered
        while not stored(backlog[0])["attempts"] and time.monotonic() - written < 10:
            time.sleep(0.02)  # the slow lane records its attempt once the timeout has passed
    finally:
        stop.set()
        runner.join(timeout=10)
    assert [body["idempotency_key"] for body in arrivals(healthy)] == [event["event_id"]]
    assert delay < 2  # well within the 10 s the rule allows, while the other account's lane waits
    assert stored(event)["status"] == "DELIVERED"
    # The slow account was tried once, then parked: its other events wait untried for its retry.
    tried = [item for item in map(stored, backlog) if item["attempts"]]
    assert len(tried) == 1 and tried[0]["last_error"].startswith("no answer within")
    assert len(slow.log) <= 2  # the attempt (and nothing more before its retry is due)


def test_the_stream_sends_each_accounts_new_events_in_their_own_lanes(receivers, monkeypatch):
    monkeypatch.setattr(sending.policy, "SEND_TIMEOUT_SECONDS", 2)
    slow_is_holding, release = threading.Event(), threading.Event()
    slow, healthy = failing_and_healthy(receivers, sleeping(3, arrived=slow_is_holding, release=release))
    now = clock.now()
    batch = write_events("other", 20, now)
    batch.append(write_event("acme", data=delivery(1), now=now))
    seen = {}

    def watch():
        """Once the healthy receiver has its event, note whether the slow account's attempt is still open (not
        yet recorded); only then let the slow receiver answer."""
        while not healthy.log and not release.wait(0.01):
            pass
        seen["slow attempts recorded"] = sum(stored(event)["attempts"] for event in batch[:-1])
        release.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    summary = dispatcher.dispatch_new(batch)
    release.set()
    watcher.join()

    assert slow_is_holding.is_set() and healthy.log
    assert seen == {"slow attempts recorded": 0}  # sent while the slow receiver still held its request
    assert summary["delivered"] == 1 and summary["retrying"] == 1 and summary["held_back"] == 19
    # A later batch of the parked account is postponed without a send.
    later = write_event("other", data=delivery(2), now=clock.now())
    assert dispatcher.dispatch_new([later])["held_back"] == 1
    assert stored(later)["attempts"] == 0 and stored(later)["next_attempt_at"] > later["next_attempt_at"]


def test_a_schedule_run_sends_healthy_accounts_however_many_events_a_failing_one_has(receivers):
    failing, healthy = failing_and_healthy(receivers, 503)
    write_events("other", 300, T0)
    event = write_event("acme", data=delivery(1), now=T0 + dt.timedelta(seconds=1))

    summary = dispatch_at(T0 + dt.timedelta(seconds=2))

    assert stored(event)["status"] == "DELIVERED"
    assert len(failing.log) == 1  # one attempt, then the account is parked
    assert summary["delivered"] == 1 and summary["retrying"] == 1
    # The parked account's events left the due index: the next runs do not even read them.
    assert events.due(T0 + dt.timedelta(seconds=20), 1000) == []
    # A new event of the healthy account goes at once; the parked account's waits for its retry.
    second = write_event("acme", data=delivery(2), now=T0 + dt.timedelta(seconds=5))
    assert dispatch_at(T0 + dt.timedelta(seconds=6))["delivered"] == 1
    assert stored(second)["status"] == "DELIVERED"


def test_a_maximal_order_with_a_failing_receiver_ends_failed_and_delays_no_one(receivers):
    failing, healthy = failing_and_healthy(receivers, 500)
    poison = [write_event("other", data=maximal_delivery(n), now=T0) for n in (1, 2)]
    assert all(item_size(event) < 2000 for event in poison)  # the outbox item stays small

    now, healthy_sent = T0, 0
    for run in range(20):
        ordinary = write_event("acme", data=delivery(run + 1), now=now)
        dispatch_at(now + dt.timedelta(seconds=1))
        healthy_sent += stored(ordinary)["status"] == "DELIVERED"
        now += dt.timedelta(minutes=1)
    assert healthy_sent == 20  # every ordinary event went out in the run after its write

    while stored(poison[0])["status"] == "PENDING" and now < T0 + dt.timedelta(days=2):
        now += dt.timedelta(hours=1)
        dispatch_at(now)
    first = stored(poison[0])
    assert first["status"] == "FAILED"
    assert first["reason"] == "gave up after 24 hours; the last attempt: the receiver answered 500"
    assert first["attempts"] == len(
        [r for r, _ in failing.log if json.loads(r.get_data())["idempotency_key"] == first["event_id"]]
    )
    body = json.loads(failing.log[0][0].get_data())
    assert len(body["data"]["request"]["items"]) == 50  # the whole delivery was sent each time


def test_an_old_event_too_large_to_record_its_attempt_fails_and_the_run_goes_on(receivers):
    failing, healthy = failing_and_healthy(receivers, 500)
    # An event stored the way the outbox used to store it: the whole body in the item, near 400 KB.
    legacy = events.new_event("other", "request-delivery", delivery(1), T0)
    legacy["attempt_log"] = [{"at": iso(T0), "error": "e" * 290, "duration_ms": 1}] * 3
    for size in range(409_600, 400_000, -40):  # the largest body the item can take
        legacy["body"] = json.dumps(
            {"type": "request-delivery", "idempotency_key": legacy["event_id"], "data": "y" * size}
        )
        try:
            table.client().put_item(TableName=table.name(), Item=table.to_item(legacy))
            break
        except table.client().exceptions.ClientError:
            continue
    ordinary = write_event("acme", data=delivery(1), now=T0)

    summary = dispatch_at(T0)

    assert stored(ordinary)["status"] == "DELIVERED"
    failed = stored(legacy)
    assert failed["status"] == "FAILED"
    assert failed["reason"] == "the event is too large to record its attempts"
    if failed["attempts"]:  # the claim fitted, the attempt's record did not
        assert failed["attempts"] == 1 and failed["attempt_log"] == [failed["attempt_log"][0]]
        assert failed["attempt_log"][0]["status_code"] == 500
    assert "body" not in failed
    assert summary["failed"] == 1 and summary["delivered"] == 1


def test_a_body_larger_than_receivers_are_sent_fails_at_once(receivers, monkeypatch):
    receiver = receivers()
    receiver.expect_request("/hook").respond_with_data("ok")
    configure("acme", url=receiver.url_for("/hook"))
    monkeypatch.setattr(sending.policy, "MAX_BODY_BYTES", 100_000)
    too_big = write_event("acme", data=maximal_delivery(1), now=T0)
    fine = write_event("acme", data=delivery(2), now=T0)

    dispatch_at(T0)

    failed = stored(too_big)
    assert failed["status"] == "FAILED" and failed["attempts"] == 1
    assert failed["reason"].startswith("the body is ") and failed["reason"].endswith(
        "more than a receiver is sent (100000 bytes)"
    )
    assert stored(fine)["status"] == "DELIVERED"  # the failure did not park the account
    assert [body["data"]["id"] for body in arrivals(receiver)] == [2]


def _read_request(connection) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    while len(body) < length:
        body += connection.recv(65536)


def _raw_server(answer: bytes):
    """A TCP server that reads a request and answers `answer`, then closes."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def serve():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                _read_request(connection)
                connection.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}/hook"


@pytest.mark.parametrize(
    "failure, expected",
    [
        ("timeout", "no answer within 0.5 s"),
        ("dns", "cannot resolve receiver.invalid"),
        ("closed mid-answer", "BadStatusLine: HTTP/1.1 20"),
        ("not http", "BadStatusLine"),
        ("connection refused", "ConnectionRefusedError"),
    ],
)
def test_each_way_a_send_can_fail_is_an_attempt_recorded_and_the_run_goes_on(
    receivers, short_timeout, failure, expected
):
    healthy = receivers()
    healthy.expect_request("/hook").respond_with_data("ok")
    configure("acme", url=healthy.url_for("/hook"))
    listener = None
    if failure == "timeout":
        slow = receivers()
        slow.expect_request("/hook").respond_with_handler(sleeping(TIMEOUT * 3))
        url = slow.url_for("/hook")
    elif failure == "dns":
        url = "http://receiver.invalid/hook"
    elif failure == "closed mid-answer":
        listener, url = _raw_server(b"HTTP/1.1 20")
    elif failure == "not http":
        listener, url = _raw_server(b"SSH-2.0-OpenSSH_9.6\r\n")
    else:
        unused = socket.socket()
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/hook"
        unused.close()
    configure("other", url=url)
    broken = write_event("other", data=delivery(1), now=T0)
    ordinary = write_event("acme", data=delivery(1), now=T0 + dt.timedelta(seconds=1))
    try:
        summary = dispatch_at(T0 + dt.timedelta(seconds=2))
    finally:
        if listener is not None:
            listener.close()

    item = stored(broken)
    assert item["status"] == "PENDING" and item["attempts"] == 1
    assert expected in item["last_error"], item["last_error"]
    assert item["attempt_log"][0]["error"] == item["last_error"]
    assert item["next_attempt_at"] > iso(T0 + dt.timedelta(seconds=30))
    assert stored(ordinary)["status"] == "DELIVERED"
    assert summary["delivered"] == 1 and summary["retrying"] == 1


def test_a_delivery_that_is_gone_fails_its_event_with_the_reason(receivers):
    receiver = receivers()
    receiver.expect_request("/hook").respond_with_data("ok")
    configure("acme", url=receiver.url_for("/hook"))
    orphan = events.new_event("acme", "request-delivery", delivery(99), T0)
    table.client().put_item(TableName=table.name(), Item=table.to_item(orphan))
    dispatch_at(T0)
    failed = stored(orphan)
    assert failed["status"] == "FAILED" and failed["reason"] == "delivery 99 no longer exists"
    assert receiver.log == []


def test_no_event_is_claimed_after_the_deadline(receivers):
    receiver = receivers()
    receiver.expect_request("/hook").respond_with_data("ok")
    configure("acme", url=receiver.url_for("/hook"))
    event = write_event("acme", now=T0)
    summary = dispatch_at(T0, deadline=T0 - dt.timedelta(seconds=1))
    assert summary["delivered"] == 0 and receiver.log == []
    assert stored(event)["attempts"] == 0 and stored(event)["next_attempt_at"] == event["next_attempt_at"]


def test_events_parked_for_24_hours_fail_with_the_receivers_last_error(receivers):
    failing = receivers()
    failing.expect_request("/hook").respond_with_data("down", status=503)
    configure("other", url=failing.url_for("/hook"))
    waiting = write_event("other", data=delivery(2), now=T0)
    park("other", T0 + dt.timedelta(hours=40), "the receiver answered 503")

    assert dispatch_at(T0 + dt.timedelta(hours=23, minutes=59))["held_back"] == 1
    assert stored(waiting)["next_attempt_at"] == iso(T0 + dt.timedelta(hours=40))
    event_attempts.postpone(stored(waiting), T0 + dt.timedelta(hours=24))  # as if an earlier park had ended then
    assert dispatch_at(T0 + dt.timedelta(hours=24, minutes=1))["failed"] == 1

    held = stored(waiting)
    assert held["status"] == "FAILED" and held["attempts"] == 0 and "GSI1PK" not in held
    assert held["reason"] == "gave up after 24 hours; its receiver kept failing: the receiver answered 503"
    assert failing.log == []
