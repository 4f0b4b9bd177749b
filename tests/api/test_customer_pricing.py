"""Customer pricing of one product for one customer, and the scaled pricing rules shared by products, customer
pricing and price groups (interface: PUT /products/:id/customer-pricing/:customer; decisions §6)."""

import pytest

from tests.api.customer_support import customer_token, dynamodb_calls, make_customer, make_product, volume
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem

PATH = "/products/beer/customer-pricing/bar-1"


@pytest.fixture
def ready(api):
    make_product(api, "beer", price=250)
    make_customer(api, "bar-1")
    return api


def test_put_returns_the_request_body_and_get_reads_it_back(ready):
    body = {
        "price": 199,
        "pricing": volume(
            (1, 210),
            (6, 190),
            date_overrides=[
                {"from_date": "2026-06-01", "to_date": "2026-06-30", "price_points": [{"from": 1, "price": 150}]}
            ],
        ),
    }
    response = ready.put(PATH, body)
    assert response.status_code == 200
    assert response.data == body
    get = ready.get(PATH)
    assert get.status_code == 200
    assert get.data == body


@pytest.mark.parametrize("body", [{"price": 0}, {"pricing": volume((1, 100))}, {}])
def test_put_accepts_either_property_or_none(ready, body):
    response = ready.put(PATH, body)
    assert response.status_code == 200
    assert response.data == body
    assert ready.get(PATH).data == body


def test_put_is_a_full_replacement(ready):
    ready.put(PATH, {"price": 100, "pricing": volume((1, 90))})
    assert ready.put(PATH, {"price": 80}).data == {"price": 80}
    assert ready.get(PATH).data == {"price": 80}
    assert ready.put(PATH, {"pricing": volume((1, 70))}).data == {"pricing": volume((1, 70))}
    assert ready.get(PATH).data == {"pricing": volume((1, 70))}


def test_get_without_pricing_is_404(ready):
    response = ready.get(PATH)
    assert_problem(response, 404, "not-found")


def test_delete_removes_the_pricing(ready):
    ready.put(PATH, {"price": 100})
    response = ready.delete(PATH)
    assert response.status_code == 204
    assert response.body in (b"", "", None)
    assert ready.get(PATH).status_code == 404
    assert ready.delete(PATH).status_code == 404


def test_pricing_is_per_customer_and_per_product(ready):
    make_customer(ready, "bar-2")
    make_product(ready, "wine", price=900)
    ready.put(PATH, {"price": 100})
    assert ready.get("/products/beer/customer-pricing/bar-2").status_code == 404
    assert ready.get("/products/wine/customer-pricing/bar-1").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/products/nothing/customer-pricing/bar-1",
        "/products/beer/customer-pricing/nobody",
        "/products/b.d/customer-pricing/bar-1",
    ],
)
def test_put_needs_an_existing_product_and_customer(ready, path):
    response = ready.put(path, {"price": 100})
    assert_problem(response, 404, "not-found")
    assert ready.get(path).status_code == 404


def test_pricing_of_another_account_reads_as_404(ready):
    ready.put(PATH, {"price": 100})
    assert ready.get(PATH, token=OTHER_TOKEN).status_code == 404
    assert ready.put(PATH, {"price": 1}, token=OTHER_TOKEN).status_code == 404
    assert ready.delete(PATH, token=OTHER_TOKEN).status_code == 404
    assert ready.get(PATH).data == {"price": 100}


@pytest.mark.parametrize(
    "body, paths",
    [
        ({"price": -1}, ["price"]),
        ({"price": 1.5}, ["price"]),
        ({"price": "100"}, ["price"]),
        ({"price": True}, ["price"]),
        ({"discount": 5}, ["discount"]),
        ({"pricing": {"price_points": [{"from": 1, "price": 1}]}}, ["pricing.strategy"]),
        ({"price": -1, "pricing": volume((1, 1), (1, 2))}, ["price", "pricing.price_points[1].from"]),
    ],
)
def test_put_validation(ready, body, paths):
    response = ready.put(PATH, body)
    assert response.status_code == 400
    assert problem_paths(response) == paths
    assert ready.get(PATH).status_code == 404


@pytest.mark.parametrize("raw", ["[]", "100", "{"])
def test_put_refuses_bodies_that_are_not_objects(ready, raw):
    response = ready.put(PATH, raw=raw)
    assert response.status_code == 400
    assert problem_paths(response) == ["body"]


