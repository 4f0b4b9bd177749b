"""Each value list and each rule exists once, in the domain: the shapes, the OpenAPI document and every use derive
from it, so changing the one place changes them all."""

from decimal import Decimal
from types import SimpleNamespace

import pytest

from chalicelib.domain import pricing
from chalicelib.domain.common import ValidationFailed, parse
from chalicelib.domain.delivery import ResponseBody, response_items
from chalicelib.domain.delivery_status import DeliveryStatus, DeliveryType, ResponseType
from chalicelib.domain.integration_status import IntegrationStatus
from chalicelib.domain.ordering import level_for
from chalicelib.domain.pricing import PricingStrategy
from chalicelib.domain.product import Image, validate_product
from chalicelib.domain.values import (
    DEFAULT_ORDER_BY,
    ORDERABLE_STATUSES,
    OrderBy,
    PricePer,
    ProductStatus,
    Role,
    order_by_of,
    price_per_of,
)
from chalicelib.domain.webhook import WebhookSettings


def test_the_value_lists_are_the_documented_ones():
    assert list(ProductStatus) == ["ACTIVE", "INACTIVE", "OUT_OF_STOCK"]
    assert ORDERABLE_STATUSES == {"ACTIVE", "OUT_OF_STOCK"}
    assert list(PricingStrategy) == ["VOLUME", "INCREMENTAL", "DIVISIBLE"]
    assert list(OrderBy) == ["vessel", "kg"] and DEFAULT_ORDER_BY == "vessel"
    assert list(PricePer) == ["vessel", "l", "kg", "100g"]
    assert list(DeliveryStatus) == ["REQUESTED", "ACCEPTED", "REJECTED", "CANCELLED", "DELIVERED"]
    assert list(ResponseType) == ["ACCEPT", "REJECT", "UPDATE"]
    assert list(DeliveryType) == ["DELIVERY", "RETURN"]
    assert list(Role) == ["supplier", "customer"]
    assert list(IntegrationStatus) == ["PENDING", "IMPORTED", "FAILED"]


def _enum(schema: dict) -> list:
    """The enum of a property, nullable or not."""
    return schema["enum"] if "enum" in schema else next(s["enum"] for s in schema["anyOf"] if "enum" in s)


def test_the_openapi_document_lists_the_enums_values():
    from app import app  # noqa: F401 - registers the routes the document lists
    from chalicelib.http import openapi

    doc = openapi.document()
    schemas = doc["components"]["schemas"]
    expected = {
        ("Product", "status"): ProductStatus,
        ("Product", "order_by"): OrderBy,
        ("Product", "price_per"): PricePer,
        ("ScaledPricing", "strategy"): PricingStrategy,
        ("OrderBody", "type"): DeliveryType,
        ("ResponseBody", "type"): ResponseType,
        ("DeliveryResponse", "type"): ResponseType,
        ("DeliverySummary", "type"): DeliveryType,
        ("DeliverySummary", "status"): DeliveryStatus,
        ("RequestItem", "order_by"): OrderBy,
        ("RequestItem", "price_per"): PricePer,
        ("IntegrationBody", "status"): IntegrationStatus,
        ("Integration", "status"): IntegrationStatus,
    }
    for (schema, field), values in expected.items():
        assert _enum(schemas[schema]["properties"][field]) == [v.value for v in values], (schema, field)
    status_parameter = next(p for p in doc["paths"]["/deliveries"]["get"]["parameters"] if p["name"] == "status")
    assert status_parameter["schema"]["enum"] == list(DeliveryStatus)
    integration_parameter = next(
        p for p in doc["paths"]["/deliveries"]["get"]["parameters"] if p["name"] == "integration"
    )
    assert integration_parameter["schema"]["enum"] == list(IntegrationStatus)


def test_the_roles_of_tokens_are_the_domains():
    from chalicelib.http import auth
    from chalicelib.service import accounts

    assert auth.SUPPLIER is accounts.SUPPLIER is Role.SUPPLIER
    assert auth.CUSTOMER is accounts.CUSTOMER is Role.CUSTOMER


def test_order_by_and_price_per_defaults():
    assert order_by_of({}) == "vessel" and order_by_of({"order_by": "kg"}) == "kg"
    assert price_per_of({}) == "vessel" and price_per_of({"order_by": "kg"}) == "kg"
    assert price_per_of({"order_by": "kg", "price_per": "100g"}) == "100g"


