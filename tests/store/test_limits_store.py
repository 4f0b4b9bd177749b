"""The limits designed as a whole (domain/limits.py, docs/limits.md), on moto and on DynamoDB Local.

The largest objects the API accepts are built through the API, so the writes are shown to succeed on the real
engine, and every full page of them stays under 5 MiB (decisions §4). A delivery at every limit can still be
rejected, cancelled or received (decisions §8).
"""

import datetime as dt

import pytest

from chalicelib.domain import limits
from chalicelib.domain.errors import ValidationFailed
from chalicelib.domain.product import validate_product
from chalicelib.domain.rendering import size_in_bytes
from chalicelib.domain.scaled_pricing import validate_price_level
from chalicelib.service import accounts
from chalicelib.store import deliveries as delivery_store
from chalicelib.store import tokens
from tests.conftest import clock_at

from ..conftest import SUPPLIER_TOKEN, Api

WORST = "\x01"  # the character with the longest JSON text (\u0001): 6 bytes for one character of a length limit
CUSTOMER_TOKEN = "limits-customer-token"
NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
PAGE = limits.PAGE_ITEMS


def largest(accepts, high: int) -> int:
    """The largest n in [0, high] that `accepts(n)`, for an `accepts` that holds up to some n and not after."""
    low = 0
    assert accepts(low)
    while low < high:
        middle = (low + high + 1) // 2
        if accepts(middle):
            low = middle
        else:
            high = middle - 1
    return low


def valid(check) -> bool:
    try:
        check()
    except ValidationFailed:
        return False
    return True


@pytest.fixture
def api(engine, monkeypatch):
    if engine == "moto":
        # moto recomputes an item's size on every nested assignment, which takes minutes for items this large;
        # DynamoDB Local is the engine whose answer counts here.
        pytest.skip("the largest objects are written to DynamoDB Local only")
    from chalice.test import Client

    from app import app
    from chalicelib.http import auth

    clock_at(monkeypatch, NOW)
    auth.forget_all()
    accounts.create_account("acme", "Acme", SUPPLIER_TOKEN)
    with Client(app) as client:
        api = Api(client, SUPPLIER_TOKEN)
        assert api.put("/categories/drinks", {"name": "Drinks"}).status_code == 200
        contact = {"name": WORST * 256, "email": WORST * 120 + "@" + WORST * 120 + ".fi"}
        address = {
            "address1": WORST * 256,
            "address2": WORST * 256,
            "zip": WORST * 32,
            "city": WORST * 256,
            "country": "FI",
        }
        profile = {"name": WORST * 128, "company": WORST * 256, "address": address, "contact": contact}
        assert api.put("/customers/c1", profile).status_code == 200
        settings = {"allow_delivery_comments": True, "allow_product_comments": True}
        assert api.patch("/account/settings/deliveries", settings).status_code == 200
        tokens.create("acme", "customer", "c1", secret=CUSTOMER_TOKEN)
        yield api
    auth.forget_all()


# --- products ---


def largest_product() -> dict:
    """A product at the product limit: custom_properties at theirs, the rest filled with no-delivery dates."""

    def with_properties(n):
        return {f"property-{i:02d}": WORST * n for i in range(10)}

    n = largest(
        lambda n: size_in_bytes(with_properties(n)) <= limits.CUSTOM_PROPERTIES_BYTES, limits.CUSTOM_STRING_LENGTH
    )
    base = {
        "status": "ACTIVE",
        "category": "drinks",
        "name": "P" * 64,
        "gtin": WORST * 256,
        "vessel": {"id": WORST * 256, "size": 1, "unit": "l", "type": "BO"},
        "bundles": [{"id": WORST * 256, "type": "CA", "size": 6}],
        "price": 100,
        "custom_properties": with_properties(n),
    }
    days = [(dt.date(2030, 1, 1) + dt.timedelta(days=i)).isoformat() for i in range(limits.DATED_RULES)]
    base["dates_with_no_delivery"] = days
    rule = {"lead_days": 365, "cutoff": "23:59"}

    def product(count):
        return {**base, "delivery_date_overrides": {day: rule for day in days[:count]}}

    count = largest(lambda count: valid(lambda: validate_product(product(count), "p")), len(days))
    assert count < len(days)  # the byte limit, not the count of overrides, stopped it
    return product(count)


