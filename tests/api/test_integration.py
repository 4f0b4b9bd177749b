"""The integration state of deliveries over HTTP (decisions §14): who sees it, PUT, re-pending, the worklist,
the account's counts. The races and the counts under a concurrent workload: tests/store/test_integration_store.py."""

import datetime as dt

import pytest

from chalicelib.domain import limits
from chalicelib.domain.delivery import Delivery, DeliveryList, PlacedDeliveries, SupplierDelivery, SupplierDeliveryList
from chalicelib.domain.integration import Integration, IntegrationOverview
from chalicelib.service import clock
from chalicelib.store import deliveries as delivery_store
from chalicelib.store import table

from ..conftest import OTHER_TOKEN
from ..transactions import cancelled, intercept
from .deliveries_helpers import CUSTOMER_TOKEN, NOW, assert_shape, place, respond, shop  # noqa: F401
from .test_deliveries_customer import events

LATER = NOW + dt.timedelta(minutes=5)
ISO_NOW, ISO_LATER = "2026-05-04T09:30:00.000Z", "2026-05-04T09:35:00.000Z"


def at(monkeypatch, moment):
    monkeypatch.setattr(clock, "now", lambda: moment)


def put(api, delivery_id, body, **kw):
    return api.put(f"/deliveries/{delivery_id}/integration", body=body, **kw)


def paths(response):
    return [error["path"] for error in response.data["errors"]]


def beer(api) -> dict:
    return place(api, [{"id": "beer", "count": 1}])


def cancel(api, delivery_id):
    response = api.post(f"/customer/deliveries/{delivery_id}/cancel", body={}, token=CUSTOMER_TOKEN)
    assert response.status_code == 200, response.data
    return response


def receive(api, delivery_id):
    response = api.post(f"/customer/deliveries/{delivery_id}/receive", body={}, token=CUSTOMER_TOKEN)
    assert response.status_code == 200, response.data
    return response


def worklist(api, state, **query):
    extra = "".join(f"&{k}={v}" for k, v in query.items())
    response = api.get(f"/deliveries?integration={state}{extra}")
    assert response.status_code == 200, response.data
    return response


def ids(response):
    return [d["id"] for d in response.data["deliveries"]]


def overview(api):
    response = api.get("/account/integration")
    assert response.status_code == 200, response.data
    assert_shape(IntegrationOverview, response)
    return response.data


# --- who sees it ---


def test_supplier_reads_carry_the_state_after_the_interface_fields(shop):
    delivery = beer(shop)
    single = shop.get(f"/deliveries/{delivery['id']}")
    listed = shop.get("/deliveries")
    by_status = shop.get("/deliveries?status=REQUESTED")
    answered = respond(shop, delivery["id"], {"type": "ACCEPT"})
    for response in (single, answered):
        assert_shape(SupplierDelivery, response)
        assert list(response.data)[-1] == "integration"
        assert response.data["integration"] == {"status": "PENDING"}
    for response in (listed, by_status):
        assert_shape(SupplierDeliveryList, response)
        assert list(response.data["deliveries"][0])[-1] == "integration"
        assert response.data["deliveries"][0]["integration"] == {"status": "PENDING"}


def test_every_supplier_list_shows_the_stored_state_as_the_single_read_does(shop, monkeypatch):
    """Lists join stored texts and append the state kept beside them: its fields in the order of decisions §3,
    whatever order DynamoDB hands the map back in, and the same object the single read shows."""
    delivery = beer(shop)
    at(monkeypatch, LATER)
    failed = {"message": "unknown article", "reference": "ERP-7", "status": "FAILED"}  # sent in another order
    assert put(shop, delivery["id"], failed).status_code == 200
    expected = {"status": "FAILED", "reference": "ERP-7", "message": "unknown article", "updated": ISO_LATER}
    single = shop.get(f"/deliveries/{delivery['id']}").data
    assert single["integration"] == expected and list(single["integration"]) == list(expected)
    for path in ("/deliveries", "/deliveries?status=REQUESTED", "/deliveries?integration=FAILED"):
        response = shop.get(path)
        assert_shape(SupplierDeliveryList, response)
        (listed,) = response.data["deliveries"]
        assert list(listed)[-1] == "integration", path
        assert list(listed["integration"]) == list(expected), path
        assert listed == {**single, "request": {k: v for k, v in single["request"].items() if k != "items"}}, path
    own = shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).data["deliveries"]
    assert own == [{k: v for k, v in listed.items() if k != "integration"}]


