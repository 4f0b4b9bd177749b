"""GET /changes: the change feed of decisions §13, through the API (moto). The concurrency and crash tests are
tests/store/test_feed_store.py, on DynamoDB Local too."""

import datetime as dt

import pytest

from chalicelib.domain.rendering import json_text
from chalicelib.store import keys, table
from tests.api.customer_support import customer_token, make_category, make_customer, make_product
from tests.api.deliveries_helpers import BEER, CUSTOMER_TOKEN, place, respond, shop  # noqa: F401 - a fixture
from tests.conftest import OTHER_TOKEN, clock_at, problem_paths
from tests.problems import assert_problem

NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)


def changes(api, query="", **kw):
    response = api.get(f"/changes{query}", **kw)
    assert response.status_code == 200, response.data
    return response.data


def kinds(api, after=0):
    return [(c["type"], c["id"]) for c in changes(api, f"?after={after}&limit=1000")["changes"]]


def newest(api) -> int:
    return changes(api, "?after=latest")["max_sequence"]


@pytest.fixture
def fixed_clock(monkeypatch):
    return clock_at(monkeypatch, NOW)


# --- the page and its positions ---


def test_an_account_without_changes_has_an_empty_feed(api):
    assert changes(api) == {"changes": [], "last_sequence": 0, "max_sequence": 0}
    assert changes(api, "?after=latest") == {"changes": [], "last_sequence": 0, "max_sequence": 0}


def test_entries_have_consecutive_sequences_from_1_and_their_fields(api, fixed_clock):
    category = api.put("/categories/drinks", {"name": "Drinks"})
    product = api.put("/products/beer", {"status": "ACTIVE", "category": "drinks", "name": "Beer", "price": 100})
    page = changes(api)
    assert page == {
        "changes": [
            {
                "sequence": 1,
                "type": "category.created",
                "resource": "category",
                "id": "drinks",
                "at": "2026-05-04T09:30:00.000Z",
                "unit": category.headers["X-Feed-Unit"],
            },
            {
                "sequence": 2,
                "type": "product.created",
                "resource": "product",
                "id": "beer",
                "at": "2026-05-04T09:30:00.000Z",
                "unit": product.headers["X-Feed-Unit"],
            },
        ],
        "last_sequence": 2,
        "max_sequence": 2,
    }


def test_a_writer_finds_its_own_change_by_the_unit_its_answer_names(api):
    """decisions §13: an entry is readable within 5 seconds of its change, not at once; the write's answer names
    the unit its entries carry, so a writer knows which entry is its own. A read, a refused write and a write that
    changes nothing name none."""
    make_category(api)
    before = newest(api)
    written = api.patch("/customers/c9", {"price_group": "gold"})
    assert written.status_code == 404 and "X-Feed-Unit" not in written.headers
    created = api.put("/customers/c9", {"name": "Bar Nine"})
    assert created.status_code == 200
    unit = created.headers["X-Feed-Unit"]
    assert len(unit) == 16
    assert [(c["type"], c["id"], c["unit"]) for c in changes(api, f"?after={before}")["changes"]] == [
        ("customer.created", "c9", unit)
    ]
    assert "X-Feed-Unit" not in api.put("/customers/c9", {"name": "Bar Nine"}).headers  # the same again: no change
    assert "X-Feed-Unit" not in api.get("/customers/c9").headers
    renamed = api.put("/customers/c9", {"name": "Bar 9"}).headers["X-Feed-Unit"]
    assert renamed != unit
    assert changes(api, f"?after={before + 1}")["changes"][0]["unit"] == renamed


def test_after_and_limit_page_forward_until_caught_up(api):
    make_category(api)
    for n in range(5):
        make_product(api, f"p{n}")
    first = changes(api, "?limit=2")
    assert [c["sequence"] for c in first["changes"]] == [1, 2]
    assert (first["last_sequence"], first["max_sequence"]) == (2, 6)
    second = changes(api, "?after=2&limit=3")
    assert [c["sequence"] for c in second["changes"]] == [3, 4, 5]
    last = changes(api, "?after=5&limit=3")
    assert [c["sequence"] for c in last["changes"]] == [6]
    assert last["last_sequence"] == last["max_sequence"] == 6
    caught_up = changes(api, "?after=6")
    assert caught_up == {"changes": [], "last_sequence": 6, "max_sequence": 6}