def largest_price_level() -> dict:
    points = [{"from": i + 1, "price": 10**12 - i} for i in range(100)]

    def level(count):
        overrides = [
            {"from_date": f"{2030 + i}-01-01", "to_date": f"{2030 + i}-12-31", "price_points": points[:10]}
            for i in range(count)
        ]
        return {"price": 10**12, "pricing": {"strategy": "VOLUME", "price_points": points, "date_overrides": overrides}}

    count = largest(lambda count: valid(lambda: validate_price_level(level(count), "vessel")), 100)
    return level(count)


def test_a_product_over_its_limits_is_a_400_naming_the_field(api):
    product = largest_product()
    more = {f"2040-01-{day:02d}": {"lead_days": 1} for day in range(1, 11)}
    too_many = {**product, "delivery_date_overrides": {**product["delivery_date_overrides"], **more}}
    response = api.put("/products/big", too_many)
    assert response.status_code == 400
    assert [e["path"] for e in response.data["errors"]] == ["body"]
    assert response.data["errors"][0]["message"].startswith("takes 36,")
    assert response.data["errors"][0]["message"].endswith("bytes of JSON; a product holds at most 36,000")
    assert api.put("/products/big", product).status_code == 200
    properties = {**product["custom_properties"], "one-more": WORST * 200}
    response = api.put("/products/big", {**product, "custom_properties": properties})
    assert response.status_code == 400
    assert [e["path"] for e in response.data["errors"]] == ["custom_properties"]
    assert response.data["errors"][0]["message"].endswith("bytes of JSON; they hold at most 20,000")
    array = {"list": ["x"] * (limits.CUSTOM_ARRAY_LENGTH + 1)}
    response = api.put("/products/big", {**product, "custom_properties": array})
    assert [e["path"] for e in response.data["errors"]] == ["custom_properties.list"]
    assert (
        api.put(
            "/products/big", {**product, "custom_properties": {"list": ["x"] * limits.CUSTOM_ARRAY_LENGTH}}
        ).status_code
        == 200
    )


def test_full_pages_of_the_largest_products_stay_under_5_mib(api):
    product, level = largest_product(), largest_price_level()
    assert size_in_bytes(level) > limits.PRICING_BYTES - 1_000
    for i in range(PAGE):
        assert api.put(f"/products/p{i:03d}", product).status_code == 200
        assert api.put(f"/products/p{i:03d}/customer-pricing/c1", level).status_code == 200

    pages = (
        ("/products?limit=100", SUPPLIER_TOKEN, limits.PRODUCT_BYTES - 1_000),
        ("/customer/products?limit=100", CUSTOMER_TOKEN, limits.PRODUCT_BYTES + limits.PRICING_BYTES - 2_000),
    )
    for path, token, smallest in pages:
        response = api.get(path, token=token)
        assert response.status_code == 200
        assert len(response.data["products"]) == PAGE
        assert PAGE * smallest < len(response.body) < limits.PAGE_BYTES, path


# --- deliveries ---

USER = {"name": WORST * 256, "email": WORST * 120 + "@" + WORST * 120 + ".fi"}


def largest_order(api) -> dict:
    """The largest order accepted: 50 lines with comments as long as the items' byte limit allows; every text of
    the request and the customer at its longest, but the order message, which leaves room for responses."""
    product = {"status": "ACTIVE", "category": "drinks", "name": WORST * 64, "price": 100, "price_per": "vessel"}
    for i in range(limits.ORDER_ITEMS):
        assert api.put(f"/products/o{i:02d}", product).status_code == 200

    def order(comment: int, message: int) -> dict:
        items = [{"id": f"o{i:02d}", "count": 1, "message": WORST * comment} for i in range(limits.ORDER_ITEMS)]
        body = {"items": items, "user": USER, "company": WORST * 256, "cost_center": WORST * 256}
        return {**body, "message": WORST * message} if message else body

    def fits(body) -> bool:
        return valid(lambda: _plan(body))

    message = 0  # the largest order leaves room for 100 responses only without an order message (limits.py)
    comment = largest(lambda n: fits(order(n, message)), limits.MESSAGE_LENGTH)
    assert comment < limits.MESSAGE_LENGTH  # the byte limit of the items stopped it
    response = api.post("/customer/deliveries", order(comment, message), token=CUSTOMER_TOKEN)
    assert response.status_code == 200, response.data
    refused = api.post("/customer/deliveries", order(comment + 1, message), token=CUSTOMER_TOKEN)
    assert (refused.status_code, [e["path"] for e in refused.data["errors"]]) == (400, ["items"])
    (delivery,) = response.data["deliveries"]
    return delivery