def test_customers_webhook_events_and_the_order_file_never_see_it(shop):
    placed = shop.post(
        "/customer/deliveries",
        body={"items": [{"id": "beer", "count": 1}], "user": {"name": "O", "email": "o@example.com"}},
        token=CUSTOMER_TOKEN,
    )
    assert_shape(PlacedDeliveries, placed)  # refuses unknown fields: no `integration`
    delivery_id = placed.data["deliveries"][0]["id"]
    assert put(shop, delivery_id, {"status": "IMPORTED", "reference": "ERP-SECRET-REF"}).status_code == 200
    own = shop.get(f"/customer/deliveries/{delivery_id}", token=CUSTOMER_TOKEN)
    own_list = shop.get("/customer/deliveries", token=CUSTOMER_TOKEN)
    cancelled = cancel(shop, delivery_id)
    assert_shape(Delivery, own)
    assert_shape(DeliveryList, own_list)
    assert_shape(Delivery, cancelled)
    for body in (own.data, own_list.data["deliveries"][0], cancelled.data):
        assert "integration" not in body
    for event in events():
        assert event["type"] in ("request-delivery", "cancel-delivery")
        assert "integration" not in event["data"]
    from ..conftest import SUPPLIER_TOKEN

    order_file = shop.client.http.get(
        f"/deliveries/{delivery_id}/csv", headers={"Accept": "text/csv", "Authorization": f"token {SUPPLIER_TOKEN}"}
    )
    assert order_file.status_code == 200
    assert b"ERP-SECRET-REF" not in order_file.body and b"PENDING" not in order_file.body


# --- PUT /deliveries/:id/integration ---


def test_put_answers_the_state_with_the_service_time(shop, monkeypatch):
    delivery = beer(shop)
    at(monkeypatch, LATER)
    response = put(shop, delivery["id"], {"status": "IMPORTED", "reference": "ERP-1"})
    assert response.status_code == 200
    assert_shape(Integration, response)
    assert response.data == {"status": "IMPORTED", "reference": "ERP-1", "updated": ISO_LATER}
    assert list(response.data) == ["status", "reference", "updated"]
    assert shop.get(f"/deliveries/{delivery['id']}").data["integration"] == response.data


def test_put_replaces_the_state(shop):
    delivery = beer(shop)
    put(shop, delivery["id"], {"status": "FAILED", "reference": "ERP-1", "message": "unknown article beer"})
    response = put(shop, delivery["id"], {"status": "IMPORTED"})
    assert response.data == {"status": "IMPORTED", "updated": ISO_NOW}  # reference and message removed
    assert shop.get(f"/deliveries/{delivery['id']}").data["integration"] == response.data


def test_the_same_state_again_changes_nothing(shop, monkeypatch):
    delivery = beer(shop)
    body = {"status": "FAILED", "reference": "ERP-1", "message": "customer missing in the ERP"}
    first = put(shop, delivery["id"], body)
    version = delivery_store.get("acme", delivery["id"]).version
    at(monkeypatch, LATER)
    calls = []
    table.client().meta.events.register("before-call.dynamodb", lambda model, **kw: calls.append(model.name))
    again = put(shop, delivery["id"], body)
    assert (again.status_code, again.data) == (200, first.data)
    assert again.data["updated"] == ISO_NOW
    assert "UpdateItem" not in calls and "TransactWriteItems" not in calls
    assert delivery_store.get("acme", delivery["id"]).version == version
    changed = put(shop, delivery["id"], {**body, "message": "customer still missing"})
    assert changed.data["updated"] == ISO_LATER


