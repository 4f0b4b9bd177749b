"""GET /openapi.json: a valid OpenAPI 3.1 document of every route, generated from the models the routes use."""

import subprocess
import sys

import pytest
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate

from app import app
from chalicelib.http import openapi, openapi_schemas

FALLBACK_VIEWS = ("method_not_allowed_", "not_found_", "head_", "options_")
PROBLEM_REF = "#/components/responses/Problem{}"


@pytest.fixture
def doc(api):
    response = api.get("/openapi.json", token=None)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    return response.data


def schema_check(doc, name, instance):
    """Validate a body the API rendered against a component schema of the served document."""
    schema = {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
    errors = [e.message for e in OAS31Validator(schema).iter_errors(instance)]
    assert errors == []


def test_document_is_valid_openapi_31_and_needs_no_token(doc):
    assert doc["openapi"] == "3.1.0"
    validate(doc)


def test_every_route_is_documented_with_its_methods_and_nothing_else(doc):
    routes = {
        (path, method.lower())
        for path, entries in app.routes.items()
        for method, entry in entries.items()
        if not entry.view_name.startswith(FALLBACK_VIEWS)
    }
    documented = {(path, method) for path, item in doc["paths"].items() for method in item}
    assert ("/products/{product_id}", "patch") in routes and ("/openapi.json", "get") in routes
    assert documented == routes


def test_operation_ids_are_unique(doc):
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    assert len(ids) == len(set(ids))


def test_both_authorization_forms_are_documented_and_open_routes_need_none(doc):
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearer"] == {"type": "http", "scheme": "bearer", "description": schemes["bearer"]["description"]}
    assert (schemes["token"]["type"], schemes["token"]["in"], schemes["token"]["name"]) == (
        "apiKey",
        "header",
        "Authorization",
    )
    assert doc["paths"]["/products"]["get"]["security"] == [{"bearer": []}, {"token": []}]
    assert doc["paths"]["/openapi.json"]["get"]["security"] == []
    assert "401" not in doc["paths"]["/openapi.json"]["get"]["responses"]


def parameters(operation):
    return {(p["in"], p["name"]): p for p in operation["parameters"]}


def test_paged_list_takes_limit_and_cursor(doc):
    params = parameters(doc["paths"]["/products"]["get"])
    assert params[("query", "limit")]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
    assert params[("query", "cursor")]["schema"]["type"] == "string"
    assert ("query", "limit") not in parameters(doc["paths"]["/products/{product_id}"]["get"])


def test_path_parameters_come_from_the_path(doc):
    params = parameters(doc["paths"]["/categories/{category_id}"]["put"])
    assert params[("path", "category_id")] == {
        "name": "category_id",
        "in": "path",
        "required": True,
        "description": "The category's id (`[a-zA-Z0-9_-]`).",
        "schema": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[a-zA-Z0-9_-]+$"},
    }


def test_path_parameters_are_typed_as_the_ids_the_api_answers(doc):
    schemas = {
        (path, p["name"]): p["schema"]
        for path, item in doc["paths"].items()
        for operation in item.values()
        for p in operation["parameters"]
        if p["in"] == "path"
    }
    assert schemas[("/deliveries/{delivery_id}", "delivery_id")] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 999999999999,
    }
    assert {s["type"] for (_, name), s in schemas.items() if name == "delivery_id"} == {"integer"}
    for name in ("product_id", "customer_id", "import_id", "deposit_id"):
        assert {s.get("pattern") for (_, n), s in schemas.items() if n == name} == {"^[a-zA-Z0-9_-]+$"}, name
    assert schemas[("/deposits/{deposit_id}", "deposit_id")]["maxLength"] == 64


def test_delivery_paths_answer_404_for_what_is_no_integer_id(api):
    for path in ("/deliveries/abc", "/deliveries/0", "/deliveries/1.5", "/deliveries/-1"):
        response = api.get(path)
        assert (response.status_code, response.data["type"]) == (404, "not-found"), path


