"""Sending events to a real HTTP receiver on loopback (pytest-httpserver)."""

import base64
import datetime as dt
import json
import threading
import time

import pytest
from standardwebhooks import Webhook
from werkzeug import Response

from chalicelib.jobs import event_lanes as dispatcher
from chalicelib.service import clock
from chalicelib.service import event_sending as sending
from chalicelib.store import event_attempts, events, keys, table

from .support import T0, configure, delivery, dispatch_at, stored, write_event

pytestmark = pytest.mark.usefixtures("accounts_ready", "fake_clock")


def received(httpserver):
    return [request for request, _ in httpserver.log]


def test_an_event_arrives_signed_with_the_account_secret(httpserver):
    settings = configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook", method="POST").respond_with_data("thanks", status=200)
    now = clock.now()  # the receiver checks the signature's timestamp against its clock
    event = write_event(now=now)

    summary = dispatch_at(now)

    assert summary["delivered"] == 1
    (request,) = received(httpserver)
    body = request.get_data(as_text=True)
    payload = Webhook(settings["signing_secret"]).verify(body, dict(request.headers))
    assert payload == {
        "type": "request-delivery",
        "idempotency_key": event["event_id"],
        "sequence": 2,  # the feed entry of the request; 1 was the webhook settings' own change
        "previous_sequence": 0,  # the account's first event
        "data": delivery(),
    }
    assert request.headers["webhook-id"] == event["event_id"]
    assert request.headers["Content-Type"] == "application/json"
    after = stored(event)
    assert after["status"] == "DELIVERED" and after["attempts"] == 1
    assert "GSI1PK" not in after and "next_attempt_at" not in after