def _plan(body):
    """The domain's answer to an order of customer c1, as the service plans it (no write)."""
    from chalicelib.domain.common import parse
    from chalicelib.domain.delivery import OrderBody
    from chalicelib.domain.ordering import plan_order
    from chalicelib.store import order_context

    context = order_context.load("acme", "c1", [item["id"] for item in body["items"]])
    return plan_order(parse(OrderBody, body), "c1", context, NOW)


def fill_with_updates(api, delivery_id: int) -> dict:
    """ACCEPT, then UPDATEs up to both limits: as many as allowed, the last one as large as still fits."""
    path = f"/deliveries/{delivery_id}/responses"
    assert api.post(path, {"type": "ACCEPT"}).status_code == 200
    summary = size_in_bytes(_delivery_only(api.get("/deliveries?limit=1").data["deliveries"][0]))
    per_update = (limits.OPEN_DELIVERY_BYTES - summary) // limits.OPEN_RESPONSES
    message = max(0, (per_update - 80) // 6)
    for _ in range(limits.OPEN_RESPONSES - 2):
        response = api.post(path, {"type": "UPDATE", **({"message": WORST * message} if message else {})})
        assert response.status_code == 200, response.data
    last = largest(lambda n: True if n == 0 else _fits_update(api, delivery_id, n), limits.MESSAGE_LENGTH)
    response = api.post(path, {"type": "UPDATE", "message": WORST * last})
    assert response.status_code == 200
    delivery = response.data
    assert len(delivery["responses"]) == limits.OPEN_RESPONSES
    assert limits.OPEN_DELIVERY_BYTES - 200 < size_in_bytes(_summary(delivery)) <= limits.OPEN_DELIVERY_BYTES

    more = api.post(path, {"type": "UPDATE"})
    assert (more.status_code, more.data["errors"]) == (
        400,
        [
            {
                "path": "type",
                "message": "a delivery holds at most 100 ACCEPT and UPDATE responses; REJECT is still possible",
            }
        ],
    )
    return delivery


def _fits_update(api, delivery_id: int, length: int) -> bool:
    """Whether an UPDATE with a message of `length` would fit, asked of the domain (nothing is written)."""
    from chalicelib.domain import delivery as rules

    stored = delivery_store.get("acme", delivery_id, consistent=True)
    body = rules.parse_response({"type": "UPDATE", "message": WORST * length})
    return valid(lambda: rules.respond(stored.delivery, rules.build_response(body, None, NOW)))


def _delivery_only(delivery: dict) -> dict:
    """The delivery without the integration state supplier reads add (limits.INTEGRATION_BYTES keeps its room)."""
    return {k: v for k, v in delivery.items() if k != "integration"}


def _summary(delivery: dict) -> dict:
    """The delivery as lists show it: without its items and what only single reads show (amendments, the note)."""
    from chalicelib.domain.delivery_summary import without_items

    return without_items(_delivery_only(delivery))


# 6,000 + 720 bytes of text: near limits.INTEGRATION_BYTES.
WIDEST_INTEGRATION = {"status": "FAILED", "reference": WORST * 120, "message": "漢" * limits.MESSAGE_LENGTH}
FINAL_BODY = {"user": USER, "message": WORST * limits.MESSAGE_LENGTH}
FINAL = {  # (path, body, token) of each final change, at its largest
    "REJECT": ("/deliveries/{}/responses", {"type": "REJECT", "reference": WORST * 256, **FINAL_BODY}, SUPPLIER_TOKEN),
    "cancel": ("/customer/deliveries/{}/cancel", FINAL_BODY, CUSTOMER_TOKEN),
    "receive": ("/customer/deliveries/{}/receive", FINAL_BODY, CUSTOMER_TOKEN),
}


def finish(api, final: str, delivery_id: int, **kw):
    path, body, token = FINAL[final]
    return api.post(path.format(delivery_id), body, token=token, **kw)


def copy_delivery(delivery: dict, delivery_id: int) -> None:
    """A copy of `delivery` under another id, written as placing and responding write it (the delivery with the
    event its feed entry makes, then the change)."""
    copy = {**delivery, "id": delivery_id, "status": "REQUESTED", "responses": []}
    from chalicelib.domain.feed import STATUS_CHANGE, ChangeType, delivery_change
    from tests import delivery_units

    placed = [delivery_change(ChangeType.DELIVERY_REQUESTED, copy)]
    assert delivery_units.place("acme", [copy], [], None, None, changes=placed, now=NOW) is None
    changed = {**delivery, "id": delivery_id}
    change = [delivery_change(STATUS_CHANGE[changed["status"]], changed)]
    assert delivery_units.change("acme", changed, 0, changes=change, now=NOW) is None


def test_a_delivery_at_every_limit_can_still_be_rejected_cancelled_or_received(api):
    """ACCEPT, UPDATE up to the limits, then each final change at its largest, with an Idempotency-Key whose
    record holds the whole delivery. The API fills one delivery (what takes long); cancel and receive are made on
    copies of it."""
    delivery = largest_order(api)
    filled = fill_with_updates(api, delivery["id"])
    finals = {"REJECT": delivery["id"], "cancel": delivery["id"] + 1, "receive": delivery["id"] + 2}
    for delivery_id in (finals["cancel"], finals["receive"]):
        copy_delivery(filled, delivery_id)
        assert _delivery_only(api.get(f"/deliveries/{delivery_id}").data) == {
            **_delivery_only(filled),
            "id": delivery_id,
        }

    for final, delivery_id in finals.items():
        response = finish(api, final, delivery_id, headers={"Idempotency-Key": f"final-{final}"})

        assert response.status_code == 200, response.data
        assert response.data["status"] == {"REJECT": "REJECTED", "cancel": "CANCELLED", "receive": "DELIVERED"}[final]
        assert size_in_bytes(_summary(response.data)) <= limits.DELIVERY_SUMMARY_BYTES
        assert (
            limits.ORDER_ITEMS_BYTES - 10_000
            < size_in_bytes(response.data["request"]["items"])
            <= limits.ORDER_ITEMS_BYTES
        )
        assert _delivery_only(api.get(f"/deliveries/{delivery_id}").data) == _delivery_only(response.data)
        replayed = finish(api, final, delivery_id, headers={"Idempotency-Key": f"final-{final}"})
        assert (replayed.status_code, replayed.headers.get("Idempotent-Replayed"), replayed.data) == (
            200,
            "true",
            response.data,
        )


def test_full_pages_of_the_largest_deliveries_and_their_events_stay_under_5_mib(api):
    delivery = largest_order(api)
    fill_with_updates(api, delivery["id"])
    largest_delivery = finish(api, "REJECT", delivery["id"]).data
    for delivery_id in range(delivery["id"] + 1, delivery["id"] + 1 + PAGE):
        copy_delivery(largest_delivery, delivery_id)
        # Supplier reads add the integration state, here near its byte limit.
        assert api.put(f"/deliveries/{delivery_id}/integration", WIDEST_INTEGRATION).status_code == 200

    for path, token, shown in (
        ("/deliveries?limit=100", SUPPLIER_TOKEN, limits.LISTED_DELIVERY_BYTES),
        ("/deliveries?integration=FAILED&limit=100", SUPPLIER_TOKEN, limits.LISTED_DELIVERY_BYTES),
        ("/customer/deliveries?limit=100", CUSTOMER_TOKEN, limits.DELIVERY_SUMMARY_BYTES),
    ):
        response = api.get(path, token=token)
        assert response.status_code == 200
        assert len(response.data["deliveries"]) == PAGE
        assert PAGE * (shown - 3_000) < len(response.body) < limits.PAGE_BYTES, path
    response = api.get("/account/webhook-deliveries?limit=100")
    assert response.status_code == 200
    assert len(response.body) < limits.PAGE_BYTES