def _request_side(doc):
    """Component names only request bodies reach (bodies' own refs and what they refer to)."""
    schemas = doc["components"]["schemas"]
    pending = [
        media["schema"]
        for item in doc["paths"].values()
        for operation in item.values()
        for media in operation.get("requestBody", {}).get("content", {}).values()
    ]
    seen = set()
    while pending:
        for node in openapi_schemas.objects_in(pending.pop()):
            name = node.get("$ref", "").removeprefix(openapi_schemas.REF_PREFIX)
            if name in schemas and name not in seen:
                seen.add(name)
                pending.append(schemas[name])
    return seen


def test_optional_request_fields_carry_no_default(doc):
    schemas = doc["components"]["schemas"]
    request = _request_side(doc)
    assert {"NewProduct", "ProductInput", "ProductPatch", "VesselInput", "OrderBody", "BundleChoice"} <= request
    assert not request & {"Product", "Vessel", "Delivery"}
    defaulted = [
        (name, field)
        for name in request
        for node in openapi_schemas.objects_in(schemas[name])
        for field, rule in (node.get("properties") or {}).items()
        if isinstance(rule, dict) and "default" in rule
    ]
    assert defaulted == []
    # What absence means, when it is not null, is said in words.
    assert schemas["OrderBody"]["properties"]["type"]["description"] == "Absent means `DELIVERY`."
    assert schemas["WebhookSettings"]["properties"]["method"]["description"].endswith("Absent means `POST`.")
    # PATCH: a field may be absent (unchanged) or null (cleared), two different things.
    price = schemas["ProductPatch"]["properties"]["price"]
    assert "price" not in schemas["ProductPatch"].get("required", []) and {"type": "null"} in price["anyOf"]


def test_response_schemas_keep_their_defaults(doc):
    schemas = doc["components"]["schemas"]
    assert schemas["Vessel"]["properties"]["id"]["default"] is None
    assert "default" not in schemas["VesselInput"]["properties"]["id"]
    assert schemas["Product"]["required"] == schemas["ProductInput"]["required"] == ["status", "category", "name"]
    assert schemas["Address"]["properties"]["address2"]["default"] is None


