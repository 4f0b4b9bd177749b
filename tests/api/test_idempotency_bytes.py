"""Idempotency-Key replays are the first answer byte for byte (decisions §11): status, body with its field order,
Content-Type, for every POST that takes a key."""

import pytest

from .deliveries_helpers import CONTACT, CUSTOMER, CUSTOMER_TOKEN, USER, place, put_customer, shop  # noqa: F401

# Given in an order unlike the response's, so only a replay rendered like the first answer matches it.
FULL_ADDRESS = {"country": "FI", "city": "Espoo", "zip": "00200", "address2": "Gate B", "address1": "Dock 4"}
CSV_FILE = b"Item ID;Item name;Category name\ncola;Cola;Soft drinks\n"


def twice(api, path, body=None, key="b-1", **kw):
    headers = {"Idempotency-Key": key, **kw.pop("headers", {})}
    first = api.request("POST", path, body, headers=headers, **kw)
    again = api.request("POST", path, body, headers=headers, **kw)
    assert again.headers.get("Idempotent-Replayed") == "true"
    return first, again


def assert_same_bytes(first, again):
    assert again.status_code == first.status_code
    assert again.headers["Content-Type"] == first.headers["Content-Type"]
    assert again.body == first.body


def profile_read_back_in_another_order():
    """DynamoDB hands a stored map back in its own order (moto keeps the written one): the customer's profile
    as DynamoDB may give it."""
    put_customer(CUSTOMER, contact=dict(reversed(CONTACT.items())), address=FULL_ADDRESS, company="Bar Oy")


def test_a_replayed_order_with_full_addresses_is_the_first_answer_byte_for_byte(shop):
    profile_read_back_in_another_order()
    body = {
        "items": [{"id": "beer", "count": 1, "message": "cold"}],
        "user": USER,
        "company": "Bar Oy Espoo",
        "cost_center": "CC-1",
        "address": FULL_ADDRESS,
        "message": "back door",
    }
    first, again = twice(shop, "/customer/deliveries", body, token=CUSTOMER_TOKEN)
    assert first.status_code == 200
    assert_same_bytes(first, again)


def test_a_replayed_response_and_cancel_are_the_first_answer_byte_for_byte(shop):
    profile_read_back_in_another_order()
    delivery = place(shop, [{"id": "beer", "count": 1}], address=FULL_ADDRESS, company="Bar Oy Espoo")
    response = {"type": "ACCEPT", "reference": "R", "message": "ok"}
    first, again = twice(shop, f"/deliveries/{delivery['id']}/responses", response, key="r-1")
    assert first.status_code == 200
    assert_same_bytes(first, again)
    first, again = twice(
        shop, f"/customer/deliveries/{delivery['id']}/cancel", {"message": "oops"}, key="c-1", token=CUSTOMER_TOKEN
    )
    assert first.status_code == 200
    assert_same_bytes(first, again)


def test_a_replayed_product_and_category_post_are_the_first_answer_byte_for_byte(shop):
    product = {
        "name": "Green Tea",
        "status": "ACTIVE",
        "id": "tea",
        "category": "drinks",
        "vessel": {"unit": "l", "size": 0.5},
    }
    first, again = twice(shop, "/products", product, key="p-1")
    assert first.status_code == 200
    assert_same_bytes(first, again)


@pytest.mark.parametrize("query", ["", "?dry_run=true"])
def test_a_replayed_import_is_the_first_answer_byte_for_byte(api, query):
    headers = {"Content-Type": "text/csv; charset=utf-8"}
    first, again = twice(api, f"/imports/products{query}", raw=CSV_FILE, key="i-1", headers=headers)
    assert first.status_code == 202
    assert_same_bytes(first, again)


def test_a_replayed_error_keeps_its_status_and_content_type(shop):
    first, again = twice(shop, "/customer/deliveries", {"items": [], "user": USER}, token=CUSTOMER_TOKEN)
    assert first.status_code == 400
    assert (again.status_code, again.headers["Content-Type"]) == (400, "application/problem+json")


# A repeated query parameter counts as its last value, as the service reads it (decisions §11).
def upload(api, query, key="q-1"):
    headers = {"Content-Type": "text/csv; charset=utf-8", "Idempotency-Key": key}
    return api.request("POST", f"/imports/products{query}", raw=CSV_FILE, headers=headers)


