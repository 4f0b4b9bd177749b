"""Responses list fields in the interface's order, `id` first, nested objects too (decisions §3)."""

import json
import typing

import pytest
from pydantic import BaseModel, RootModel

from chalicelib.domain import field_order
from chalicelib.http.route_table import all_operations
from tests.api.deliveries_helpers import ADDRESS, CONTACT, respond, shop  # noqa: F401 (fixture)

FULL_PRODUCT = {
    "image": {"last_modified": "2024-01-01", "etag": "e1", "url": "https://example.com/a.png"},
    "custom_properties": {"b": 1, "a": "x"},
    "gtin": "4006381333931",
    "pricing": {
        "date_overrides": [{"price_points": [{"price": 90, "from": 1}], "from_date": "2026-12-01"}],
        "price_points": [{"price": 100, "from": 1}, {"price": 80, "from": 6}],
        "strategy": "VOLUME",
    },
    "dates_with_no_delivery": ["2026-12-24"],
    "delivery_date_overrides": {"2026-12-23": {"cutoff": "12:00", "lead_days": 0}},
    "delivery_days": {"1": {"cutoff": "10:00", "lead_days": 1}, "0": {"lead_days": 2}},
    "min_order_count": 1,
    "price_per": "vessel",
    "price": 100,
    "bundles": [
        {"pallet_bundle": {"size": 6, "type": "CT"}, "size": 10, "type": "PX"},
        {"size": 6, "type": "CT", "id_override": "cola-ct", "id": "ct"},
    ],
    "vessel": {"type": "BO", "unit": "l", "size": 1.5, "id": "v"},
    "order_by": "vessel",
    "name": "Cola 1.5 l",
    "category": "drinks",
    "status": "ACTIVE",
}


def keys(response_or_value):
    value = json.loads(response_or_value.body) if hasattr(response_or_value, "body") else response_or_value
    return list(value)


def test_a_product_reads_in_the_interface_order_however_it_was_written(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    assert api.put("/products/cola", FULL_PRODUCT).status_code == 200
    for response in (api.get("/products/cola"), api.patch("/products/cola", {"price": 101})):
        product = json.loads(response.body)
        assert keys(product) == list(field_order.PRODUCT.fields)
        assert keys(product["vessel"]) == ["id", "size", "unit", "type"]
        assert [keys(b) for b in product["bundles"]] == [
            ["type", "size", "pallet_bundle"],
            ["id", "id_override", "type", "size"],
        ]
        assert keys(product["bundles"][0]["pallet_bundle"]) == ["type", "size"]
        assert keys(product["pricing"]) == ["strategy", "price_points", "date_overrides"]
        assert keys(product["pricing"]["price_points"][0]) == ["from", "price"]
        assert keys(product["pricing"]["date_overrides"][0]) == ["from_date", "price_points"]
        assert keys(product["delivery_days"]) == ["0", "1"]
        assert keys(product["delivery_days"]["1"]) == ["lead_days", "cutoff"]
        assert keys(product["custom_properties"]) == ["a", "b"]
        assert keys(product["image"]) == ["url", "etag", "last_modified"]
    listed = json.loads(api.get("/products").body)
    assert keys(listed["products"][0])[:4] == ["id", "status", "category", "name"]


def test_a_customer_reads_table_fields_first_then_the_profile(api):
    body = {"contact": CONTACT, "address": ADDRESS, "company": "Bar Oy", "name": "Bar"}
    api.put("/customers/c1", body)
    api.patch("/customers/c1", {"dates_with_no_delivery": ["2026-12-24"], "price_group": "gold"})
    customer = json.loads(api.get("/customers/c1").body)
    assert keys(customer) == [
        "id",
        "name",
        "price_group",
        "dates_with_no_delivery",
        "company",
        "address",
        "contact",
        "substitutions",  # decisions §18: after the interface's fields (and the profile)
    ]
    assert keys(customer["address"]) == ["address1", "zip", "city", "country"]
    assert keys(customer["contact"]) == ["name", "email"]


def test_account_settings_read_table_fields_then_timezone(api):
    response = api.patch(
        "/account/settings/deliveries", {"timezone": "Europe/Helsinki", "delivery_days": {"1": {"lead_days": 1}}}
    )
    assert keys(response) == [
        "allow_delivery_comments",
        "allow_product_comments",
        "delivery_days",
        "timezone",
        "claim_window_hours",  # decisions §18
    ]


def test_a_delivery_reads_id_first_and_nested_in_order(shop):
    placed = shop.post(
        "/customer/deliveries",
        {
            "user": {"email": "o@example.com", "name": "O"},
            "message": "hi",
            "items": [{"count": 2, "id": "beer", "bundle": {"id": "crate"}}],
        },
        token="customer-c1-token",
    )
    delivery_id = json.loads(placed.body)["deliveries"][0]["id"]
    assert respond(shop, delivery_id, {"type": "ACCEPT", "reference": "R1"}).status_code == 200
    delivery = json.loads(shop.get(f"/deliveries/{delivery_id}").body)
    assert keys(delivery) == ["id", "type", "status", "customer", "request", "responses", "integration"]
    assert keys(delivery["customer"]) == ["id", "company", "address", "contact"]
    request = delivery["request"]
    assert keys(request) == [
        "timestamp",
        "company",
        "customer_id",
        "cost_center",
        "address",
        "scheduled",
        "user",
        "message",
        "items",
    ]
    assert keys(request["user"]) == ["name", "email"]
    item = request["items"][0]
    assert keys(item)[:7] == ["id", "name", "vessel", "count", "bundle", "vessel_count", "price"]
    assert keys(item["bundle"])[:3] == ["id", "type", "size"]
    assert keys(delivery["responses"][0])[:3] == ["type", "timestamp", "reference"]
    summary = json.loads(shop.get("/deliveries").body)["deliveries"][0]
    assert keys(summary)[:3] == ["id", "type", "status"]


def test_every_response_model_has_a_field_order():
    missing = sorted(
        {
            op.response_name
            for op in all_operations()
            if op.response_name and op.response_name not in field_order.BY_MODEL
        }
        - {"dict"}
    )
    assert not missing, (
        f"response models without a field order: {missing}; add them to chalicelib/domain/field_order.py BY_MODEL"
    )


def _model_of(annotation):
    """The pydantic model inside Optional[...], list[...], dict[str, ...] or Annotated[...], if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _check(model, order, where):
    if isinstance(model, type) and issubclass(model, RootModel):
        inner = _model_of(model.model_fields["root"].annotation)
        assert isinstance(order, field_order.Map), where
        return _check(inner, order.values, where)
    if isinstance(order, field_order.Map):
        return
    names = [info.alias or name for name, info in model.model_fields.items()]
    known = [name for name in order.fields if name in names]
    assert names == known, f"{where}: the model lists {names}, the field order {order.fields}"
    for name, info in model.model_fields.items():
        nested = _model_of(info.annotation)
        if nested is not None and (info.alias or name) in order.nested:
            _check(nested, order.nested[info.alias or name], f"{where}.{name}")


@pytest.mark.parametrize("name", sorted(field_order.BY_MODEL))
def test_response_models_list_fields_in_the_rendered_order(name):
    """So the OpenAPI schemas show the order the responses have."""
    models = {op.response_name: op.response_model for op in all_operations()}
    _check(models[name], field_order.BY_MODEL[name], name)