def test_reference_and_message_at_their_limits(shop):
    delivery = beer(shop)
    longest = {"status": "FAILED", "reference": "R" * 128, "message": "m" * 2000}
    assert put(shop, delivery["id"], longest).status_code == 200
    too_long = put(shop, delivery["id"], {"status": "FAILED", "reference": "R" * 129, "message": "m" * 2001})
    assert too_long.status_code == 400
    assert too_long.headers["Content-Type"] == "application/problem+json"
    assert sorted(paths(too_long)) == ["message", "reference"]
    assert shop.get(f"/deliveries/{delivery['id']}").data["integration"]["reference"] == "R" * 128


@pytest.mark.parametrize("message", [None, "", "   ", "\n\t"])
def test_failed_needs_a_message_that_is_not_blank(shop, message):
    delivery = beer(shop)
    body = {"status": "FAILED"} if message is None else {"status": "FAILED", "message": message}
    response = put(shop, delivery["id"], body)
    assert (response.status_code, response.data["type"], paths(response)) == (400, "validation-error", ["message"])
    assert shop.get(f"/deliveries/{delivery['id']}").data["integration"] == {"status": "PENDING"}
    assert put(shop, delivery["id"], {"status": "FAILED", "message": "x"}).status_code == 200


def test_every_wrong_field_is_named(shop):
    delivery = beer(shop)
    response = put(shop, delivery["id"], {"status": "FAILED", "message": " ", "reference": "R" * 129, "note": 1})
    assert response.status_code == 400
    assert sorted(paths(response)) == ["message", "note", "reference"]
    wrong = put(shop, delivery["id"], {"status": "DONE", "reference": 7})
    assert sorted(paths(wrong)) == ["reference", "status"]
    assert paths(put(shop, delivery["id"], {})) == ["status"]
    assert put(shop, delivery["id"], {"status": "IMPORTED", "message": " "}).status_code == 200  # only FAILED needs one


def test_unknown_foreign_and_malformed_deliveries_are_404(shop):
    delivery = beer(shop)
    for delivery_id, token in (("99", ...), (str(delivery["id"]), OTHER_TOKEN), ("01", ...), ("abc", ...)):
        response = put(shop, delivery_id, {"status": "IMPORTED"}, token=token)
        assert (response.status_code, response.data["type"]) == (404, "not-found"), delivery_id
    assert shop.get(f"/deliveries/{delivery['id']}").data["integration"] == {"status": "PENDING"}


def test_customers_may_not_set_it(shop):
    delivery = beer(shop)
    response = put(shop, delivery["id"], {"status": "IMPORTED"}, token=CUSTOMER_TOKEN)
    assert response.status_code == 403
    assert shop.get("/account/integration", token=CUSTOMER_TOKEN).status_code == 403
    assert shop.get(f"/deliveries/{delivery['id']}").data["integration"] == {"status": "PENDING"}


def test_any_state_follows_any_other_in_any_delivery_status(shop):
    requested = beer(shop)
    accepted = beer(shop)
    respond(shop, accepted["id"], {"type": "ACCEPT"})
    rejected = beer(shop)
    respond(shop, rejected["id"], {"type": "REJECT"})
    cancelled = beer(shop)
    cancel(shop, cancelled["id"])
    delivered = beer(shop)
    receive(shop, delivered["id"])
    steps = ["IMPORTED", "FAILED", "PENDING", "FAILED", "IMPORTED", "PENDING", "IMPORTED"]
    for delivery in (requested, accepted, rejected, cancelled, delivered):
        for state in steps:
            body = {"status": state, "message": "why"} if state == "FAILED" else {"status": state}
            response = put(shop, delivery["id"], body)
            assert (response.status_code, response.data["status"]) == (200, state)
    assert overview(shop) == {"pending": 0, "failed": 0, "oldest_pending": None}


