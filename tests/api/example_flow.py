"""One pass over every operation with realistic data: the OpenAPI document's examples are recorded from it.

`record_examples(api)` drives each operation once and returns, per operationId, the request body it sent and the
response body it got (the first success). tests/api/test_examples.py checks that chalicelib/http/examples.json
is what this flow produces (volatile values aside), so the examples cannot drift from the behaviour; run
`UPDATE_EXAMPLES=1 .venv/bin/python -m pytest tests/api/test_examples.py` to write the file again.
"""

import datetime as dt
import json
import re

from chalicelib.http.imports import EXAMPLE_FILE
from chalicelib.http.openapi_text import EXAMPLE_EXEMPT
from chalicelib.http.route_table import all_operations
from chalicelib.jobs import import_turns
from chalicelib.service import clock
from tests.conftest import clock_at

NOW = dt.datetime(2026, 11, 23, 8, 30, tzinfo=dt.timezone.utc)  # a Monday
# Values that differ on every run (secrets, signatures, times the jobs take): compared by presence only.
VOLATILE = {"unit", "token", "signing_secret", "cursor", "created_at", "at", "next_attempt_at", "duration_ms"}
# Per operation: random ids, and which of several events made in the same instant is listed first.
VOLATILE_OF = {
    "create_customer_token": {"id"},
    "list_webhook_deliveries": {"id", "type", "delivery_id"},
    "list_events": {"id", "type", "delivery_id", "sequence", "created"},
    "resend_event": {"id", "type", "delivery_id", "sequence", "created"},
    "import_products": {"id"},
    "get_import": {"id"},
    "list_imports": {"id"},
}

CATEGORY = {"id": "soft-drinks", "name": "Soft drinks"}
PRODUCT = {
    "id": "cola-1-5",
    "status": "ACTIVE",
    "category": "soft-drinks",
    "name": "Cola 1.5 l",
    "vessel": {"id": "pet-1-5", "size": 1.5, "unit": "l", "type": "BO"},
    "bundles": [{"id": "crate", "type": "CT", "size": 6}, {"id": "pallet", "type": "PX", "size": 40}],
    "price": 189,
    "price_per": "vessel",
    "min_order_count": 1,
    "delivery_days": {"1": {"lead_days": 1, "cutoff": "12:00"}, "4": {"lead_days": 1}},
    "gtin": "4006381333931",
}
PRICING = {
    "price": 175,
    "pricing": {"strategy": "VOLUME", "price_points": [{"from": 1, "price": 175}, {"from": 12, "price": 160}]},
}
CUSTOMER = {
    "name": "Bar Aurora",
    "company": "Aurora Oy",
    "address": {"address1": "Aleksanterinkatu 1", "zip": "00100", "city": "Helsinki", "country": "FI"},
    "contact": {"name": "Aino Aurora", "email": "aino@aurora.example"},
}
USER = {"name": "Aino Aurora", "email": "aino@aurora.example"}
PHOTOS = "https://photos.aurora.example"
ORDER = {
    "scheduled": {"date": "2026-11-26"},
    "items": [{"id": "cola-1-5", "count": 2, "bundle": {"id": "crate"}, "message": "cold ones, please"}],
    "message": "Back door, before noon",
    "user": USER,
}
STANDING_ORDER = {
    "name": "Monday and Thursday cola",
    "items": [{"id": "cola-1-5", "count": 2, "bundle": {"id": "crate"}}],
    "weekdays": [1, 4],
    "starts_on": "2026-11-30",
    "place_days_ahead": 3,
    "user": USER,
}
WEBHOOK = {"url": "https://hooks.aurora.example/supplier", "method": "POST", "headers": {"X-Shop": "aurora"}}


def _operation_of(method: str, path: str):
    for operation in all_operations():
        pattern = "^" + re.sub(r"{\w+}", "[^/]+", operation.path) + "$"
        if operation.method == method and re.match(pattern, path.split("?")[0]):
            return operation
    return None


class Recorder:
    def __init__(self, api):
        self.api = api
        self.examples: dict[str, dict] = {}

    def __call__(self, method, path, body=None, token=..., headers=None, status=200, raw=None):
        token = self.api.token if token is ... else token
        sent = {"Authorization": f"token {token}"} if token else {}
        if body is not None:
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        data = json.dumps(body) if body is not None else raw
        response = getattr(self.api.client.http, method.lower())(path, headers=sent, body=data)
        assert response.status_code == status, (method, path, response.body)
        operation = _operation_of(method, path)
        if operation.name not in self.examples and operation.name not in EXAMPLE_EXEMPT:
            example = {}
            if body is not None:
                example["request"] = body
            if response.body:
                text = response.body.decode("utf-8-sig")
                example["response"] = json.loads(text) if "json" in response.headers["Content-Type"] else text
            if example:
                self.examples[operation.name] = example
        return json.loads(response.body) if "json" in response.headers.get("Content-Type", "") else response.body


