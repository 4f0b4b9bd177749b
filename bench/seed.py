"""The data the benchmark measures against, made through the service's own use cases and routes."""

import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from chalicelib.domain.errors import Busy
from chalicelib.service import accounts, claims, deliveries, ordering
from chalicelib.store import tokens

# 300 and 3000 deliveries, 20 of them ACCEPTED in each; ids of equal length so item sizes match exactly.
SMALL, LARGE = "bench0300", "bench3000"
ACCEPTED_PER_ACCOUNT = 20
USER = {"name": "Bench User", "email": "bench@example.com"}


@dataclass
class World:
    operations: list  # (name, method, path, body, target requests)
    status_pages: object  # meter -> {"small": capacity, "large": capacity}
    placed: dict  # account -> the ids of its deliveries (an order answered 409 and placed again leaves a gap)


def _catalogue(call) -> None:
    call("PUT", "/categories/beer", {"name": "Beer"})
    for n in range(1, 11):
        product = {
            "id": f"p{n:04d}",
            "status": "ACTIVE",
            "category": "beer",
            "name": f"Lager {n}",
            "vessel": {"size": 0.33, "unit": "l", "type": "BO"},
            "bundles": [{"id": "crate", "type": "CT", "size": 24}, {"type": "PX", "size": 40}],
            "price": 150 + n,
            "pricing": {
                "strategy": "INCREMENTAL",
                "price_points": [{"from": 1, "price": 160}, {"from": 6, "price": 150}],
            },
        }
        status, _ = call("PUT", f"/products/{product['id']}", product)
        assert status == 200, status
    call(
        "PUT",
        "/customers/c1",
        {
            "name": "Bar One",
            "company": "Bar One Oy",
            "contact": USER,
            "address": {"address1": "Main St 1", "zip": "00100", "city": "Helsinki", "country": "FI"},
        },
    )
    call("PATCH", "/customers/c1", {"price_group": "gold"})
    call("PUT", "/products/p0001/customer-pricing/c1", {"price": 140})
    call("PUT", "/products/p0002/price-groups", {"gold": {"price": 145}})
    # Deposits (decisions §15): a lager whose bottles, crates and pallets carry theirs.
    for deposit_id, price in (("bottle", 8), ("crate", 150), ("pallet", 1500)):
        call("PUT", f"/deposits/{deposit_id}", {"name": deposit_id.title(), "price": price})
    status, _ = call("PUT", "/products/d0001", {
        "status": "ACTIVE", "category": "beer", "name": "Lager with deposits", "price": 150,
        "vessel": {"size": 0.5, "unit": "l", "type": "BO", "deposit": "bottle"},
        "bundles": [{"type": "CR", "size": 20, "deposit": "crate"}, {"type": "PX", "size": 40, "deposit": "pallet"}],
    })  # fmt: skip
    assert status == 200, status


def _orders(account: str, count: int) -> list[int]:
    """Place `count` one-item orders (in parallel: DynamoDB Local takes it) and accept 20 spread among them."""
    order = {"items": [{"id": "p0003", "count": 2, "bundle": {"id": "crate"}}], "user": USER}

    def place(_):
        while True:  # 409 Busy: the account's feed head stayed contended (docs/feed.md); a client retries
            try:
                return ordering.place_order(account, "c1", order)[0]["id"]
            except Busy:
                continue

    with ThreadPoolExecutor(8) as pool:
        placed = list(pool.map(place, range(count)))
    for delivery_id in random.Random(7).sample(placed, ACCEPTED_PER_ACCOUNT):
        deliveries.respond(account, str(delivery_id), {"type": "ACCEPT"})
    return placed