# --- PENDING when requested and after every customer change ---


@pytest.mark.parametrize("action", [cancel, receive])
def test_a_customer_change_makes_it_pending_again(shop, monkeypatch, action):
    delivery = beer(shop)
    put(shop, delivery["id"], {"status": "FAILED", "reference": "ERP-7", "message": "no such article"})
    at(monkeypatch, LATER)
    action(shop, delivery["id"])
    assert shop.get(f"/deliveries/{delivery['id']}").data["integration"] == {
        "status": "PENDING",
        "reference": "ERP-7",
        "updated": ISO_LATER,
    }
    assert overview(shop) == {"pending": 1, "failed": 0, "oldest_pending": {"id": delivery["id"], "since": ISO_LATER}}


def test_supplier_responses_leave_it_alone(shop):
    delivery = beer(shop)
    imported = put(shop, delivery["id"], {"status": "IMPORTED", "reference": "ERP-1"}).data
    for body in ({"type": "ACCEPT"}, {"type": "UPDATE", "message": "later"}, {"type": "REJECT"}):
        response = respond(shop, delivery["id"], body)
        assert response.data["integration"] == imported
    assert ids(worklist(shop, "IMPORTED")) == [delivery["id"]]


def test_a_replayed_response_answers_the_state_it_had(shop):
    delivery = beer(shop)
    headers = {"Idempotency-Key": "resp-1"}
    first = respond(shop, delivery["id"], {"type": "ACCEPT"}, headers=headers)
    put(shop, delivery["id"], {"status": "IMPORTED"})
    replay = respond(shop, delivery["id"], {"type": "ACCEPT"}, headers=headers)
    assert replay.headers.get("Idempotent-Replayed") == "true"
    assert replay.data == first.data and replay.data["integration"] == {"status": "PENDING"}


# --- the worklist ---


def test_the_worklist_is_oldest_first_by_entering_the_state(shop, monkeypatch):
    first, second, third = beer(shop), beer(shop), beer(shop)
    assert ids(worklist(shop, "PENDING")) == [first["id"], second["id"], third["id"]]
    at(monkeypatch, NOW + dt.timedelta(minutes=1))
    put(shop, third["id"], {"status": "IMPORTED"})
    at(monkeypatch, NOW + dt.timedelta(minutes=2))
    put(shop, first["id"], {"status": "IMPORTED"})
    at(monkeypatch, NOW + dt.timedelta(minutes=3))
    put(shop, third["id"], {"status": "IMPORTED", "reference": "ERP-3"})  # the same state: keeps its place
    assert ids(worklist(shop, "IMPORTED")) == [third["id"], first["id"]]
    assert ids(worklist(shop, "PENDING")) == [second["id"]]
    at(monkeypatch, NOW + dt.timedelta(minutes=4))
    cancel(shop, first["id"])  # pending again: at the end
    assert ids(worklist(shop, "PENDING")) == [second["id"], first["id"]]
    at(monkeypatch, NOW + dt.timedelta(minutes=5))
    cancel(shop, second["id"])  # a pending delivery the customer changes moves to the end too
    assert ids(worklist(shop, "PENDING")) == [first["id"], second["id"]]
    assert ids(worklist(shop, "IMPORTED")) == [third["id"]]
    assert ids(worklist(shop, "FAILED")) == []
    listed = worklist(shop, "PENDING")
    assert_shape(SupplierDeliveryList, listed)
    assert [d["integration"]["status"] for d in listed.data["deliveries"]] == ["PENDING", "PENDING"]