def record_examples(api, monkeypatch) -> dict[str, dict]:
    clock_at(monkeypatch, NOW)
    call = Recorder(api)
    call("GET", "/openapi.json", token=None)
    call("POST", "/categories", CATEGORY)
    call("PUT", "/categories/snacks", {"id": "snacks", "name": "Snacks"})
    call("GET", "/categories/snacks")
    call("GET", "/categories?limit=1")
    call("DELETE", "/categories/snacks", status=204)
    call("POST", "/products", PRODUCT)
    call(
        "PUT",
        "/products/lemonade",
        {k: v for k, v in PRODUCT.items() if k not in ("id", "bundles", "gtin")}
        | {"name": "Lemonade 0.33 l", "vessel": {"size": 0.33, "unit": "l", "type": "BO"}},
    )
    call(
        "PATCH",
        "/products/lemonade",
        {"price": 99, "status": "OUT_OF_STOCK"},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    call("GET", "/products/cola-1-5")
    call("GET", "/products?limit=1")
    call("PUT", "/customers/aurora", CUSTOMER)
    call("PATCH", "/customers/aurora", {"price_group": "bars", "dates_with_no_delivery": ["2026-12-24"]})
    call("GET", "/customers/aurora")
    call("GET", "/customers")
    call("PUT", "/deposits/crate", {"name": "Crate (20 bottles)", "price": 150})
    call("GET", "/deposits/crate")
    call("GET", "/deposits?limit=1")
    call(
        "POST",
        "/customers/aurora/deposits",
        {"id": "crate", "count": 12, "message": "Opening balance, counted on 2026-05-01"},
    )
    call("GET", "/customers/aurora/deposits")
    call("GET", "/customers/aurora/deposits/movements?deposit=crate")
    call("PUT", "/products/cola-1-5/customer-pricing/aurora", PRICING)
    call("GET", "/products/cola-1-5/customer-pricing/aurora")
    call("PUT", "/products/cola-1-5/price-groups", {"bars": {"price": 180}})
    call("GET", "/products/cola-1-5/price-groups")
    call(
        "PATCH",
        "/account/settings/deliveries",
        {"allow_delivery_comments": True, "allow_product_comments": True, "timezone": "Europe/Helsinki"},
    )
    call("GET", "/account/settings/deliveries")
    call("PUT", "/account/settings/webhooks", WEBHOOK)
    call("GET", "/account/settings/webhooks")
    token = call("POST", "/customers/aurora/tokens")["token"]
    as_customer = {"token": token}
    call("GET", "/customer/products", **as_customer)
    call("GET", "/customer/delivery-dates?products=cola-1-5&days=7", **as_customer)
    call("GET", "/customer/deposits", **as_customer)
    call("GET", "/customer/deposits/movements", **as_customer)
    placed = call("POST", "/customer/deliveries", ORDER, **as_customer)
    delivery_id = placed["deliveries"][0]["id"]
    call("GET", "/customer/deliveries", **as_customer)
    call("GET", f"/customer/deliveries/{delivery_id}", **as_customer)
    call("GET", "/deliveries?status=REQUESTED")
    call(
        "POST",
        f"/deliveries/{delivery_id}/responses",
        {
            "type": "ACCEPT",
            "reference": "SO-1042",
            "user": {"name": "Sami Supplier", "email": "sami@supplier.example"},
            "message": "See you on Thursday",
        },
    )
    call("GET", f"/deliveries/{delivery_id}")
    call("GET", f"/deliveries/{delivery_id}/csv?encoding=utf-8", headers={"Accept": "text/csv"})
    call("GET", "/deliveries?integration=PENDING&limit=1")
    call("PUT", f"/deliveries/{delivery_id}/integration", {"status": "IMPORTED", "reference": "ERP-88213"})
    receipt = {
        "user": USER,
        "message": "One crate broke on the way in",
        "items": [{"id": "cola-1-5", "issue": "DAMAGED", "count": 1, "evidence": [f"{PHOTOS}/crate-1.jpg"]}],
    }
    call("POST", f"/customer/deliveries/{delivery_id}/receive", receipt, **as_customer)
    second = call(
        "POST",
        "/customer/deliveries",
        {**ORDER, "message": None} | {"items": [{"id": "cola-1-5", "count": 12}]},
        **as_customer,
    )
    call(
        "POST",
        f"/customer/deliveries/{second['deliveries'][0]['id']}/amendments",
        {"items": [{"id": "cola-1-5", "count": 18}], "user": USER, "message": "Six more, please"},
        **as_customer,
    )
    call(
        "POST",
        f"/customer/deliveries/{second['deliveries'][0]['id']}/cancel",
        {"user": USER, "message": "Ordered twice by mistake"},
        **as_customer,
    )
    third = call("POST", "/customer/deliveries", ORDER, **as_customer)["deliveries"][0]["id"]
    call("POST", f"/deliveries/{third}/responses", {"type": "ACCEPT", "reference": "SO-1043"})
    call(
        "POST",
        f"/deliveries/{third}/delivery-note",
        {
            "number": "LS-2026-4711",
            "delivered_at": "2026-11-23T10:33:00+02:00",
            "items": [{"id": "cola-1-5", "count": 1, "reason": "OUT_OF_STOCK"}],
            "proof": {"received_by": "Aino Aurora", "photo_urls": ["https://photos.supplier.example/ls-4711.jpg"]},
            "message": "One crate short: the next one comes on Thursday",
            "user": {"name": "Dirk Driver", "email": "dirk@supplier.example"},
        },
    )
    expired = {"id": "cola-1-5", "issue": "EXPIRED", "count": 1, "message": "Best before 2026-11-20"}
    call("POST", f"/customer/deliveries/{third}/claims", {"items": [expired], "user": USER}, **as_customer)
    call("GET", "/claims?status=OPEN&limit=2")
    call("GET", "/account/claims")
    answer = {
        "items": [{"id": "cola-1-5", "accepted": 1, "resolution": "CREDIT", "reason": "Old stock, sorry"}],
        "user": {"name": "Sami Supplier", "email": "sami@supplier.example"},
    }
    call("POST", f"/deliveries/{third}/claims/1/answer", answer)
    call("POST", f"/customer/deliveries/{delivery_id}/claims/1/withdraw", {}, **as_customer)
    standing = "/customer/standing-orders/weekly-cola"
    call("PUT", standing, STANDING_ORDER, **as_customer)
    call("GET", "/customer/standing-orders", **as_customer)
    call("GET", standing, **as_customer)
    call("PUT", f"{standing}/occurrences/2026-12-03", {"skip": True}, **as_customer)
    call("GET", f"{standing}/occurrences?from=2026-11-30&to=2026-12-07", **as_customer)
    call("GET", "/customers/aurora/standing-orders")
    call("GET", "/customers/aurora/standing-orders/weekly-cola")
    call("GET", "/customers/aurora/standing-orders/weekly-cola/occurrences?from=2026-11-30&to=2026-12-07")
    call("PATCH", "/customers/aurora/standing-orders/weekly-cola", {"paused": True})
    call("DELETE", standing, status=204, **as_customer)
    call("PUT", standing, STANDING_ORDER, **as_customer)
    call("DELETE", "/customers/aurora/standing-orders/weekly-cola", status=204)
    call("GET", "/account/webhook-deliveries?limit=1")
    call("GET", "/account/integration")
    token_id = call.examples["create_customer_token"]["response"]["id"]
    call("DELETE", f"/customers/aurora/tokens/{token_id}", status=204)
    call("DELETE", "/products/cola-1-5/customer-pricing/aurora", status=204)
    call("DELETE", "/account/settings/webhooks", status=204)
    event_id = call("GET", "/account/events?limit=1")["events"][0]["id"]
    call("POST", f"/account/events/{event_id}/resend", status=202)  # queued: the dispatcher makes the attempt
    call("DELETE", "/products/lemonade", status=204)
    call("GET", "/changes?after=0&limit=2&include=data")
    started = call(
        "POST",
        "/imports/products?dry_run=false",
        raw=EXAMPLE_FILE.encode(),
        headers={"Content-Type": "text/csv; charset=utf-8"},
        status=202,
    )
    import_turns.advance_imports(clock.after(60))
    call("GET", f"/imports/products/{started['id']}")
    call("GET", "/imports/products?limit=1")
    return call.examples


def masked(examples: dict) -> dict:
    """The examples with volatile fields replaced by a marker (present, not compared)."""
    return {name: _masked(example, VOLATILE | VOLATILE_OF.get(name, set())) for name, example in examples.items()}


def _masked(value, volatile: set, key=None):
    if key in volatile and value is not None:
        return "<volatile>"
    if isinstance(value, dict):
        return {k: _masked(v, volatile, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, volatile) for v in value]
    return value