def build(call, token: str) -> World:
    accounts.create_account(SMALL, "Bench supplier", token)
    _catalogue(call)
    _, customer_token = tokens.create(SMALL, "customer", "c1")
    placed = _orders(SMALL, 300)

    large_token = token + "-large"
    accounts.create_account(LARGE, "Bench supplier, large", large_token)
    _catalogue(lambda method, path, body=None: call(method, path, body, token=large_token))
    placed_large = _orders(LARGE, 3000)

    latest = placed[-1]
    requested = next(d for d in reversed(placed) if d != latest)
    as_customer = customer_token
    order = {"items": [{"id": "p0004", "count": 3}], "user": USER}
    # An order with deposits makes the requests an order makes; a receive that moves balances those of one that
    # does not (decisions §15, issue 27).
    deposit_order = {
        "items": [{"id": "d0001", "count": 1, "bundle": {"type": "PX", "size": 40}}],
        "empties": [{"id": "crate", "count": 10}],
        "user": USER,
    }
    plain_receipt = ordering.place_order(SMALL, "c1", order)[0]["id"]
    deposit_receipt = ordering.place_order(SMALL, "c1", deposit_order)[0]["id"]
    # A delivery note beside a receive (decisions §18): a plain one, and one that moves balances (its delivered
    # pallet, its empties) and delivers a substitute.
    plain_note = ordering.place_order(SMALL, "c1", order)[0]["id"]
    deposit_note = ordering.place_order(SMALL, "c1", deposit_order)[0]["id"]
    deposit_note_body = {
        "number": "LS-2",
        "items": [{"id": "d0001", "count": 1}],
        "substitutions": [{"for": "d0001", "id": "p0004", "count": 2}],
        "empties": [{"id": "crate", "count": 8}],
        "proof": {"received_by": "Anna", "photo_urls": ["https://photos.example/ls-2.jpg"]},
    }
    # Claims (decisions §18): a receipt with issues beside a receive, a claim on a delivered delivery, an answer.
    with_issues = ordering.place_order(SMALL, "c1", order)[0]["id"]
    issues = {"items": [{"id": "p0004", "issue": "DAMAGED", "count": 1, "evidence": ["https://photos.example/1.jpg"]}]}
    to_claim = ordering.place_order(SMALL, "c1", order)[0]["id"]
    claims.receive(SMALL, "c1", str(to_claim), {})
    claim = {"items": [{"id": "p0004", "issue": "EXPIRED", "count": 2}], "message": "best before last week"}
    to_answer = ordering.place_order(SMALL, "c1", order)[0]["id"]
    claims.receive(SMALL, "c1", str(to_answer), issues)
    answer = {"items": [{"id": "p0004", "accepted": 1, "resolution": "CREDIT"}]}
    # An amendment makes at most the requests of an order; a single read with its ETag no more than before (§16).
    to_amend = ordering.place_order(SMALL, "c1", order)[0]["id"]
    amendment = {"items": [{"id": "p0004", "count": 5}], "user": USER}
    operations = [
        ("GET /products/:id", "GET", "/products/p0001", None, 1),
        ("GET /products (page)", "GET", "/products", None, 1),
        (
            "POST /products",
            "POST",
            "/products",
            {"id": "new1", "status": "ACTIVE", "category": "beer", "name": "New one"},
            1,
        ),
        ("PUT /products/:id", "PUT", "/products/new2", {"status": "ACTIVE", "category": "beer", "name": "New two"}, 1),
        ("PATCH /products/:id", "PATCH", "/products/new2", {"price": 99}, 2),
        ("GET /categories (page)", "GET", "/categories", None, 1),
        ("GET /customers/:id", "GET", "/customers/c1", None, 1),
        ("GET /customers (page)", "GET", "/customers", None, 1),
        ("GET /account/settings/deliveries", "GET", "/account/settings/deliveries", None, 1),
        ("GET /deliveries/:id", "GET", f"/deliveries/{latest}", None, 1),
        ("GET /deliveries (page)", "GET", "/deliveries", None, 1),
        ("GET /deliveries?status=ACCEPTED (page)", "GET", "/deliveries?status=ACCEPTED", None, 1),
        ("POST /deliveries/:id/responses", "POST", f"/deliveries/{requested}/responses", {"type": "ACCEPT"}, 2),
        ("POST /customer/deliveries (order)", "POST", "/customer/deliveries", order, 3, as_customer),
        (
            "POST /customer/deliveries (order with deposits)",
            "POST",
            "/customer/deliveries",
            deposit_order,
            3,
            as_customer,
        ),
        (
            "POST /customer/deliveries/:id/receive",
            "POST",
            f"/customer/deliveries/{plain_receipt}/receive",
            {},
            3,
            as_customer,
        ),
        (
            "POST /customer/deliveries/:id/receive (moves balances)",
            "POST",
            f"/customer/deliveries/{deposit_receipt}/receive",
            {},
            3,
            as_customer,
        ),
        (
            "POST /deliveries/:id/delivery-note",
            "POST",
            f"/deliveries/{plain_note}/delivery-note",
            {"number": "LS-1"},
            3,
        ),
        (
            "POST /deliveries/:id/delivery-note (moves balances, a substitute)",
            "POST",
            f"/deliveries/{deposit_note}/delivery-note",
            deposit_note_body,
            3,
        ),
        (
            "POST /customer/deliveries/:id/receive (with issues: claim 1)",
            "POST",
            f"/customer/deliveries/{with_issues}/receive",
            issues,
            2,
            as_customer,
        ),
        (
            "POST /customer/deliveries/:id/claims",
            "POST",
            f"/customer/deliveries/{to_claim}/claims",
            claim,
            3,
            as_customer,
        ),
        ("POST /deliveries/:id/claims/:number/answer", "POST", f"/deliveries/{to_answer}/claims/1/answer", answer, 2),
        ("GET /deliveries/:id (with claims)", "GET", f"/deliveries/{to_answer}", None, 1),
        ("GET /claims (page)", "GET", "/claims", None, 1),
        ("GET /account/claims", "GET", "/account/claims", None, 2),
        ("GET /customer/deliveries/:id (with ETag)", "GET", f"/customer/deliveries/{to_amend}", None, 1, as_customer),
        (
            "POST /customer/deliveries/:id/amendments",
            "POST",
            f"/customer/deliveries/{to_amend}/amendments",
            amendment,
            3,
            as_customer,
        ),
        ("GET /deposits (page)", "GET", "/deposits", None, 1),
        ("GET /customers/:id/deposits", "GET", "/customers/c1/deposits", None, 1),
        ("GET /customer/products (page)", "GET", "/customer/products", None, None, as_customer),
        (
            "GET /customer/delivery-dates",
            "GET",
            "/customer/delivery-dates?products=p0001&days=14",
            None,
            1,
            as_customer,
        ),
    ]

    def status_pages(meter) -> dict:
        result = {}
        for name, token_of in (("small", token), ("large", large_token)):
            call("GET", "/deliveries?status=ACCEPTED", token=token_of)  # warm the token cache: count the page only
            meter.reset()
            status, _ = call("GET", "/deliveries?status=ACCEPTED", token=token_of)
            assert status == 200 and meter.requests == 1, (status, meter.requests)
            result[name] = round(meter.capacity, 2)
        return result

    return World(operations, status_pages, {SMALL: placed, LARGE: placed_large})