def test_the_worklist_pages_are_full_and_a_reader_paging_forward_meets_a_re_pended_delivery(shop, monkeypatch):
    placed = [beer(shop)["id"] for _ in range(5)]
    page = worklist(shop, "PENDING", limit=2)
    assert ids(page) == placed[:2] and page.data["cursor"]
    at(monkeypatch, LATER)
    put(shop, placed[0], {"status": "IMPORTED"})
    cancel(shop, placed[0])  # changed by the customer behind the reader: it comes again at the end
    seen = ids(page)
    cursor = page.data["cursor"]
    while cursor:
        page = worklist(shop, "PENDING", limit=2, cursor=cursor)
        seen += ids(page)
        cursor = page.data.get("cursor")
        assert len(ids(page)) == 2 or cursor is None
    assert seen == placed + [placed[0]]


def test_a_worklist_cursor_is_bound_to_its_state(shop):
    for _ in range(3):
        beer(shop)
    cursor = worklist(shop, "PENDING", limit=1).data["cursor"]
    assert worklist(shop, "PENDING", limit=1, cursor=cursor).status_code == 200
    for query in (f"?integration=IMPORTED&cursor={cursor}", f"?cursor={cursor}", f"?status=REQUESTED&cursor={cursor}"):
        response = shop.get(f"/deliveries{query}")
        assert (response.status_code, paths(response)) == (400, ["cursor"]), query
    status_cursor = shop.get("/deliveries?status=REQUESTED&limit=1").data["cursor"]
    response = shop.get(f"/deliveries?integration=PENDING&cursor={status_cursor}")
    assert (response.status_code, paths(response)) == (400, ["cursor"])


def test_the_filter_is_one_state_and_not_with_status(shop):
    beer(shop)
    both = shop.get("/deliveries?integration=PENDING&status=REQUESTED")
    assert (both.status_code, both.data["type"], sorted(paths(both))) == (
        400,
        "validation-error",
        ["integration", "status"],
    )
    for value in ("pending", "", "DONE", "PENDING,FAILED"):
        response = shop.get(f"/deliveries?integration={value}")
        assert (response.status_code, paths(response)) == (400, ["integration"]), value
    assert ids(shop.get("/deliveries?status=REQUESTED")) == [1]


def test_every_wrong_query_parameter_of_the_list_is_named_at_once(shop):
    beer(shop)
    response = shop.get("/deliveries?limit=0&status=DONE&integration=done")
    assert (response.status_code, sorted(paths(response))) == (400, ["integration", "limit", "status"])
    response = shop.get("/deliveries?cursor=&integration=PENDING&status=REQUESTED")
    assert (response.status_code, sorted(paths(response))) == (400, ["cursor", "integration", "status"])


def test_a_worklist_page_is_one_query_without_a_filter(shop):
    for _ in range(3):
        beer(shop)
    shop.get("/deliveries?integration=PENDING")  # tokens cached
    made = []
    record = lambda model, params, **kw: made.append((model.name, params))  # noqa: E731
    table.client().meta.events.register("before-parameter-build.dynamodb", record)
    try:
        assert len(ids(worklist(shop, "PENDING", limit=2))) == 2
    finally:
        table.client().meta.events.unregister("before-parameter-build.dynamodb", record)
    assert [name for name, _ in made] == ["Query"]
    assert "FilterExpression" not in made[0][1] and made[0][1]["Limit"] == 3


# --- GET /account/integration ---


