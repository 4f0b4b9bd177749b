"""GET /account/webhook-deliveries: what was sent, how it went, what waits (decisions §10)."""

import datetime as dt

import pytest

from chalicelib.service import event_sending as sending
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.jobs.support import (
    T0,
    configure,
    delivery,
    dispatch_at,
    local_receivers,  # noqa: F401 - a fixture
    write_event,
)

pytestmark = pytest.mark.usefixtures("local_receivers", "fake_clock")

PATH = "/account/webhook-deliveries"


def test_no_events_is_an_empty_list_without_cursor(api):
    response = api.get(PATH)
    assert response.status_code == 200
    assert response.data == {"webhook_deliveries": []}


def test_each_event_shows_its_attempts_and_state_newest_first(api, httpserver):
    configure(url=httpserver.url_for("/hook"))
    httpserver.expect_oneshot_request("/hook").respond_with_data("", status=200)
    httpserver.expect_request("/hook").respond_with_data("", status=500)
    delivered = write_event(data=delivery(7), now=T0)
    pending = write_event(event_type="cancel-delivery", data=delivery(8, "CANCELLED"), now=T0 + dt.timedelta(seconds=1))
    dispatch_at(T0 + dt.timedelta(seconds=2))

    response = api.get(PATH)

    assert response.status_code == 200
    newest, oldest = response.data["webhook_deliveries"]
    assert newest["id"] == pending["event_id"]
    assert newest["type"] == "cancel-delivery"
    assert newest["status"] == "PENDING"
    assert newest["delivery_id"] == 8
    assert newest["created_at"] == "2025-03-03T09:00:01.000Z"
    (attempt,) = newest["attempts"]
    assert attempt["status_code"] == 500 and "error" not in attempt
    assert isinstance(attempt["duration_ms"], int) and attempt["at"].startswith("2025-03-03T09:00:02")
    assert newest["next_attempt_at"] > attempt["at"]
    assert oldest["id"] == delivered["event_id"] and oldest["status"] == "DELIVERED"
    assert oldest["attempts"][0]["status_code"] == 200
    assert "next_attempt_at" not in oldest
    for entry in (newest, oldest):
        assert set(entry) <= {"id", "type", "status", "created_at", "delivery_id", "attempts", "next_attempt_at"}
        assert "body" not in entry and "data" not in entry


def test_an_event_never_attempted_has_no_attempts_and_is_due(api):
    event = write_event(now=T0)
    (entry,) = api.get(PATH).data["webhook_deliveries"]
    assert entry == {
        "id": event["event_id"],
        "type": "request-delivery",
        "status": "PENDING",
        "created_at": "2025-03-03T09:00:00.000Z",
        "delivery_id": 7,
        "attempts": [],
        "next_attempt_at": "2025-03-03T09:00:00.000Z",
    }


def test_a_failed_event_shows_its_errors(api, monkeypatch):
    monkeypatch.setattr(sending.policy, "RETRY_WINDOW", dt.timedelta(0))  # give up after the first attempt
    write_event(now=T0)
    dispatch_at(T0)
    (entry,) = api.get(PATH).data["webhook_deliveries"]
    assert entry["status"] == "FAILED"
    assert entry["attempts"][0]["error"] == "no receiver"
    assert "status_code" not in entry["attempts"][0]
    assert "next_attempt_at" not in entry


def test_the_list_is_paged(api):
    written = [write_event(data=delivery(n), now=T0 + dt.timedelta(seconds=n)) for n in range(1, 6)]
    first = api.get(PATH + "?limit=2")
    assert first.status_code == 200
    assert len(first.data["webhook_deliveries"]) == 2 and first.data["cursor"]
    seen = [e["id"] for e in first.data["webhook_deliveries"]]
    cursor = first.data["cursor"]
    while cursor:
        page = api.get(f"{PATH}?limit=2&cursor={cursor}").data
        seen += [e["id"] for e in page["webhook_deliveries"]]
        cursor = page.get("cursor")
    assert seen == [e["event_id"] for e in reversed(written)]


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=x", "cursor=tampered"])
def test_bad_paging_parameters_are_400(api, query):
    response = api.get(f"{PATH}?{query}")
    assert response.status_code == 400
    assert problem_paths(response) in (["limit"], ["cursor"])


def test_a_cursor_of_another_account_is_refused(api):
    for n in range(3):
        write_event("other", data=delivery(n + 1), now=T0 + dt.timedelta(seconds=n))
    cursor = api.get(PATH + "?limit=1", token=OTHER_TOKEN).data["cursor"]
    assert api.get(f"{PATH}?cursor={cursor}").status_code == 400


def test_accounts_see_only_their_own_events(api):
    write_event("other")
    assert api.get(PATH).data == {"webhook_deliveries": []}
    assert len(api.get(PATH, token=OTHER_TOKEN).data["webhook_deliveries"]) == 1