def test_bodies_and_success_responses_name_the_models(doc):
    post = doc["paths"]["/products"]["post"]
    body = post["requestBody"]
    assert body["required"] is True
    assert body["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/NewProduct"}
    assert post["responses"]["200"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Product"}
    patch = doc["paths"]["/products/{product_id}"]["patch"]
    assert patch["requestBody"]["content"]["application/merge-patch+json"]["schema"] == {
        "$ref": "#/components/schemas/ProductPatch"
    }
    listing = doc["paths"]["/products"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert listing == {"$ref": "#/components/schemas/ProductList"}
    deleted = doc["paths"]["/products/{product_id}"]["delete"]["responses"]["204"]
    assert "content" not in deleted
    assert "requestBody" not in doc["paths"]["/products/{product_id}"]["get"]


def test_problem_responses_per_operation(doc):
    def statuses(path, method):
        responses = doc["paths"][path][method]["responses"]
        for status, response in responses.items():
            if status[0] in "45":
                assert response == {"$ref": PROBLEM_REF.format(status)}
        return {s for s in responses if s[0] in "45"}

    assert statuses("/products", "post") == {"400", "401", "403", "404", "405", "409", "413", "415", "500"}
    assert statuses("/products/{product_id}", "put") == {"400", "401", "403", "404", "405", "412", "413", "415", "500"}
    assert statuses("/products/{product_id}", "delete") == {"400", "401", "403", "404", "405", "412", "500"}
    assert statuses("/products", "get") == {"400", "401", "403", "404", "405", "500"}
    assert statuses("/categories/{category_id}", "put") == {"400", "401", "403", "404", "405", "413", "415", "500"}
    assert statuses("/openapi.json", "get") == {"400", "404", "405", "500"}
    problem = doc["components"]["responses"]["Problem400"]["content"]["application/problem+json"]["schema"]
    assert problem == {"$ref": "#/components/schemas/Problem"}
    shape = doc["components"]["schemas"]["Problem"]
    assert set(shape["required"]) == {"type", "title", "status", "detail", "errors"}
    assert shape["properties"]["type"]["type"] == "string" and "enum" not in shape["properties"]["type"]
    assert shape["properties"]["type"]["examples"][0] == "validation-error"
    assert "`payload-too-large`" in shape["properties"]["type"]["description"]
    assert "Retry-After" in doc["components"]["responses"]["Problem409"]["headers"]
    assert "Allow" in doc["components"]["responses"]["Problem405"]["headers"]


def test_etag_and_if_match_on_products_idempotency_key_on_every_post(doc):
    product = doc["paths"]["/products/{product_id}"]
    for method in ("get", "put", "patch"):
        assert "ETag" in product[method]["responses"]["200"]["headers"]
    assert "ETag" in doc["paths"]["/products"]["post"]["responses"]["200"]["headers"]
    for method in ("put", "patch", "delete"):
        assert ("header", "If-Match") in parameters(product[method])
    assert ("header", "If-Match") not in parameters(product["get"])
    assert ("header", "If-Match") not in parameters(doc["paths"]["/categories/{category_id}"]["put"])
    assert set(doc["paths"]["/categories/{category_id}"]["get"]["responses"]["200"]["headers"]) == {"X-Request-Id"}
    not_replayable = {("/customers/{customer_id}/tokens", "post")}  # its answer holds a secret never stored
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            expected = method == "post" and (path, method) not in not_replayable
            assert (("header", "Idempotency-Key") in parameters(operation)) == expected, (path, method)


walk = openapi_schemas.objects_in


def test_decimal_fields_are_json_numbers(doc):
    schemas = doc["components"]["schemas"]
    assert schemas["Vessel"]["properties"]["size"] == {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": 10**12,
        "title": "Size",
    }
    assert schemas["PricePoint"]["properties"]["from"]["type"] == "number"
    assert schemas["PricePoint"]["properties"]["from"]["minimum"] == 0
    for node in walk(doc):
        assert not {"gt", "ge", "lt", "le"} & set(node), node
        if "anyOf" in node:
            kinds = {option.get("type") for option in node["anyOf"]}
            assert not {"number", "string"} <= kinds, node


def test_field_rules_without_a_pydantic_constraint_are_documented(doc):
    schemas = doc["components"]["schemas"]
    assert schemas["DeliveryRule"]["properties"]["cutoff"]["anyOf"][0]["pattern"] == r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
    assert "PX" in schemas["Bundle"]["properties"]["type"]["enum"]
    assert "PX" not in schemas["Vessel"]["properties"]["type"]["anyOf"][0]["enum"]
    from_date = schemas["DateOverride"]["properties"]["from_date"]
    assert from_date == {
        "type": "string",
        "format": "date",
        "pattern": "^(19[0-9]{2}|2[0-9]{3})-[0-9]{2}-[0-9]{2}$",  # the bounded range: 1900-01-01 to 2999-12-31
        "title": "From Date",
    }


def test_rendered_bodies_match_the_documented_schemas(api, doc):
    assert api.put("/categories/drinks", {"name": "Drinks"}).status_code == 200
    product = {
        "id": "cola",
        "status": "ACTIVE",
        "category": "drinks",
        "name": "Cola",
        "vessel": {"size": 1.5, "unit": "l", "type": "BO"},
        "bundles": [{"type": "CT", "size": 6}, {"type": "PX", "size": 40}],
        "price": 120,
        "min_order_count": 6,
        "pricing": {"strategy": "VOLUME", "price_points": [{"from": 6, "price": 110}, {"from": 12, "price": 100}]},
        "delivery_days": {"1": {"lead_days": 1, "cutoff": "12:00"}},
        "dates_with_no_delivery": ["2030-12-25"],
    }
    created = api.post("/products", product)
    assert created.status_code == 200, created.data
    schema_check(doc, "Product", api.get("/products/cola").data)
    schema_check(doc, "ProductList", api.get("/products").data)
    schema_check(doc, "Category", api.get("/categories/drinks").data)
    problem = api.post("/products", {"id": "x", "vessel": {"size": "big"}})
    assert problem.status_code == 400
    schema_check(doc, "Problem", problem.data)


def test_documented_request_schema_rejects_what_the_api_rejects(doc):
    assert doc["paths"]["/products/{product_id}"]["put"]["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ProductInput"
    }
    schema = {"$ref": "#/components/schemas/ProductInput", "components": doc["components"]}
    validator = OAS31Validator(schema)
    good = {"status": "ACTIVE", "category": "c", "name": "Cola", "vessel": {"size": 0.33, "unit": "l"}}
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "vessel": {"size": "0.33", "unit": "l"}})
    assert not validator.is_valid({**good, "vessel": {"size": 0, "unit": "l"}})
    assert not validator.is_valid({**good, "unknown": 1})