def test_the_overview_counts_and_names_the_oldest_pending(shop, monkeypatch):
    assert overview(shop) == {"pending": 0, "failed": 0, "oldest_pending": None}
    first, second, third = beer(shop), beer(shop), beer(shop)
    assert overview(shop) == {"pending": 3, "failed": 0, "oldest_pending": {"id": first["id"], "since": ISO_NOW}}
    at(monkeypatch, LATER)
    put(shop, first["id"], {"status": "FAILED", "message": "unknown article"})
    put(shop, second["id"], {"status": "IMPORTED"})
    assert overview(shop) == {"pending": 1, "failed": 1, "oldest_pending": {"id": third["id"], "since": ISO_NOW}}
    put(shop, first["id"], {"status": "FAILED", "message": "still unknown"})  # same state: counted once
    put(shop, third["id"], {"status": "FAILED", "message": "no customer"})
    assert overview(shop) == {"pending": 0, "failed": 2, "oldest_pending": None}
    receive(shop, first["id"])
    assert overview(shop) == {"pending": 1, "failed": 1, "oldest_pending": {"id": first["id"], "since": ISO_LATER}}
    response = shop.get("/account/integration")
    assert list(response.data) == ["pending", "failed", "oldest_pending"]


def test_each_account_counts_its_own(shop):
    beer(shop)
    assert overview(shop)["pending"] == 1
    other = shop.get("/account/integration", token=OTHER_TOKEN)
    assert other.data == {"pending": 0, "failed": 0, "oldest_pending": None}
    assert shop.get("/deliveries?integration=PENDING", token=OTHER_TOKEN).data == {"deliveries": []}


def test_an_order_of_two_deliveries_counts_both(shop):
    response = shop.post(
        "/customer/deliveries",
        body={
            "items": [{"id": "beer", "count": 1}, {"id": "wine", "count": 1}],
            "user": {"name": "O", "email": "o@example.com"},
        },
        token=CUSTOMER_TOKEN,
    )
    assert len(response.data["deliveries"]) == 2
    assert overview(shop)["pending"] == 2
    assert ids(worklist(shop, "PENDING")) == [1, 2]


# --- deliveries stored before integration states ---


def _forget_integration(delivery_id: int) -> None:
    """The delivery as this service stored it before integration states existed."""
    from chalicelib.store import keys

    table.client().update_item(
        TableName=table.name(),
        Key=table.to_item(keys.delivery_key("acme", delivery_id)),
        UpdateExpression="REMOVE integration, integration_since, GSI3PK, GSI3SK",
    )
    for key in keys.integration_counts_keys("acme"):  # every shard of the counts
        table.client().delete_item(TableName=table.name(), Key=table.to_item(key))


def test_a_delivery_stored_before_reads_pending_and_the_migration_lists_and_counts_it(shop):
    from chalicelib.service import migrations

    old, new = beer(shop), beer(shop)
    _forget_integration(old["id"])
    table.client().update_item(
        TableName=table.name(),
        Key=table.to_item({"PK": "A#acme", "SK": "INTEGRATION#COUNTS"}),
        UpdateExpression="ADD pending :one",
        ExpressionAttributeValues=table.values(one=1),
    )  # the counts as they would be: only the new delivery
    assert shop.get(f"/deliveries/{old['id']}").data["integration"] == {"status": "PENDING"}
    assert ids(worklist(shop, "PENDING")) == [new["id"]]
    assert overview(shop)["pending"] == 1
    assert migrations.migrate_integration("acme") == 1
    assert migrations.migrate_integration("acme") == 0  # a second run counts nothing twice
    assert ids(worklist(shop, "PENDING")) == [old["id"], new["id"]]  # by request time
    assert overview(shop) == {"pending": 2, "failed": 0, "oldest_pending": {"id": old["id"], "since": ISO_NOW}}
    assert shop.get(f"/deliveries/{old['id']}").data["integration"] == {"status": "PENDING"}


def test_a_delivery_stored_before_takes_a_put_and_is_then_left_alone_by_the_migration(shop):
    from chalicelib.service import migrations

    old = beer(shop)
    _forget_integration(old["id"])
    assert put(shop, old["id"], {"status": "PENDING"}).data == {"status": "PENDING"}  # what it reads: no change
    assert put(shop, old["id"], {"status": "FAILED", "message": "x"}).status_code == 200
    assert overview(shop) == {"pending": 0, "failed": 1, "oldest_pending": None}
    assert migrations.migrate_integration("acme") == 0
    assert overview(shop)["failed"] == 1