def test_latest_answers_the_newest_position_without_entries(api):
    make_category(api)
    make_product(api, "beer")
    assert changes(api, "?after=latest") == {"changes": [], "last_sequence": 2, "max_sequence": 2}


def test_limit_is_1_to_1000_default_100(api):
    make_category(api)
    for n in range(101):
        api.put(f"/categories/c{n}", {"name": f"C{n}"})
    assert len(changes(api)["changes"]) == 100
    assert len(changes(api, "?limit=1000")["changes"]) == 102
    assert len(changes(api, "?limit=1")["changes"]) == 1
    for bad in ("0", "1001", "x", "-1", ""):
        response = api.get(f"/changes?limit={bad}")
        assert response.status_code == 400 and problem_paths(response) == ["limit"], bad


@pytest.mark.parametrize("bad", ["-1", "x", "1.5", "", "LATEST"])
def test_a_malformed_after_is_400_naming_after(api, bad):
    response = api.get(f"/changes?after={bad}")
    assert response.status_code == 400 and problem_paths(response) == ["after"]


def test_after_beyond_max_sequence_is_400_naming_after(api):
    make_category(api)
    assert changes(api, "?after=1")["changes"] == []
    response = api.get("/changes?after=2")
    assert response.status_code == 400 and problem_paths(response) == ["after"]
    assert_problem(response, 400, "validation-error")


def test_include_takes_only_data(api):
    response = api.get("/changes?include=everything")
    assert response.status_code == 400 and problem_paths(response) == ["include"]


def test_every_wrong_parameter_is_named_at_once(api):
    response = api.get("/changes?after=x&limit=0&include=y")
    assert sorted(problem_paths(response)) == ["after", "include", "limit"]


def _expire(account: str, through: int) -> None:
    """Entries 1..through deleted, as TTL does after 30+ days."""
    for sequence in range(1, through + 1):
        table.client().delete_item(TableName=table.name(), Key=table.to_item(keys.feed_entry_key(account, sequence)))


def test_an_after_whose_next_entry_is_gone_is_410_feed_expired(api):
    make_category(api)
    make_product(api, "a")
    make_product(api, "b")
    _expire("acme", 1)
    response = api.get("/changes?after=0")
    assert response.status_code == 410
    assert response.headers["Content-Type"] == "application/problem+json"
    assert_problem(response, 410, "feed-expired")
    assert [c["sequence"] for c in changes(api, "?after=1")["changes"]] == [2, 3]  # still kept: readable
    assert changes(api, "?after=latest")["max_sequence"] == 3


def test_an_entry_past_its_expiry_counts_as_gone_before_ttl_deletes_it(api, fake_clock):
    make_category(api)
    make_product(api, "a")
    fake_clock.advance(dt.timedelta(days=36))
    assert api.get("/changes").status_code == 410
    assert changes(api, "?after=latest")["max_sequence"] == 2


def test_entries_are_kept_30_days_at_least(api, fake_clock):
    make_category(api)
    later = fake_clock.advance(dt.timedelta(days=30, hours=1))
    assert [c["id"] for c in changes(api)["changes"]] == ["drinks"]
    item = table.from_item(
        table.client().get_item(TableName=table.name(), Key=table.to_item(keys.feed_entry_key("acme", 1)))["Item"]
    )
    assert item["expires_at"] >= int(later.timestamp())  # the TTL attribute (store/table.py enables TTL on it)


def test_customer_tokens_are_403(api):
    make_customer(api, "c1")
    token = customer_token(api, "c1")
    response = api.get("/changes", token=token)
    assert_problem(response, 403, "forbidden")


def test_accounts_have_their_own_feeds(api):
    make_category(api)
    assert changes(api, token=OTHER_TOKEN) == {"changes": [], "last_sequence": 0, "max_sequence": 0}
    api.put("/categories/x", {"name": "X"}, token=OTHER_TOKEN)
    assert [c["id"] for c in changes(api, token=OTHER_TOKEN)["changes"]] == ["x"]
    assert [c["sequence"] for c in changes(api, token=OTHER_TOKEN)["changes"]] == [1]


# --- one entry per committed change, none for refused or no-op writes ---