def test_kg_products_take_fractional_volume_points(ready):
    make_product(ready, "cheese", order_by="kg", price=1500)
    body = {"pricing": volume((0.5, 1600), (2.5, 1400))}
    response = ready.put("/products/cheese/customer-pricing/bar-1", body)
    assert response.status_code == 200
    assert response.data == body


def test_a_product_does_not_switch_between_kg_and_vessel_under_pricing_that_would_break(ready):
    """decisions §6: `from` is whole unless the product goes by kg with VOLUME, and kg takes only VOLUME. Pricing was
    validated against the product's order_by, so a switch that would break it is refused naming order_by."""
    make_product(ready, "cheese", order_by="kg", price=1500)
    kg_only = {"pricing": volume((0.5, 1600), (2.5, 1400))}
    assert ready.put("/products/cheese/customer-pricing/bar-1", kg_only).status_code == 200
    before = ready.get("/products/cheese").data
    refused = ready.patch("/products/cheese", {"order_by": "vessel"})
    assert_problem(refused, 400, "validation-error")
    assert problem_paths(refused) == ["order_by"] and "customer bar-1" in refused.data["errors"][0]["message"]
    assert ready.get("/products/cheese").data == before
    make_product(ready, "beer", price=250)  # vessel, with a price group only kg refuses
    incremental = {"strategy": "INCREMENTAL", "price_points": [{"from": 1, "price": 100}]}
    assert ready.put("/products/beer/price-groups", {"gold": {"pricing": incremental}}).status_code == 200
    refused = ready.put("/products/beer", {**ready.get("/products/beer").data, "order_by": "kg"})
    assert problem_paths(refused) == ["order_by"] and "price group gold" in refused.data["errors"][0]["message"]
    assert ready.delete("/products/cheese/customer-pricing/bar-1").status_code == 204
    assert ready.patch("/products/cheese", {"order_by": "vessel"}).data["order_by"] == "vessel"
    make_product(ready, "water", price=90)  # whole points fit both: the switch is taken
    assert ready.put("/products/water/customer-pricing/bar-1", {"pricing": volume((1, 80))}).status_code == 200
    assert ready.patch("/products/water", {"order_by": "kg"}).status_code == 200


def test_the_smallest_from_need_not_match_the_product_minimum(ready):
    make_product(ready, "crate", min_order_count=6, pricing=volume((6, 100)))
    assert ready.put("/products/crate/customer-pricing/bar-1", {"pricing": volume((12, 90))}).status_code == 200


@pytest.mark.pending_feed  # the write's own requests: the sequencer's come later, in the background
def test_put_reads_once_and_writes_once(ready):
    with dynamodb_calls() as calls:
        assert ready.put(PATH, {"price": 100}).status_code == 200
    assert calls == ["BatchGetItem", "TransactWriteItems"]


def test_customer_tokens_are_forbidden(ready):
    token = customer_token(ready, "bar-1")
    assert ready.get(PATH, token=token).status_code == 403
    assert ready.put(PATH, {"price": 1}, token=token).status_code == 403
    assert ready.delete(PATH, token=token).status_code == 403


# --- one scaled pricing validator for products, customer pricing and price groups ---