def test_the_delivery_in_an_event_lists_its_fields_in_the_interfaces_order(httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook", method="POST").respond_with_data("", status=200)
    now = clock.now()

    def reversed_keys(value):  # as a store may hand a map back: in any order
        if isinstance(value, dict):
            return {key: reversed_keys(value[key]) for key in reversed(list(value))}
        return [reversed_keys(v) for v in value] if isinstance(value, list) else value

    write_event(data=reversed_keys(delivery()), now=now)
    dispatch_at(now)
    (request,) = received(httpserver)
    data = json.loads(request.get_data(as_text=True))["data"]
    assert list(data) == ["id", "type", "status", "customer", "request", "responses"]
    assert list(data["request"]) == [
        key
        for key in (
            "timestamp",
            "company",
            "customer_id",
            "cost_center",
            "address",
            "scheduled",
            "user",
            "message",
            "items",
        )
        if key in data["request"]
    ]
    assert list(data["request"]["items"][0]) == ["id", "name", "count", "vessel_count", "price"]


def test_a_signature_made_with_another_secret_does_not_verify(httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("")
    now = clock.now()
    write_event(now=now)
    dispatch_at(now)
    (request,) = received(httpserver)
    other_secret = configure("other", url="https://example.com/hook")["signing_secret"]
    with pytest.raises(Exception, match="signature"):
        Webhook(other_secret).verify(request.get_data(as_text=True), dict(request.headers))


def test_a_500_is_retried_after_a_backoff_with_the_same_webhook_id(httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_oneshot_request("/hook").respond_with_data("down", status=500)
    httpserver.expect_request("/hook").respond_with_data("ok", status=201)
    event = write_event()

    assert dispatch_at(T0)["retrying"] == 1
    pending = stored(event)
    assert pending["status"] == "PENDING"
    assert pending["attempt_log"][0]["status_code"] == 500
    next_at = dt.datetime.fromisoformat(pending["next_attempt_at"].replace("Z", "+00:00"))
    assert dt.timedelta(seconds=30) <= next_at - T0 < dt.timedelta(seconds=31)

    assert dispatch_at(T0 + dt.timedelta(seconds=10))["due"] == 0  # not yet due
    assert dispatch_at(T0 + dt.timedelta(seconds=31))["delivered"] == 1

    first, second = received(httpserver)
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == event["event_id"]
    done = stored(event)
    assert done["status"] == "DELIVERED"
    assert [a["status_code"] for a in done["attempt_log"]] == [500, 201]


@pytest.mark.parametrize("status", [202, 204, 301, 400, 404, 503])
def test_any_answer_but_200_or_201_is_retried(httpserver, status):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("", status=status, headers={"Location": "/elsewhere"})
    event = write_event()
    dispatch_at(T0)
    assert stored(event)["status"] == "PENDING"
    assert stored(event)["attempt_log"][0]["status_code"] == status


def test_retries_back_off_exponentially_and_fail_after_24_hours(httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("down", status=503)
    event = write_event()

    now = T0
    waits = []
    while stored(event)["status"] == "PENDING":
        dispatch_at(now)
        item = stored(event)
        if item["status"] != "PENDING":
            break
        next_at = dt.datetime.fromisoformat(item["next_attempt_at"].replace("Z", "+00:00"))
        attempted = dt.datetime.fromisoformat(item["attempt_log"][-1]["at"].replace("Z", "+00:00"))
        waits.append(int((next_at - attempted).total_seconds()))  # the wait counts from the attempt's end
        now = next_at
    failed = stored(event)

    assert waits[:5] == [30, 60, 120, 240, 480]
    assert max(waits) == 6 * 3600
    assert failed["status"] == "FAILED"
    assert "GSI1PK" not in failed and "next_attempt_at" not in failed
    last = dt.datetime.fromisoformat(failed["attempt_log"][-1]["at"].replace("Z", "+00:00"))
    assert last - T0 >= dt.timedelta(hours=24)  # retried for at least 24 hours
    sent = len(received(httpserver))
    assert sent == failed["attempts"] == len(waits) + 1
    assert dispatch_at(now + dt.timedelta(days=2))["due"] == 0
    assert len(received(httpserver)) == sent


def test_a_receiver_slower_than_the_timeout_counts_as_a_failed_attempt(httpserver, monkeypatch):
    monkeypatch.setattr(sending.policy, "SEND_TIMEOUT_SECONDS", 0.5)
    configure(url=httpserver.url_for("/slow"))
    release, answered = threading.Event(), threading.Event()

    def slow(_request):
        release.wait(10)  # holds the request until the test has seen the dispatcher give up on it
        answered.set()
        return Response("late", status=200)

    httpserver.expect_request("/slow").respond_with_handler(slow)
    event = write_event()
    dispatch_at(T0)
    assert not answered.is_set()  # the dispatcher stopped waiting: the receiver has not answered yet
    item = stored(event)
    assert item["status"] == "PENDING"
    assert item["attempt_log"][0]["error"].startswith("no answer within")
    release.set()
    assert answered.wait(10)  # its late answer lands in this test's log, not the next test's


def test_basic_authorization_custom_headers_and_method_are_sent(httpserver):
    configure(
        url=httpserver.url_for("/hook") + "?source=orders",
        method="PUT",
        headers={"X-Api-Key": "k-123", "X-Tenant": "acme"},
        authorization={"type": "basic", "username": "shop", "password": "pä55:word"},
    )
    httpserver.expect_request("/hook", method="PUT", query_string="source=orders").respond_with_data("")
    write_event()
    assert dispatch_at(T0)["delivered"] == 1
    (request,) = received(httpserver)
    assert request.method == "PUT"
    assert request.headers["X-Api-Key"] == "k-123" and request.headers["X-Tenant"] == "acme"
    scheme, credentials = request.headers["Authorization"].split(" ")
    assert scheme == "Basic"
    assert base64.b64decode(credentials).decode() == "shop:pä55:word"


def test_concurrent_dispatchers_never_send_the_same_attempt_twice(httpserver, monkeypatch, serialized_moto):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("")
    written = [write_event(data=delivery(n)) for n in range(1, 9)]
    # Both dispatchers read the same due events before either claims one: the worst interleaving.
    both_read = threading.Barrier(2)
    real_due = events.due

    def due_then_wait(now, limit):
        found = real_due(now, limit)
        both_read.wait(timeout=5)
        return found

    monkeypatch.setattr(events, "due", due_then_wait)
    summaries = []
    threads = [threading.Thread(target=lambda: summaries.append(dispatch_at(T0))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    ids = sorted(r.headers["webhook-id"] for r in received(httpserver))
    assert ids == sorted(e["event_id"] for e in written)  # each exactly once
    assert sum(s["delivered"] for s in summaries) == 8
    assert sum(s["claimed_elsewhere"] for s in summaries) == 8


def test_an_event_claimed_by_a_dispatcher_that_stopped_before_sending_is_sent_by_the_next(httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("")
    event = write_event()
    # A dispatcher claims the event and dies before sending it.
    assert event_attempts.claim(event, T0 + sending.LEASE) is not None

    assert dispatch_at(T0 + dt.timedelta(seconds=5))["delivered"] == 0
    assert received(httpserver) == []
    assert dispatch_at(T0 + sending.LEASE + dt.timedelta(seconds=1))["delivered"] == 1
    assert len(received(httpserver)) == 1
    assert stored(event)["status"] == "DELIVERED"


def test_without_a_webhook_an_event_waits_and_is_sent_once_one_is_configured(httpserver):
    event = write_event()
    assert dispatch_at(T0)["retrying"] == 1
    waiting = stored(event)
    assert waiting["status"] == "PENDING"
    assert waiting["attempt_log"][0]["error"] == "no receiver"

    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("")
    assert dispatch_at(T0 + dt.timedelta(minutes=1))["delivered"] == 1
    assert json.loads(received(httpserver)[0].get_data())["idempotency_key"] == event["event_id"]


def test_after_a_failed_attempt_later_events_of_the_same_delivery_wait(httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_oneshot_request("/hook").respond_with_data("", status=500)
    httpserver.expect_request("/hook").respond_with_data("")
    requested = write_event(data=delivery(7), now=T0)
    cancelled = write_event(
        event_type="cancel-delivery", data=delivery(7, "CANCELLED"), now=T0 + dt.timedelta(seconds=1)
    )
    other = write_event(data=delivery(8), now=T0 + dt.timedelta(seconds=2))

    summary = dispatch_at(T0 + dt.timedelta(seconds=3))

    # The failed attempt parks the account: its other events wait, untried, for the retry.
    assert summary["held_back"] == 2
    assert stored(cancelled)["attempts"] == stored(other)["attempts"] == 0
    assert stored(other)["next_attempt_at"] == stored(requested)["next_attempt_at"]
    dispatch_at(T0 + dt.timedelta(minutes=1))
    sent = [(json.loads(r.get_data())["type"], json.loads(r.get_data())["data"]["id"]) for r in received(httpserver)]
    assert sent == [("request-delivery", 7), ("request-delivery", 7), ("cancel-delivery", 7), ("request-delivery", 8)]
    assert {stored(e)["status"] for e in (requested, cancelled, other)} == {"DELIVERED"}


def test_a_refused_address_fails_the_event_at_once_with_its_reason(httpserver, monkeypatch):
    monkeypatch.setenv("ALLOW_PRIVATE_WEBHOOK_HOSTS", "false")
    configure(url=httpserver.url_for("/hook"))
    event = write_event()
    assert dispatch_at(T0)["failed"] == 1
    assert received(httpserver) == []
    failed = stored(event)
    assert failed["status"] == "FAILED" and failed["attempts"] == 1
    assert failed["reason"].startswith("the receiver's address was refused: localhost resolves to")
    assert "private, loopback" in failed["attempt_log"][0]["error"]
    assert "GSI1PK" not in failed
    assert dispatch_at(T0 + dt.timedelta(hours=1))["due"] == 0  # never retried


@pytest.mark.parametrize("value, allowed", [(None, False), ("", False), ("false", False), ("true", True), ("1", True)])
def test_private_webhook_addresses_are_refused_unless_allowed(monkeypatch, value, allowed):
    from chalicelib import config

    if value is None:
        monkeypatch.delenv("ALLOW_PRIVATE_WEBHOOK_HOSTS", raising=False)
    else:
        monkeypatch.setenv("ALLOW_PRIVATE_WEBHOOK_HOSTS", value)
    assert config.allow_private_webhook_hosts() is allowed


def test_the_attempt_log_keeps_the_latest_attempts(httpserver, monkeypatch):
    monkeypatch.setattr(event_attempts, "MAX_LOGGED_ATTEMPTS", 5)
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("", status=500)
    event = write_event()
    now = T0
    for _ in range(8):
        dispatch_at(now)
        now = dt.datetime.fromisoformat(stored(event)["next_attempt_at"].replace("Z", "+00:00"))
    item = stored(event)
    assert item["attempts"] == 8
    assert len(item["attempt_log"]) == 5
    assert item["attempt_log"][-1]["at"] < item["next_attempt_at"]
    assert item["attempt_log"][0]["at"].startswith("2025-03-03T09:03:30.")  # the 4th attempt: after 30+60+120 s


def test_run_forever_delivers_a_new_event_within_seconds_and_stops(httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("")
    stop = threading.Event()
    runner = threading.Thread(target=dispatcher.run_forever, args=(stop, 0.05))
    runner.start()
    try:
        event = write_event(now=clock.now())
        deadline = time.monotonic() + 5
        while not received(httpserver) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        runner.join(timeout=5)
    assert not runner.is_alive()
    assert [r.headers["webhook-id"] for r in received(httpserver)] == [event["event_id"]]


def _stream_record(event_name, item):
    return {
        "eventID": "1",
        "eventName": event_name,
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "eventSourceARN": "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x",
        "dynamodb": {
            "ApproximateCreationDateTime": 1700000000,
            "Keys": {k: item[k] for k in ("PK", "SK")},
            "NewImage": item,
            "SequenceNumber": "1",
            "SizeBytes": 10,
            "StreamViewType": "NEW_IMAGE",
        },
    }


def test_the_table_stream_and_the_schedule_send_due_events(httpserver):
    from chalice.test import Client

    from app import app

    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("")
    now = clock.now()
    first = write_event(now=now)
    with Client(app) as client:
        client.lambda_.invoke("table_stream", {"Records": [_stream_record("INSERT", table.to_item(first))]})
        assert stored(first)["status"] == "DELIVERED"
        # The dispatcher's own writes (a claim, an attempt) do not wake it; the schedule picks up the rest.
        second = write_event(data=delivery(8), now=now)
        client.lambda_.invoke("table_stream", {"Records": [_stream_record("MODIFY", table.to_item(stored(second)))]})
        assert stored(second)["status"] == "PENDING"
        client.lambda_.invoke(
            "background_schedule", client.events.generate_cw_event("aws.events", "Scheduled Event", {}, [])
        )
        assert stored(second)["status"] == "DELIVERED"


def test_the_stream_sends_a_new_event_the_index_does_not_show_yet(httpserver, monkeypatch):
    from chalice.test import Client

    from app import app

    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("")
    event = write_event(now=clock.now())
    monkeypatch.setattr(events, "due", lambda now, limit: [])  # the index lags behind the table
    with Client(app) as client:
        client.lambda_.invoke("table_stream", {"Records": [_stream_record("INSERT", table.to_item(event))]})
    assert [r.headers["webhook-id"] for r in received(httpserver)] == [event["event_id"]]
    assert stored(event)["status"] == "DELIVERED"


def test_due_events_leave_the_index_once_delivered(httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("")
    write_event()
    dispatch_at(T0)
    index = table.client().query(
        TableName=table.name(),
        IndexName=keys.GSI1,
        KeyConditionExpression="GSI1PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.OUTBOX_PENDING),
    )
    assert index["Items"] == []


def test_a_failure_in_the_stream_handler_does_not_fail_the_batch(monkeypatch):
    from chalice.test import Client

    from app import app

    def broken(*args, **kwargs):
        raise RuntimeError("DynamoDB is unreachable")

    monkeypatch.setattr(dispatcher, "dispatch_new", broken)
    event = write_event(now=clock.now())
    with Client(app) as client:
        client.lambda_.invoke("table_stream", {"Records": [_stream_record("INSERT", table.to_item(event))]})
    assert stored(event)["status"] == "PENDING"  # still there for the schedule