def test_products_created_updated_patched_deleted(api):
    make_category(api)
    body = {"status": "ACTIVE", "category": "drinks", "name": "Beer"}
    assert api.post("/products", {"id": "beer", **body}).status_code == 200
    assert api.put("/products/beer", {**body, "name": "Ale"}).status_code == 200
    assert api.patch("/products/beer", {"price": 3}).status_code == 200
    assert api.delete("/products/beer").status_code == 204
    assert kinds(api, 1) == [
        ("product.created", "beer"),
        ("product.updated", "beer"),
        ("product.updated", "beer"),
        ("product.deleted", "beer"),
    ]


def test_refused_and_unchanged_product_writes_append_nothing(api):
    make_category(api)
    body = {"status": "ACTIVE", "category": "drinks", "name": "Beer"}
    etag = api.put("/products/beer", body).headers["ETag"]
    before = newest(api)
    assert api.put("/products/beer", body).status_code == 200  # identical
    assert api.patch("/products/beer", {"name": "Beer"}).status_code == 200  # identical after merge
    assert api.post("/products", {"id": "beer", **body}).status_code == 400  # taken
    assert api.put("/products/beer", {**body, "category": "nope"}).status_code == 400  # no such category
    assert api.put("/products/beer", {**body, "name": ""}).status_code == 400  # invalid
    api.patch("/products/beer", {"name": "Ale"})
    stale = api.put("/products/beer", {**body, "name": "Stout"}, headers={"If-Match": etag})
    assert stale.status_code == 412
    assert api.delete("/products/ghost").status_code == 404
    assert kinds(api, before) == [("product.updated", "beer")]


def test_categories(api):
    make_category(api, "drinks")
    api.put("/categories/drinks", {"name": "Drinks"})  # same name: nothing
    api.put("/categories/drinks", {"name": "Beverages"})
    assert api.post("/categories", {"id": "food", "name": "Food"}).status_code == 200
    assert api.post("/categories", {"id": "food", "name": "Food"}).status_code == 400
    assert api.delete("/categories/food").status_code == 204
    assert api.delete("/categories/food").status_code == 404
    assert kinds(api) == [
        ("category.created", "drinks"),
        ("category.updated", "drinks"),
        ("category.created", "food"),
        ("category.deleted", "food"),
    ]


def test_customers_profile_and_settings(api):
    make_customer(api, "c1")
    make_customer(api, "c1")  # the same profile again
    api.put("/customers/c1", {"name": "Renamed"})
    assert api.patch("/customers/c1", {"price_group": "gold"}).status_code == 200
    assert api.patch("/customers/c1", {"price_group": "gold"}).status_code == 200  # unchanged
    assert api.patch("/customers/ghost", {"price_group": "gold"}).status_code == 404
    assert kinds(api) == [("customer.created", "c1"), ("customer.updated", "c1"), ("customer.updated", "c1")]


def test_customer_pricing_and_price_groups(api):
    make_product(api, "beer", price=100)
    make_customer(api, "c1")
    before = newest(api)
    path = "/products/beer/customer-pricing/c1"
    assert api.put(path, {"price": 90}).status_code == 200
    assert api.put(path, {"price": 90}).status_code == 200  # unchanged
    assert api.delete(path).status_code == 204
    assert api.delete(path).status_code == 404
    assert api.put("/products/beer/price-groups", {"gold": {"price": 80}}).status_code == 200
    assert api.put("/products/beer/price-groups", {"gold": {"price": 80}}).status_code == 200  # unchanged
    page = changes(api, f"?after={before}")["changes"]
    assert [(c["type"], c["id"], c.get("customer_id")) for c in page] == [
        ("customer-pricing.updated", "beer", "c1"),
        ("customer-pricing.deleted", "beer", "c1"),
        ("price-groups.updated", "beer", None),
    ]


def test_account_settings(api):
    assert api.patch("/account/settings/deliveries", {"allow_delivery_comments": True}).status_code == 200
    assert api.patch("/account/settings/deliveries", {"allow_delivery_comments": True}).status_code == 200
    hook = {"url": "https://erp.example.com/hook"}
    assert api.put("/account/settings/webhooks", hook).status_code == 200
    assert api.put("/account/settings/webhooks", hook).status_code == 200  # unchanged
    assert api.put("/account/settings/webhooks", {**hook, "method": "PUT"}).status_code == 200
    assert api.delete("/account/settings/webhooks").status_code == 204
    assert api.delete("/account/settings/webhooks").status_code == 404
    assert kinds(api) == [("settings.updated", "deliveries")] + [("settings.updated", "webhooks")] * 3