INVALID_PRICING = [
    ("VOLUME", {"strategy": "VOLUME", "price_points": []}, ["price_points"]),
    ("VOLUME", {"strategy": "CHEAPEST", "price_points": [{"from": 1, "price": 1}]}, ["strategy"]),
    ("VOLUME", volume((1, 100), (1, 90)), ["price_points[1].from"]),
    ("VOLUME", volume((-1, 100)), ["price_points[0].from"]),
    ("VOLUME", volume((1.5, 100)), ["price_points[0].from"]),
    ("VOLUME", volume((1, -100)), ["price_points[0].price"]),
    ("VOLUME", volume((1, 1.5)), ["price_points[0].price"]),
    ("kg", {"strategy": "INCREMENTAL", "price_points": [{"from": 1, "price": 100}]}, ["strategy"]),
    ("kg", {"strategy": "DIVISIBLE", "price_points": [{"from": 1, "price": 100}]}, ["strategy"]),
    ("VOLUME", {"strategy": "INCREMENTAL", "price_points": [{"from": 0.5, "price": 100}]}, ["price_points[0].from"]),
    (
        "VOLUME",
        volume(
            (1, 100),
            date_overrides=[
                {"from_date": "2026-06-01", "to_date": "2026-06-30", "price_points": [{"from": 1, "price": 90}]},
                {"from_date": "2026-06-30", "price_points": [{"from": 1, "price": 80}]},
            ],
        ),
        ["date_overrides[1]"],
    ),
    (
        "VOLUME",
        volume(
            (1, 100),
            date_overrides=[
                {"from_date": "2026-06-30", "to_date": "2026-06-01", "price_points": [{"from": 1, "price": 90}]}
            ],
        ),
        ["date_overrides[0].to_date"],
    ),
    (
        "VOLUME",
        volume((1, 100), date_overrides=[{"from_date": "2026-02-30", "price_points": [{"from": 1, "price": 90}]}]),
        ["date_overrides[0].from_date"],
    ),
    (
        "VOLUME",
        volume(
            (1, 100),
            date_overrides=[
                {"from_date": "2026-06-01", "price_points": [{"from": 2, "price": 9}, {"from": 2, "price": 8}]}
            ],
        ),
        ["date_overrides[0].price_points[1].from"],
    ),
]


def _product_for(api, kind):
    if kind == "kg":
        make_product(api, "cheese", order_by="kg")
        return "cheese"
    make_product(api, "beer")
    return "beer"


@pytest.mark.parametrize("kind, pricing, paths", INVALID_PRICING)
def test_scaled_pricing_rules_are_the_same_on_products_customer_pricing_and_price_groups(api, kind, pricing, paths):
    product_id = _product_for(api, kind)
    make_customer(api, "bar-1")
    product = api.get(f"/products/{product_id}").data

    on_product = api.put(f"/products/{product_id}", {**product, "pricing": pricing})
    on_customer = api.put(f"/products/{product_id}/customer-pricing/bar-1", {"pricing": pricing})
    on_group = api.put(f"/products/{product_id}/price-groups", {"gold": {"pricing": pricing}})

    assert (on_product.status_code, on_customer.status_code, on_group.status_code) == (400, 400, 400)
    assert problem_paths(on_product) == [f"pricing.{p}" for p in paths]
    assert problem_paths(on_customer) == [f"pricing.{p}" for p in paths]
    assert problem_paths(on_group) == [f"gold.pricing.{p}" for p in paths]


@pytest.mark.parametrize(
    "kind, pricing",
    [
        ("VOLUME", volume((1, 100), (6, 90))),
        ("VOLUME", {"strategy": "INCREMENTAL", "price_points": [{"from": 1, "price": 100}, {"from": 6, "price": 90}]}),
        ("VOLUME", {"strategy": "DIVISIBLE", "price_points": [{"from": 1, "price": 100}, {"from": 24, "price": 80}]}),
        ("VOLUME", volume((0, 100))),
        ("kg", volume((0.25, 100), (2.5, 90))),
        (
            "VOLUME",
            volume(
                (1, 100),
                date_overrides=[
                    {"from_date": "2026-06-01", "to_date": "2026-06-30", "price_points": [{"from": 1, "price": 90}]},
                    {"from_date": "2026-07-01", "price_points": [{"from": 1, "price": 80}]},
                ],
            ),
        ),
    ],
)
def test_valid_scaled_pricing_is_accepted_everywhere(api, kind, pricing):
    product_id = _product_for(api, kind)
    make_customer(api, "bar-1")
    product = api.get(f"/products/{product_id}").data
    assert api.put(f"/products/{product_id}", {**product, "pricing": pricing}).status_code == 200
    assert api.put(f"/products/{product_id}/customer-pricing/bar-1", {"pricing": pricing}).status_code == 200
    assert api.put(f"/products/{product_id}/price-groups", {"gold": {"pricing": pricing}}).status_code == 200
    # Each was stored as given, not only accepted.
    assert api.get(f"/products/{product_id}").data["pricing"] == pricing
    assert api.get(f"/products/{product_id}/customer-pricing/bar-1").data == {"pricing": pricing}
    assert api.get(f"/products/{product_id}/price-groups").data == {"gold": {"pricing": pricing}}