def test_document_is_built_on_first_request_not_at_import():
    code = "import app; from chalicelib.http import openapi; print(openapi.document_json.cache_info().currsize)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "0"
    assert openapi.document_json() is openapi.document_json()


def test_post_products_documents_the_id_as_required(doc):
    assert "id" in doc["components"]["schemas"]["NewProduct"]["required"]
    assert "id" not in doc["components"]["schemas"]["Product"].get("required", [])


def test_response_schemas_accept_added_fields(doc):
    schema = {"$ref": "#/components/schemas/Product", "components": doc["components"]}
    product = {
        "id": "p",
        "status": "ACTIVE",
        "category": "c",
        "name": "Cola",
        "vessel": {"size": 1, "unit": "l", "new": 1},
    }
    assert OAS31Validator(schema).is_valid({**product, "added_later": True})
    response_schemas = {"Product", "Delivery", "Customer", "WebhookSettingsView", "Problem"}
    for name in response_schemas:
        assert doc["components"]["schemas"][name].get("additionalProperties") is not False, name


def test_post_and_put_bodies_are_json_only_merge_patch_is_for_patch(doc):
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if "requestBody" not in operation:
                continue
            kinds = set(operation["requestBody"]["content"])
            expected = {"application/merge-patch+json"} if method == "patch" else {"application/json"}
            if path == "/imports/products":  # the one file upload, as a form (decisions §12); text/csv in prose
                expected = {"multipart/form-data"}
                assert "text/csv" in operation["description"]
            assert kinds == expected, (path, method)


def test_the_order_file_is_text_csv_and_says_what_accept_needs(doc):
    operation = doc["paths"]["/deliveries/{delivery_id}/csv"]["get"]
    assert set(operation["responses"]["200"]["content"]) == {"text/csv"}
    assert "Accept" in operation["description"] and "text/csv" in operation["description"]
    assert parameters(operation)[("query", "encoding")]["schema"]["enum"] == ["utf-8", "latin1"]


def test_query_values_are_typed(doc):
    status = parameters(doc["paths"]["/deliveries"]["get"])[("query", "status")]["schema"]
    assert status["enum"] == ["REQUESTED", "ACCEPTED", "REJECTED", "CANCELLED", "DELIVERED"]
    days = parameters(doc["paths"]["/customer/delivery-dates"]["get"])[("query", "days")]["schema"]
    assert (days["type"], days["minimum"], days["maximum"]) == ("integer", 1, 60)


def test_every_parameter_is_described_and_every_tag_declared(doc):
    declared = {tag["name"] for tag in doc["tags"]}
    assert all(tag["description"] for tag in doc["tags"])
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            assert set(operation["tags"]) <= declared, (path, method)
            for parameter in operation["parameters"]:
                assert parameter["description"], (path, method, parameter["name"])
    assert doc["servers"][0]["url"] == "http://127.0.0.1:8000"


def test_each_operation_shows_an_example_request_and_response(doc):
    post = doc["paths"]["/categories"]["post"]
    assert post["requestBody"]["content"]["application/json"]["example"] == {"id": "soft-drinks", "name": "Soft drinks"}
    assert post["responses"]["200"]["content"]["application/json"]["example"] == {
        "id": "soft-drinks",
        "name": "Soft drinks",
    }
    csv = doc["paths"]["/deliveries/{delivery_id}/csv"]["get"]["responses"]["200"]["content"]["text/csv"]["example"]
    assert csv.startswith("Delivery ID,Type,Customer ID")