def test_deliveries_requested_accepted_updated_rejected(shop):
    before = newest(shop)
    delivery = place(shop, [{"id": "beer", "count": 2}])
    delivery_id = delivery["id"]
    assert respond(shop, delivery_id, {"type": "ACCEPT"}).status_code == 200
    assert respond(shop, delivery_id, {"type": "ACCEPT"}).status_code == 200  # a repeated ACCEPT is an entry too
    assert respond(shop, delivery_id, {"type": "UPDATE", "message": "later"}).status_code == 200
    assert respond(shop, delivery_id, {"type": "REJECT"}).status_code == 200
    assert respond(shop, delivery_id, {"type": "ACCEPT"}).status_code == 400  # refused: no entry
    page = changes(shop, f"?after={before}")["changes"]
    assert [(c["type"], c["id"], c["status"]) for c in page] == [
        ("delivery.requested", str(delivery_id), "REQUESTED"),
        ("delivery.accepted", str(delivery_id), "ACCEPTED"),
        ("delivery.accepted", str(delivery_id), "ACCEPTED"),
        ("delivery.updated", str(delivery_id), "ACCEPTED"),
        ("delivery.rejected", str(delivery_id), "REJECTED"),
    ]


def test_deliveries_cancelled_and_delivered(shop):
    before = newest(shop)
    first = place(shop, [{"id": "beer", "count": 1}])
    second = place(shop, [{"id": "beer", "count": 1}])
    assert shop.post(f"/customer/deliveries/{first['id']}/cancel", {}, token=CUSTOMER_TOKEN).status_code == 200
    assert shop.post(f"/customer/deliveries/{second['id']}/receive", {}, token=CUSTOMER_TOKEN).status_code == 200
    assert shop.post(f"/customer/deliveries/{second['id']}/cancel", {}, token=CUSTOMER_TOKEN).status_code == 400
    page = changes(shop, f"?after={before}")["changes"]
    assert [(c["type"], c["status"]) for c in page] == [
        ("delivery.requested", "REQUESTED"),
        ("delivery.requested", "REQUESTED"),
        ("delivery.cancelled", "CANCELLED"),
        ("delivery.delivered", "DELIVERED"),
    ]


def test_a_refused_order_appends_nothing(shop):
    before = newest(shop)
    response = shop.post("/customer/deliveries", body={"items": [{"id": "ghost", "count": 1}]}, token=CUSTOMER_TOKEN)
    assert response.status_code == 400
    assert newest(shop) == before


# --- include=data ---


def test_include_data_shows_each_resource_as_its_get_answers_now(shop):
    before = newest(shop)
    shop.put("/products/beer/price-groups", {"gold": {"price": 80}})
    assert shop.patch("/customers/c1", {"price_group": "gold"}).status_code == 200
    shop.put("/products/beer/customer-pricing/c1", {"price": 90})
    delivery = place(shop, [{"id": "beer", "count": 2}])
    shop.patch("/account/settings/deliveries", {"allow_delivery_comments": False})
    shop.put("/categories/tmp", {"name": "Tmp"})
    shop.delete("/categories/tmp")
    page = changes(shop, f"?after={before}&include=data")["changes"]
    data = {(c["type"], c["id"]): c["data"] for c in page}
    assert data[("price-groups.updated", "beer")] == shop.get("/products/beer/price-groups").data
    assert data[("customer.updated", "c1")] == shop.get("/customers/c1").data
    assert data[("customer-pricing.updated", "beer")] == shop.get("/products/beer/customer-pricing/c1").data
    assert data[("delivery.requested", str(delivery["id"]))] == shop.get(f"/deliveries/{delivery['id']}").data
    assert data[("settings.updated", "deliveries")] == shop.get("/account/settings/deliveries").data
    assert data[("category.created", "tmp")] is None  # gone now
    assert data[("category.deleted", "tmp")] is None