def test_deleting_the_product_removes_its_pricing(ready):
    """A product created again under the same id must not inherit the pricing of the deleted one."""
    assert ready.put(PATH, {"price": 1200}).status_code == 200
    assert ready.put("/products/beer/price-groups", {"gold": {"price": 1100}}).status_code == 200
    assert ready.delete("/products/beer").status_code == 204
    make_product(ready, "beer", price=250)
    assert ready.get(PATH).status_code == 404
    assert ready.get("/products/beer/price-groups").data == {}


def test_a_product_created_again_inherits_no_pricing_even_when_the_purge_never_ran(ready, monkeypatch):
    """Issue 26: a kill -9 between the delete's transaction and the purge of its pricing leaves the old items in the
    table; they belong to the deleted product and count as none for a product created again with the id."""
    ready.patch("/customers/bar-1", {"price_group": "gold"})
    assert ready.put(PATH, {"price": 1200}).status_code == 200
    assert ready.put("/products/beer/price-groups", {"gold": {"price": 1100}}).status_code == 200
    monkeypatch.setattr("chalicelib.store.pricing.retiring_all_of_product", lambda *args: [])
    assert ready.delete("/products/beer").status_code == 204
    make_product(ready, "beer", price=250)
    head = ready.get("/changes?after=latest").data["max_sequence"]

    assert ready.get(PATH).status_code == 404
    assert ready.get("/products/beer/price-groups").data == {}
    token = customer_token(ready, "bar-1")
    shown = ready.get("/customer/products", token=token).data["products"]
    assert [(p["id"], p["price"]) for p in shown] == [("beer", 250)]
    assert ready.delete(PATH).status_code == 404
    changes = ready.get("/changes?include=data").data["changes"]
    assert [c["data"] for c in changes if c["resource"] == "customer-pricing"] == [None]
    assert ready.get(f"/changes?after={head}").data["changes"] == []  # the refused delete appended nothing

    assert ready.put(PATH, {"price": 900}).status_code == 200
    assert ready.get(PATH).data == {"price": 900}
    assert [(p["id"], p["price"]) for p in ready.get("/customer/products", token=token).data["products"]] == [
        ("beer", 900)
    ]


def test_a_price_of_the_product_created_again_outlives_the_deleted_products_pricing_retirement(ready, monkeypatch):
    """Issue 43: a product deleted and created again, a customer price written for the new one between the delete
    and the retirement of the old one's pricing (which read the old items before): the new price stays, and its
    change is in the feed once, the retirement none."""
    from chalicelib.store import pricing

    assert ready.put(PATH, {"price": 1200}).status_code == 200
    real = pricing.retiring_all_of_product

    def meanwhile(account, product_id, born, now):
        planned = real(account, product_id, born, now)  # the old items, read
        make_product(ready, "beer", price=250)
        assert ready.put(PATH, {"price": 900}).status_code == 200
        return planned

    monkeypatch.setattr(pricing, "retiring_all_of_product", meanwhile)
    head = ready.get("/changes?after=latest").data["max_sequence"]
    assert ready.delete("/products/beer").status_code == 204
    assert ready.get(PATH).data == {"price": 900}
    assert [(c["type"], c["id"]) for c in ready.get(f"/changes?after={head}").data["changes"]] == [
        ("product.deleted", "beer"),
        ("product.created", "beer"),
        ("customer-pricing.updated", "beer"),
    ]


def test_pricing_validated_against_a_deleted_product_is_not_written_for_one_created_again(ready, monkeypatch):
    """The pricing write's check names the product born then: a product created again meanwhile refuses it."""
    from chalicelib.store import pricing

    read = pricing.read_customer_pricing("acme", "beer", "bar-1")
    assert ready.delete("/products/beer").status_code == 204
    make_product(ready, "beer", price=250)
    from chalicelib.domain.feed import Change, ChangeType
    from chalicelib.service import clock
    from chalicelib.store.unit_of_work import unit_of_work

    with unit_of_work("acme", clock.now()) as uow:
        uow.add(*pricing.putting_customer_pricing("acme", "beer", "bar-1", {"price": 1}, "vessel", read))
        uow.record(Change(ChangeType.CUSTOMER_PRICING_UPDATED, "beer", customer_id="bar-1"))
        assert isinstance(uow.commit(), pricing.Stale)
    assert ready.get(PATH).status_code == 404
