"""GET /account/events and POST /account/events/:id/resend (decisions §10)."""

import datetime as dt
import json

import pytest

from chalicelib.domain.timestamps import iso
from chalicelib.service import clock
from chalicelib.service import event_sending as sending
from chalicelib.store import table
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.jobs.support import (
    T0,
    configure,
    delivery,
    dispatch_at,
    local_receivers,  # noqa: F401 - a fixture
    stored,
    write_event,
)
from tests.problems import assert_problem

pytestmark = pytest.mark.usefixtures("local_receivers", "fake_clock")

PATH = "/account/events"


def test_no_events_is_an_empty_list_without_cursor(api):
    response = api.get(PATH)
    assert response.status_code == 200
    assert response.data == {"events": []}


def test_a_new_event_shows_its_state_and_no_attempt(api):
    event = write_event(now=T0)
    assert api.get(PATH).data == {
        "events": [
            {
                "id": event["event_id"],
                "type": "request-delivery",
                "delivery_id": 7,
                "sequence": 1,
                "status": "PENDING",
                "attempts": 0,
                "created": "2025-03-03T09:00:00.000Z",
                "next_attempt_at": "2025-03-03T09:00:00.000Z",
            }
        ]
    }


def test_events_are_listed_newest_first_with_their_last_answer(api, httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_oneshot_request("/hook").respond_with_data("", status=201)
    httpserver.expect_request("/hook").respond_with_data("", status=500)
    delivered = write_event(data=delivery(7), now=T0)
    pending = write_event(event_type="cancel-delivery", data=delivery(7, "CANCELLED"), now=T0 + dt.timedelta(seconds=1))
    dispatch_at(T0 + dt.timedelta(seconds=2))

    newest, oldest = api.get(PATH).data["events"]

    assert list(newest) == [
        "id",
        "type",
        "delivery_id",
        "sequence",
        "status",
        "attempts",
        "created",
        "last_status_code",
        "next_attempt_at",
    ]
    assert newest["id"] == pending["event_id"] and newest["type"] == "cancel-delivery"
    assert newest["status"] == "PENDING" and newest["attempts"] == 1 and newest["last_status_code"] == 500
    assert newest["next_attempt_at"].startswith("2025-03-03T09:00:32.")  # 30 s after the attempt at 09:00:02
    assert oldest == {
        "id": delivered["event_id"],
        "type": "request-delivery",
        "delivery_id": 7,
        "sequence": 2,  # 1 was the webhook settings' own change
        "status": "DELIVERED",
        "attempts": 1,
        "created": "2025-03-03T09:00:00.000Z",
        "last_status_code": 201,
    }


def test_a_failed_event_shows_why(api, monkeypatch):
    monkeypatch.setenv("ALLOW_PRIVATE_WEBHOOK_HOSTS", "false")
    configure(url="http://127.0.0.1:9/hook")
    write_event(now=T0)
    dispatch_at(T0)
    (entry,) = api.get(PATH).data["events"]
    assert entry["status"] == "FAILED" and entry["attempts"] == 1
    assert entry["reason"].startswith("the receiver's address was refused: 127.0.0.1 resolves to 127.0.0.1")
    assert entry["last_error"].startswith("127.0.0.1 resolves to 127.0.0.1")
    assert "next_attempt_at" not in entry and "last_status_code" not in entry


def test_the_list_is_paged_newest_first(api):
    written = [write_event(data=delivery(n), now=T0 + dt.timedelta(seconds=n)) for n in range(1, 6)]
    first = api.get(PATH + "?limit=2").data
    assert len(first["events"]) == 2 and first["cursor"]
    seen, cursor = [e["id"] for e in first["events"]], first["cursor"]
    while cursor:
        page = api.get(f"{PATH}?limit=2&cursor={cursor}").data
        seen += [e["id"] for e in page["events"]]
        cursor = page.get("cursor")
    assert seen == [e["event_id"] for e in reversed(written)]
    assert "cursor" not in api.get(PATH + "?limit=5").data


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=x", "cursor=tampered"])
def test_bad_paging_parameters_are_400(api, query):
    response = api.get(f"{PATH}?{query}")
    assert response.status_code == 400
    assert problem_paths(response) in (["limit"], ["cursor"])


def test_a_cursor_of_another_list_or_account_is_refused(api):
    for n in range(3):
        write_event("other", data=delivery(n + 1), now=T0 + dt.timedelta(seconds=n))
        write_event("acme", data=delivery(n + 1), now=T0 + dt.timedelta(seconds=n))
    foreign = api.get(PATH + "?limit=1", token=OTHER_TOKEN).data["cursor"]
    assert api.get(f"{PATH}?cursor={foreign}").status_code == 400
    other_list = api.get("/account/webhook-deliveries?limit=1").data["cursor"]
    assert api.get(f"{PATH}?cursor={other_list}").status_code == 400


def test_accounts_see_only_their_own_events(api):
    write_event("other")
    assert api.get(PATH).data == {"events": []}
    assert len(api.get(PATH, token=OTHER_TOKEN).data["events"]) == 1


def resend(api, event, token=...):
    return api.post(f"{PATH}/{event['event_id']}/resend", token=token)


def send_due() -> dict:
    """The dispatcher's next poll (in `make run` every 0.5 s; in AWS the stream wakes it)."""
    return dispatch_at(clock.now())


def test_resend_answers_at_once_and_the_dispatcher_makes_the_attempt_with_the_same_idempotency_key(api, httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("", status=200)
    event = write_event(now=T0)
    dispatch_at(T0)
    assert stored(event)["status"] == "DELIVERED"

    response = resend(api, event)

    assert response.status_code == 202
    assert response.data["id"] == event["event_id"]
    assert response.data["status"] == "DELIVERED" and response.data["attempts"] == 1  # queued, not yet sent
    assert len(httpserver.log) == 1  # nothing sent inside the request
    assert send_due()["delivered"] == 1
    first, second = [json.loads(request.get_data()) for request, _ in httpserver.log]
    assert first["idempotency_key"] == second["idempotency_key"] == event["event_id"]
    assert first == second
    listed = api.get(PATH).data["events"][0]
    assert listed["attempts"] == 2 and listed["status"] == "DELIVERED" and listed["last_status_code"] == 200
    assert send_due()["due"] == 0  # one attempt per resend


def test_resending_a_failed_event_to_a_working_receiver_delivers_it(api, httpserver, monkeypatch):
    monkeypatch.setattr(sending.policy, "RETRY_WINDOW", dt.timedelta(0))
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_oneshot_request("/hook").respond_with_data("", status=503)
    httpserver.expect_request("/hook").respond_with_data("", status=201)
    event = write_event(now=T0)
    dispatch_at(T0)
    assert stored(event)["status"] == "FAILED"

    assert resend(api, event).data["status"] == "FAILED"
    send_due()

    shown = api.get(PATH).data["events"][0]
    assert shown["status"] == "DELIVERED" and shown["attempts"] == 2
    assert "reason" not in shown and "last_error" not in shown


def test_a_resend_that_fails_leaves_a_delivered_event_delivered(api, httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_oneshot_request("/hook").respond_with_data("", status=200)
    httpserver.expect_request("/hook").respond_with_data("", status=500)
    event = write_event(now=T0)
    dispatch_at(T0)
    resend(api, event)
    assert send_due()["resend_failed"] == 1
    shown = api.get(PATH).data["events"][0]
    assert shown["status"] == "DELIVERED" and shown["attempts"] == 2 and shown["last_status_code"] == 500
    assert send_due()["due"] == 0  # not retried: it was delivered before


def test_resend_without_a_webhook_records_a_failed_attempt_no_receiver(api):
    event = write_event(now=T0)
    response = resend(api, event)
    assert response.status_code == 202
    assert response.data["status"] == "PENDING" and response.data["attempts"] == 0
    send_due()
    shown = api.get(PATH).data["events"][0]
    assert shown["status"] == "PENDING" and shown["attempts"] == 1 and shown["last_error"] == "no receiver"
    assert stored(event)["attempt_log"][0]["error"] == "no receiver"


def test_the_stream_wakes_the_dispatcher_for_a_queued_resend(api):
    from chalicelib.service import background

    event = write_event(now=T0)
    resend(api, event)
    image = table.to_item(stored(event))
    woken = background.woken("MODIFY", image)
    assert woken.event is not None and woken.event["event_id"] == event["event_id"] and "PK" not in woken.event
    settled = {k: v for k, v in stored(event).items() if k not in ("resends", "GSI1PK", "GSI1SK")}
    assert background.woken("MODIFY", table.to_item(settled)).event is None  # an attempt recorded: no wake


def test_an_events_log_keeps_its_latest_20_attempts_resends_included_while_attempts_counts_all(api, httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("", status=200)
    event = write_event(now=T0)
    dispatch_at(T0)
    for n in range(24):
        clock.current().advance(1)
        assert resend(api, event).status_code == 202
        send_due()
    item = stored(event)
    assert item["attempts"] == 25
    assert len(item["attempt_log"]) == 20
    assert item["attempt_log"][-1]["at"] == iso(clock.now())  # the latest kept, the oldest dropped
    deliveries = api.get("/account/webhook-deliveries").data["webhook_deliveries"][0]
    assert len(deliveries["attempts"]) == 20
    assert api.get(PATH).data["events"][0]["attempts"] == 25


def test_each_accepted_resend_makes_its_own_attempt_and_the_61st_in_a_minute_is_429(api, httpserver):
    """Thirty resends in a row, all queued before the dispatcher runs, make thirty attempts (decisions §10)."""
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_request("/hook").respond_with_data("", status=200)
    event = write_event(now=T0)
    for n in range(30):
        assert resend(api, event).status_code == 202
    assert len(httpserver.log) == 0
    assert send_due()["delivered"] == sending.PER_TURN  # one turn's cap...
    assert send_due()["delivered"] == 30 - sending.PER_TURN  # ...and the rest in the next turn
    assert send_due()["due"] == 0
    assert len(httpserver.log) == 30
    assert {json.loads(request.get_data())["idempotency_key"] for request, _ in httpserver.log} == {event["event_id"]}
    shown = api.get(PATH).data["events"][0]
    assert shown["attempts"] == 30 and shown["status"] == "DELIVERED"
    assert len(stored(event)["attempt_log"]) == 20
    for n in range(30):
        assert resend(api, event).status_code == 202
    refused = resend(api, event)  # the 61st in the same minute
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
    while send_due()["due"]:
        pass
    assert len(httpserver.log) == 60
    assert api.get(PATH).data["events"][0]["attempts"] == 60


def test_at_most_60_resend_requests_per_account_in_any_60_seconds(api):
    event = write_event(now=T0)
    other = write_event("other", now=T0)
    start = clock.now()
    for n in range(60):
        clock.current().set(start + dt.timedelta(seconds=n / 2))  # 60 in the first 29.5 s
        assert resend(api, event).status_code == 202
    clock.current().set(start + dt.timedelta(seconds=59))
    refused = resend(api, event)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"  # the first leaves the window at start + 60 s
    assert refused.headers["Content-Type"] == "application/problem+json"
    assert_problem(refused, 429, "too-many-requests")
    assert "at most 60 resend requests per 60 seconds" in refused.data["detail"]
    assert resend(api, other, token=OTHER_TOKEN).status_code == 202  # another account's window is its own
    assert api.post(f"{PATH}/nope/resend").status_code == 404  # a 404 is not rate limited first...
    clock.current().set(start + dt.timedelta(seconds=59.9))
    assert resend(api, event).headers["Retry-After"] == "1"
    clock.current().set(start + dt.timedelta(seconds=60))
    assert resend(api, event).status_code == 202  # the first request left the window
    refused = resend(api, event)  # the second (start + 0.5 s) has not yet
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "1"
    clock.current().set(start + dt.timedelta(seconds=60.5))
    assert resend(api, event).status_code == 202


def test_refused_resends_do_not_count(api):
    event = write_event(now=T0)
    start = clock.now()
    for n in range(60):
        assert resend(api, event).status_code == 202
    for n in range(5):
        assert resend(api, event).status_code == 429
    clock.current().set(start + dt.timedelta(seconds=60))
    for n in range(60):  # the whole window is free again: the refused ones took no place
        assert resend(api, event).status_code == 202
    assert resend(api, event).status_code == 429


def test_resending_another_accounts_event_is_404(api):
    event = write_event("other")
    response = api.post(f"{PATH}/{event['event_id']}/resend")
    assert_problem(response, 404, "not-found")
    assert stored(event)["attempts"] == 0


@pytest.mark.parametrize("event_id", ["nope", "0" * 29, "1740992400000" + "g" * 16, "1740992400000abcdef0123456789"])
def test_resending_an_unknown_event_is_404(api, event_id):
    response = api.post(f"{PATH}/{event_id}/resend")
    assert response.status_code == 404
    assert response.data["detail"] == f"event {event_id} does not exist"


def test_both_operations_are_in_the_openapi_document(api):
    document = api.get("/openapi.json", token=None).data
    listed = document["paths"]["/account/events"]["get"]
    assert set(listed["responses"]) >= {"200", "400", "401", "403"}
    resend = document["paths"]["/account/events/{event_id}/resend"]["post"]
    assert "202" in resend["responses"] and "404" in resend["responses"] and "429" in resend["responses"]
    assert "Retry-After" in document["components"]["responses"]["Problem429"]["headers"]
    schema = document["components"]["schemas"]["Event"]
    assert {"id", "type", "delivery_id", "status", "attempts", "created", "last_status_code", "next_attempt_at"} <= set(
        schema["properties"]
    )