def test_include_data_shows_the_product_now_and_null_once_deleted(api):
    make_product(api, "beer", price=100)
    api.patch("/products/beer", {"price": 120})
    page = changes(api, "?include=data")["changes"]
    assert [c["data"] for c in page if c["id"] == "beer"] == [api.get("/products/beer").data] * 2
    api.delete("/products/beer")
    assert all(c["data"] is None for c in changes(api, "?include=data")["changes"] if c["resource"] == "product")


def test_without_include_entries_carry_no_data(api):
    make_category(api)
    assert "data" not in changes(api)["changes"][0]


def test_webhook_settings_travel_without_secrets(api):
    hook = {
        "url": "https://erp.example.com/hook",
        "headers": {"X-Api-Key": "very-secret"},
        "authorization": {"type": "basic", "username": "erp", "password": "hunter2"},
    }
    assert api.put("/account/settings/webhooks", hook).status_code == 200
    (entry,) = changes(api, "?include=data")["changes"]
    assert entry["data"] == {
        "url": "https://erp.example.com/hook",
        "method": "POST",
        "events": ["request-delivery", "cancel-delivery", "receive-delivery"],
    }
    text = api.get("/changes?include=data").body
    text = text.decode() if isinstance(text, bytes) else text
    for secret in ("very-secret", "hunter2", "whsec_", "X-Api-Key"):
        assert secret not in text


def test_include_data_cuts_the_page_before_5_mib(api, monkeypatch):
    from chalicelib.service import changes as service

    make_category(api)
    for n in range(6):
        make_product(api, f"p{n}", custom_properties={"note": "x" * 900})
    full = changes(api, "?include=data&limit=10")["changes"]
    four = sum(len(json_text(entry).encode()) + 1 for entry in full[:4])
    monkeypatch.setattr(service, "PAGE_BYTES", service.ENVELOPE_BYTES + four + 100)  # not room for a fifth
    page = changes(api, "?include=data&limit=10")
    assert [c["sequence"] for c in page["changes"]] == [1, 2, 3, 4]
    assert page["last_sequence"] == 4 and page["max_sequence"] == 7


# --- webhooks on the feed ---


class Receiver:
    """A transport that records what would be sent and answers 200."""

    def __init__(self):
        self.bodies = []

    def __call__(self, method, url, headers, body, timeout, allow_private):
        import http.client
        import json

        from chalicelib.adapters import outbound

        self.bodies.append(json.loads(body))
        return outbound.Response(200, http.client.HTTPMessage(), b"", url)


def _send_all(receiver):
    from chalicelib.jobs import event_lanes as dispatcher

    dispatcher.dispatch_due(transport=receiver)


def test_feed_type_events_carry_the_entry_and_chain_by_previous_sequence(shop):
    hook = {
        "url": "https://erp.example.com/hook",
        "events": ["request-delivery", "product.updated", "delivery.accepted"],
    }
    assert shop.put("/account/settings/webhooks", hook).status_code == 200
    selection = newest(shop)
    shop.put("/categories/other", {"name": "Other"})  # not selected: no event
    shop.patch("/products/beer", {"price": 160})
    delivery = place(shop, [{"id": "beer", "count": 1}])
    respond(shop, delivery["id"], {"type": "ACCEPT"})
    receiver = Receiver()
    _send_all(receiver)
    bodies = sorted(receiver.bodies, key=lambda b: b["sequence"])
    assert [(b["type"], b["sequence"], b["previous_sequence"]) for b in bodies] == [
        ("product.updated", selection + 2, 0),
        ("request-delivery", selection + 3, selection + 2),
        ("delivery.accepted", selection + 4, selection + 3),
    ]
    product_event = bodies[0]
    assert list(product_event) == ["type", "idempotency_key", "sequence", "previous_sequence", "resource", "id", "data"]
    assert (product_event["resource"], product_event["id"]) == ("product", "beer")
    assert (bodies[2]["resource"], bodies[2]["id"]) == ("delivery", str(delivery["id"]))
    assert "resource" not in bodies[1] and "customer_id" not in bodies[0]  # a legacy type keeps its body
    assert product_event["data"] == shop.get("/products/beer").data
    assert bodies[2]["data"] == shop.get(f"/deliveries/{delivery['id']}").data
    events = {e["sequence"]: e for e in shop.get("/account/events").data["events"]}
    assert events[selection + 2]["type"] == "product.updated" and events[selection + 2]["delivery_id"] is None
    assert events[selection + 3]["delivery_id"] == delivery["id"]
    # A resend is the same event: same idempotency_key, sequence and previous_sequence.
    event_id = events[selection + 2]["id"]
    assert shop.post(f"/account/events/{event_id}/resend").status_code == 202
    again = Receiver()
    _send_all(again)  # the dispatcher makes the queued resend's attempt
    (resent,) = again.bodies
    assert {k: resent[k] for k in ("idempotency_key", "sequence", "previous_sequence")} == {
        k: product_event[k] for k in ("idempotency_key", "sequence", "previous_sequence")
    }