def test_a_repeated_parameter_is_read_as_its_last_value(api):
    dry = upload(api, "?dry_run=false&dry_run=true")
    assert (dry.status_code, dry.data["dry_run"]) == (202, True)
    real = upload(api, "?dry_run=true&dry_run=false")
    assert (real.status_code, real.data["type"]) == (400, "conflict")
    same = upload(api, "?dry_run=true")  # the request the service read the first time
    assert (same.status_code, same.headers.get("Idempotent-Replayed")) == (202, "true")
    assert same.body == dry.body


def test_repeated_parameters_in_another_order_are_the_same_request(api):
    first = upload(api, "?note=a&dry_run=false&dry_run=true")
    again = upload(api, "?dry_run=false&dry_run=true&note=a")
    assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (202, "true")
    assert again.body == first.body


def test_an_import_records_its_answer_in_the_write_that_queues_it(api, monkeypatch):
    """A request that dies right after queueing the import: the key's claim is taken over after 60 s, and the
    retry replays the first answer instead of queueing the import again (decisions §11)."""
    import datetime as dt

    from chalicelib.service import idempotency
    from tests.conftest import clock_at

    clock = clock_at(monkeypatch, dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc))

    def crash(*args, **kwargs):
        raise RuntimeError("the process dies after the queueing write")

    monkeypatch.setattr(idempotency, "finish", crash)
    monkeypatch.setattr(idempotency, "abandon", crash)
    with pytest.raises(RuntimeError):
        first = upload(api, "")
        assert first.status_code == 500  # the test client may answer instead of raising
        raise RuntimeError
    (queued,) = api.get("/imports/products").data["imports"]
    monkeypatch.undo()
    clock = clock_at(monkeypatch, clock.now() + dt.timedelta(seconds=61))  # the claim may now be taken over
    retried = upload(api, "")
    assert (retried.status_code, retried.headers.get("Idempotent-Replayed")) == (202, "true")
    assert retried.data["id"] == queued["id"]
    assert retried.headers["Location"] == f"/imports/products/{queued['id']}"
    assert [i["id"] for i in api.get("/imports/products").data["imports"]] == [queued["id"]]


def test_a_resend_records_its_answer_in_the_write_that_queues_it(api, monkeypatch):
    """A resend request that dies right after queueing: its answer is recorded, so the retry after the claim could
    be taken over (60 s) replays it byte for byte and the event gets one attempt, not two (decisions §10, §11)."""
    import datetime as dt

    from chalicelib.service import idempotency
    from tests.conftest import clock_at
    from tests.jobs.support import T0, dispatch_at, local_receivers, write_event  # noqa: F401

    monkeypatch.setenv("ALLOW_PRIVATE_WEBHOOK_HOSTS", "true")
    clock = clock_at(monkeypatch, T0)
    event = write_event(now=T0)
    path = f"/account/events/{event['event_id']}/resend"

    def crash(*args, **kwargs):
        raise RuntimeError("the process dies after the queueing write")

    monkeypatch.setattr(idempotency, "finish", crash)
    monkeypatch.setattr(idempotency, "abandon", crash)
    with pytest.raises(RuntimeError):
        first = api.post(path, headers={"Idempotency-Key": "r-1"})
        assert first.status_code == 500  # the test client may answer instead of raising
        raise RuntimeError
    monkeypatch.undo()
    clock = clock_at(monkeypatch, T0 + dt.timedelta(seconds=61))  # the claim may now be taken over
    (listed,) = api.get("/account/events").data["events"]
    retried = api.post(path, headers={"Idempotency-Key": "r-1"})
    assert (retried.status_code, retried.headers.get("Idempotent-Replayed")) == (202, "true")
    assert retried.headers["Content-Type"] == "application/json"
    assert list(retried.data) == list(listed)  # the event's field order, as every answer of it
    assert (
        retried.data
        == listed
        == {
            "id": event["event_id"],
            "type": "request-delivery",
            "delivery_id": 7,
            "sequence": 1,
            "status": "PENDING",
            "attempts": 0,
            "created": "2025-03-03T09:00:00.000Z",
            "next_attempt_at": "2025-03-03T09:00:00.000Z",
        }
    )
    again = api.post(path, headers={"Idempotency-Key": "r-1"})
    assert_same_bytes(retried, again)
    dispatch_at(clock.now())  # no receiver: the attempt is recorded as failed, "no receiver"
    assert dispatch_at(clock.now())["due"] == 0
    (after,) = api.get("/account/events").data["events"]
    assert after["attempts"] == 1