def test_a_delivery_stored_before_is_counted_when_the_customer_changes_it(shop):
    old = beer(shop)
    _forget_integration(old["id"])
    cancel(shop, old["id"])
    assert overview(shop) == {"pending": 1, "failed": 0, "oldest_pending": {"id": old["id"], "since": ISO_NOW}}


# --- sizes ---


@pytest.mark.parametrize("character", ["ä", "ж", "漢", "한"])
def test_the_state_is_bounded_in_bytes_within_the_room_kept_for_it(shop, character):
    """Reference and message at their longest in characters of up to 3 bytes (every alphabet, CJK) fit; control
    characters (6 bytes of JSON each) at those lengths do not, and are refused naming the field."""
    from chalicelib.domain.rendering import size_in_bytes

    delivery = beer(shop)
    widest = {"status": "FAILED", "reference": character * 128, "message": character * 2000}
    response = put(shop, delivery["id"], widest)
    assert response.status_code == 200, response.data
    listed = shop.get("/deliveries").data["deliveries"][0]
    assert size_in_bytes({"integration": listed["integration"]}) <= limits.INTEGRATION_BYTES
    assert limits.DELIVERY_SUMMARY_BYTES + limits.INTEGRATION_BYTES == limits.LISTED_DELIVERY_BYTES
    assert limits.PAGE_ITEMS * limits.LISTED_DELIVERY_BYTES + 10_000 < limits.PAGE_BYTES
    control = put(shop, delivery["id"], {"status": "FAILED", "message": "\x01" * 2000})
    assert (control.status_code, paths(control)) == (400, ["message"])
    assert "at most 7,000" in control.data["errors"][0]["message"]
    reference_only = put(shop, delivery["id"], {"status": "IMPORTED", "reference": "\x01" * 128})
    assert reference_only.status_code == 200  # 768 bytes: well within
    assert shop.get(f"/deliveries/{delivery['id']}").data["integration"]["reference"] == "\x01" * 128


# --- the worklist's `since` is the time of the attempt that commits (issue 24 point 9) ---


def _held_once(monkeypatch, moments: list[dt.datetime]):
    """The first transaction that carries a pending feed entry meets a numbering holding that entry; while it
    does, the clock moves on to the next moment (the attempt that commits happens later)."""
    met = []

    def transact(send, **request):
        pending = ["#PENDING" in str(item) for item in request["TransactItems"]]
        if not met and any(pending):
            met.append(True)
            at(monkeypatch, moments[1])
            raise cancelled(["TransactionConflict" if held else "None" for held in pending], "held")
        return send(**request)

    at(monkeypatch, moments[0])
    intercept(monkeypatch, transact)
    return met


def test_a_re_pended_delivery_enters_the_worklist_at_the_time_of_the_write_that_committed(shop, monkeypatch):
    delivery = beer(shop)
    assert put(shop, delivery["id"], {"status": "IMPORTED"}).status_code == 200
    first, later = (
        dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc),
        dt.datetime(2026, 5, 4, 9, 35, tzinfo=dt.timezone.utc),
    )
    met = _held_once(monkeypatch, [first, later])
    cancel(shop, delivery["id"])
    assert met  # the first attempt was refused
    assert overview(shop)["oldest_pending"] == {"id": delivery["id"], "since": ISO_LATER}


def test_a_new_order_enters_the_worklist_at_the_time_of_the_write_that_committed(shop, monkeypatch):
    first, later = (
        dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc),
        dt.datetime(2026, 5, 4, 9, 35, tzinfo=dt.timezone.utc),
    )
    met = _held_once(monkeypatch, [first, later])
    delivery = beer(shop)
    assert met
    assert overview(shop)["oldest_pending"] == {"id": delivery["id"], "since": ISO_LATER}