def test_deleted_and_per_customer_events_say_what_they_are_about(shop):
    """A `*.deleted` event's data is null: its resource and id say what was deleted; entries that have a
    customer_id carry it (customer pricing, a customer's deposits)."""
    make_customer(shop, "c1")
    events = ["product.deleted", "customer-pricing.deleted", "customer-deposits.updated", "deposit.deleted"]
    assert (
        shop.put("/account/settings/webhooks", {"url": "https://erp.example.com/hook", "events": events}).status_code
        == 200
    )
    make_product(shop, "chips", price=250)
    assert shop.put("/products/chips/customer-pricing/c1", {"price": 90}).status_code == 200
    assert shop.delete("/products/chips/customer-pricing/c1").status_code == 204
    assert shop.delete("/products/chips").status_code == 204
    assert shop.put("/deposits/crate", {"name": "Crate", "price": 150}).status_code == 200
    assert shop.post("/customers/c1/deposits", {"id": "crate", "count": 2, "message": "opening"}).status_code == 200
    held = shop.get("/customers/c1/deposits").data
    assert shop.post("/customers/c1/deposits", {"id": "crate", "count": -2, "message": "back"}).status_code == 200
    assert shop.delete("/deposits/crate").status_code == 204
    receiver = Receiver()
    _send_all(receiver)
    bodies = sorted(receiver.bodies, key=lambda b: b["sequence"])
    assert [{k: b[k] for k in b if k not in ("idempotency_key", "sequence", "previous_sequence")} for b in bodies] == [
        {"type": "customer-pricing.deleted", "resource": "customer-pricing", "id": "chips", "customer_id": "c1",
         "data": None},
        {"type": "product.deleted", "resource": "product", "id": "chips", "data": None},
        {"type": "customer-deposits.updated", "resource": "customer-deposits", "id": "c1", "customer_id": "c1",
         "data": {"deposits": [], "total": 0}},
        {"type": "customer-deposits.updated", "resource": "customer-deposits", "id": "c1", "customer_id": "c1",
         "data": {"deposits": [], "total": 0}},
        {"type": "deposit.deleted", "resource": "deposit", "id": "crate", "data": None},
    ]  # fmt: skip
    assert held["deposits"][0]["balance"] == 2
    assert list(bodies[0]) == [
        "type",
        "idempotency_key",
        "sequence",
        "previous_sequence",
        "resource",
        "id",
        "customer_id",
        "data",
    ]


def test_a_customer_deposits_entry_carries_the_customer_id(shop):
    make_customer(shop, "c1")
    assert shop.put("/deposits/crate", {"name": "Crate", "price": 150}).status_code == 200
    before = newest(shop)
    assert shop.post("/customers/c1/deposits", {"id": "crate", "count": 2, "message": "opening"}).status_code == 200
    (entry,) = changes(shop, f"?after={before}")["changes"]
    assert {k: entry[k] for k in ("type", "resource", "id", "customer_id")} == {
        "type": "customer-deposits.updated",
        "resource": "customer-deposits",
        "id": "c1",
        "customer_id": "c1",
    }
    assert list(entry) == ["sequence", "type", "resource", "id", "at", "customer_id", "unit"]


def test_the_default_selection_sends_only_the_legacy_types(shop):
    assert shop.put("/account/settings/webhooks", {"url": "https://erp.example.com/hook"}).status_code == 200
    delivery = place(shop, [{"id": "beer", "count": 1}])
    respond(shop, delivery["id"], {"type": "ACCEPT"})
    shop.post(f"/customer/deliveries/{delivery['id']}/cancel", {}, token=CUSTOMER_TOKEN)
    types = [e["type"] for e in shop.get("/account/events").data["events"]]
    assert sorted(types) == ["cancel-delivery", "request-delivery"]  # no event for the ACCEPT