PRODUCT = {"id": "p1", "price": 100, "pricing": {"strategy": "VOLUME", "price_points": [{"from": 2, "price": 90}]}}
OWN = {"price": 80}
GROUP = {"pricing": {"strategy": "VOLUME", "price_points": [{"from": 5, "price": 70}]}}


@pytest.mark.parametrize(
    "customer, customer_pricing, groups, expected",
    [
        (None, {}, {}, PRODUCT),
        ({"price_group": "g"}, {}, {"p1": {"g": GROUP}}, GROUP),
        ({"price_group": "g"}, {"p1": OWN}, {"p1": {"g": GROUP}}, OWN),
        ({"price_group": "other"}, {}, {"p1": {"g": GROUP}}, PRODUCT),
        ({}, {"p1": {}}, {}, PRODUCT),  # a level that sets no price falls through
    ],
)
def test_an_order_and_the_customer_catalogue_pick_the_same_pricing(customer, customer_pricing, groups, expected):
    context = SimpleNamespace(
        settings={}, customer=customer, products={"p1": PRODUCT}, customer_pricing=customer_pricing, price_groups=groups
    )
    # What GET /customer/products shows (service/customer_portal.py) is what an order is priced at.
    shown = pricing.price_for_customer(PRODUCT, customer, customer_pricing.get("p1"), groups.get("p1"))
    assert level_for(PRODUCT, context) is shown is expected


def test_min_order_count_is_checked_against_the_pricing_modules_smallest_positive_from():
    product = {
        "id": "p1",
        "status": "ACTIVE",
        "category": "c",
        "name": "Beer",
        "pricing": {"strategy": "VOLUME", "price_points": [{"from": 0, "price": 9}, {"from": 3, "price": 8}]},
    }
    assert pricing.smallest_positive_from(product) == Decimal(3)
    assert validate_product({**product, "min_order_count": 3})["min_order_count"] == 3
    with pytest.raises(ValidationFailed) as failed:
        validate_product({**product, "min_order_count": 2})
    assert [(e.path, e.message) for e in failed.value.errors] == [
        ("min_order_count", "must equal the smallest positive 'from' of the price points")
    ]


def _messages(call) -> dict:
    with pytest.raises(ValidationFailed) as failed:
        call()
    return {e.path: e.message for e in failed.value.errors}


def test_products_and_responses_share_the_bundle_rules_and_their_messages():
    fractional = {"type": "CT", "size": Decimal("1.5")}
    stray_pallet_bundle = {"type": "CT", "size": 6, "pallet_bundle": {"type": "CT", "size": 6}}
    base = {"id": "p1", "status": "ACTIVE", "category": "c", "name": "Beer"}
    in_product = _messages(lambda: validate_product({**base, "bundles": [fractional, stray_pallet_bundle]}))
    request_items = [{"id": "p1", "count": 1, "bundle": None, "vessel_count": 1}]
    body = parse(ResponseBody, {"type": "ACCEPT", "items": [{"id": "p1", "bundle": fractional}]})
    in_response = _messages(lambda: response_items(body, request_items))
    assert in_product["bundles[0].size"] == in_response["items[0].bundle.size"]
    body = parse(ResponseBody, {"type": "ACCEPT", "items": [{"id": "p1", "bundle": stray_pallet_bundle}]})
    in_response = _messages(lambda: response_items(body, request_items))
    assert in_product["bundles[1].pallet_bundle"] == in_response["items[0].bundle.pallet_bundle"]


def test_orders_and_responses_share_the_whole_count_rule():
    from chalicelib.domain.delivery import whole_count_errors

    assert whole_count_errors(Decimal("1.5"), {"order_by": "kg"}, "count") == []
    assert whole_count_errors(Decimal(2), {}, "count") == []
    [error] = whole_count_errors(Decimal("1.5"), {"order_by": "vessel"}, "count")
    assert error.message == "must be a whole number unless the product is ordered by kg"


def test_images_and_webhooks_share_the_url_check():
    for url in ("ftp://example.com/x", "/relative", "https://exa mple.com"):
        image = _messages(lambda: parse(Image, {"url": url}))
        webhook = _messages(lambda: parse(WebhookSettings, {"url": url}))
        assert image["url"] == webhook["url"] == "must be an absolute http or https URL"
    # The webhook adds its own rules on top; an image URL may carry credentials.
    assert parse(Image, {"url": "https://user:pw@example.com/a.png"})
    assert _messages(lambda: parse(WebhookSettings, {"url": "https://user:pw@example.com/"})) == {
        "url": "must not contain credentials; use authorization"
    }