def test_webhooks_document_the_three_events_and_their_signature(doc):
    assert set(doc["webhooks"]) == {"request-delivery", "cancel-delivery", "receive-delivery"}
    for event, item in doc["webhooks"].items():
        operation = item["post"]
        assert {p["name"] for p in operation["parameters"]} == {"webhook-id", "webhook-timestamp", "webhook-signature"}
        body = operation["requestBody"]["content"]["application/json"]
        assert body["schema"] == {"$ref": "#/components/schemas/WebhookEvent"}
        assert body["example"]["type"] == event
    event = doc["components"]["schemas"]["WebhookEvent"]
    assert event["properties"]["data"] == {"$ref": "#/components/schemas/Delivery"}
    assert event["properties"]["type"]["enum"] == ["request-delivery", "cancel-delivery", "receive-delivery"]


def _event_type_enums(node):
    """Every enum in the document that lists an event type."""
    if isinstance(node, dict):
        if "request-delivery" in (node.get("enum") or []):
            yield node["enum"]
        for value in node.values():
            yield from _event_type_enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from _event_type_enums(value)


def test_the_documents_event_types_are_the_domains(doc):
    """One list of event types (domain/event_policy.py): the webhooks, the message schema; the events list and the
    webhook settings' `events` add the change feed's types (domain/feed.py) after them."""
    from chalicelib.domain.event_policy import EventType
    from chalicelib.domain.feed import EVENT_TYPES

    types = [str(t) for t in EventType]
    assert list(doc["webhooks"]) == types
    enums = list(_event_type_enums(doc["components"]))
    assert types in enums and list(EVENT_TYPES) in enums
    assert all(enum in (types, list(EVENT_TYPES)) for enum in enums)
    assert list(EVENT_TYPES)[: len(types)] == types
    assert {op["post"]["operationId"] for op in doc["webhooks"].values()} == {
        f"{t.replace('-', '_')}_event" for t in types
    }


def test_policy_numbers_in_the_document_come_from_the_constants(doc):
    from chalicelib.domain import limits
    from chalicelib.domain.event_policy import RETRY_WINDOW, SEND_TIMEOUT
    from chalicelib.domain.idempotency import REPLAY_WINDOW
    from chalicelib.domain.timestamps import in_words

    key = next(p for p in doc["paths"]["/products"]["post"]["parameters"] if p["name"] == "Idempotency-Key")
    assert f"within {in_words(REPLAY_WINDOW)} " in key["description"] and "24 hours" in key["description"]
    failed = doc["webhooks"]["request-delivery"]["post"]["responses"]["400"]["description"]
    assert f"within {in_words(SEND_TIMEOUT)}," in failed and f"at least {in_words(RETRY_WINDOW)}." in failed
    limit = parameters(doc["paths"]["/products"]["get"])[("query", "limit")]["schema"]
    assert limit["maximum"] == limits.PAGE_ITEMS
    too_large = doc["components"]["responses"]["Problem413"]["description"]
    assert str(limits.MAX_BODY_BYTES) in too_large


def test_etag_on_single_delivery_reads_and_if_match_on_their_changes(doc):
    """decisions §16: the two single reads carry the ETag; responses, amendments, cancel and receive take If-Match."""
    for path in ("/deliveries/{delivery_id}", "/customer/deliveries/{delivery_id}"):
        assert "ETag" in doc["paths"][path]["get"]["responses"]["200"]["headers"]
    assert "ETag" not in doc["paths"]["/deliveries"]["get"]["responses"]["200"]["headers"]
    changes = [
        "/deliveries/{delivery_id}/responses",
        "/customer/deliveries/{delivery_id}/amendments",
        "/customer/deliveries/{delivery_id}/cancel",
        "/customer/deliveries/{delivery_id}/receive",
    ]
    for path in changes:
        operation = doc["paths"][path]["post"]
        assert ("header", "If-Match") in parameters(operation) and "412" in operation["responses"], path
    assert ("header", "If-Match") not in parameters(doc["paths"]["/customer/deliveries"]["post"])