def test_an_import_appends_one_entry_per_written_row_and_created_category_and_none_when_unchanged(api):
    from tests.api.test_imports import FILE, imported

    imported(api, FILE)
    first = kinds(api)
    assert sorted(first) == sorted(
        [
            ("product.created", "cola-033"),
            ("product.created", "lager-05"),
            ("category.created", "soft-drinks"),
            ("category.created", "beer"),
        ]
    ) or {k for k, _ in first} == {"product.created", "category.created"}
    assert len([k for k, _ in first if k == "product.created"]) == 2
    assert [c["sequence"] for c in changes(api, "?limit=1000")["changes"]] == list(range(1, len(first) + 1))
    before = newest(api)
    imported(api, FILE)  # the same rows again: unchanged, no entries
    assert newest(api) == before
    imported(api, FILE.replace("1,95", "2,05"))
    assert kinds(api, before) == [("product.updated", "lager-05")]
    imported(api, FILE, query="?dry_run=true")
    assert newest(api) == before + 1


# --- integration states (decisions §13, §14) ---


def test_an_integration_change_appends_one_delivery_integration_entry_and_a_repeat_none(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    path = f"/deliveries/{delivery['id']}/integration"
    before = newest(shop)
    assert shop.put(path, {"status": "IMPORTED", "reference": "ERP-1"}).status_code == 200
    (entry,) = changes(shop, f"?after={before}")["changes"]
    assert {k: entry[k] for k in ("sequence", "type", "resource", "id", "status", "integration")} == {
        "sequence": before + 1,
        "type": "delivery.integration",
        "resource": "delivery",
        "id": str(delivery["id"]),
        "status": "REQUESTED",
        "integration": "IMPORTED",
    }
    assert shop.put(path, {"status": "IMPORTED", "reference": "ERP-1"}).status_code == 200  # the same state
    assert newest(shop) == before + 1
    assert shop.put(path, {"status": "IMPORTED", "reference": "ERP-2"}).status_code == 200  # a GET shows it
    assert shop.put(path, {"status": "FAILED"}).status_code == 400  # refused: no entry
    assert shop.put(path, {"status": "FAILED", "message": "no such customer"}).status_code == 200
    page = changes(shop, f"?after={before + 1}&include=data")["changes"]
    assert [(c["type"], c["integration"]) for c in page] == [
        ("delivery.integration", "IMPORTED"),
        ("delivery.integration", "FAILED"),
    ]
    assert page[-1]["data"] == shop.get(f"/deliveries/{delivery['id']}").data
    assert page[-1]["data"]["integration"]["status"] == "FAILED"


def test_a_cancel_that_re_pends_the_integration_state_is_one_delivery_cancelled(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    assert shop.put(f"/deliveries/{delivery['id']}/integration", {"status": "IMPORTED"}).status_code == 200
    before = newest(shop)
    assert shop.post(f"/customer/deliveries/{delivery['id']}/cancel", {}, token=CUSTOMER_TOKEN).status_code == 200
    page = changes(shop, f"?after={before}&include=data")["changes"]
    assert [(c["type"], c["status"]) for c in page] == [("delivery.cancelled", "CANCELLED")]
    assert "integration" not in page[0]  # only delivery.integration entries name the state
    assert page[0]["data"]["integration"]["status"] == "PENDING"
    assert shop.get("/account/integration").data["pending"] == 1


def test_only_feed_type_delivery_events_carry_the_integration_state(shop):
    hook = {"url": "https://erp.example.com/hook", "events": ["request-delivery", "delivery.integration"]}
    assert shop.put("/account/settings/webhooks", hook).status_code == 200
    delivery = place(shop, [{"id": "beer", "count": 1}])
    assert shop.put(f"/deliveries/{delivery['id']}/integration", {"status": "IMPORTED"}).status_code == 200
    receiver = Receiver()
    _send_all(receiver)
    legacy, integration = sorted(receiver.bodies, key=lambda b: b["sequence"])
    assert legacy["type"] == "request-delivery" and "integration" not in legacy["data"]
    assert integration["type"] == "delivery.integration"
    assert integration["data"] == shop.get(f"/deliveries/{delivery['id']}").data
    assert integration["data"]["integration"]["status"] == "IMPORTED"
