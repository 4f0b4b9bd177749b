"""Every error is RFC 9457 problem+json (decisions §3), and no request, however malformed, yields a 5xx."""

import json

import pytest

from tests.conftest import OTHER_TOKEN, SUPPLIER_TOKEN, problem_paths
from tests.problems import assert_problem

BODY_ROUTES = [("POST", "/products"), ("PUT", "/products/p1"), ("PATCH", "/products/p1"), ("PUT", "/categories/drinks")]


@pytest.fixture
def existing(api):
    """A category and a product, so PATCH reaches body parsing rather than 404."""
    api.put("/categories/drinks", {"name": "Drinks"})
    api.post("/products", {"id": "p1", "status": "ACTIVE", "category": "drinks", "name": "Apple juice"})
    return api


@pytest.mark.parametrize("method, path", BODY_ROUTES)
def test_invalid_json(existing, method, path):
    for raw in ['{"name": ', "{bad}", "not json", '{"name": "x"} trailing', "'single'", "\ufeff{}"]:
        response = existing.request(method, path, raw=raw)
        data = assert_problem(response, 400, "validation-error")
        assert problem_paths(response) == ["body"], raw
        assert data["errors"][0]["message"]


@pytest.mark.parametrize("method, path", BODY_ROUTES)
def test_body_that_is_not_an_object(existing, method, path):
    for raw in ["[]", '"text"', "42", "null", "true", '[{"name": "x"}]']:
        response = existing.request(method, path, raw=raw)
        assert_problem(response, 400, "validation-error")
        assert problem_paths(response) == ["body"], raw


@pytest.mark.parametrize("method, path", BODY_ROUTES)
def test_empty_body(existing, method, path):
    for raw in ["", "   ", "\n", None]:  # None: no body at all
        response = existing.request(method, path, raw=raw)
        assert_problem(response, 400, "validation-error")
        assert problem_paths(response) == ["body"], repr(raw)


@pytest.mark.parametrize("method, path", BODY_ROUTES)
def test_wrong_content_type(existing, method, path):
    for content_type in ["text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data"]:
        response = existing.request(method, path, raw='{"name": "Drinks"}', headers={"Content-Type": content_type})
        assert_problem(response, 415, "unsupported-media-type")
    assert existing.get("/categories/drinks").data["name"] == "Drinks"


def test_json_content_type_with_charset_is_accepted(existing):
    response = existing.put(
        "/categories/drinks", raw='{"name": "Drinks"}', headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert response.status_code == 200


def test_content_type_does_not_matter_without_a_body(existing):
    assert existing.get("/products/p1", headers={"Content-Type": "text/plain"}).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/nope",
        "/nope/deeper",
        "/products/p1/unknown",
        "/a/b/c/d",
        "/products/p1/customer-pricing/c1/extra/more",
        "/a/b/c/d/e/f/g/h/i/j",
    ],
)
def test_unknown_path(api, path):
    for token in [SUPPLIER_TOKEN, None, "unknown-token"]:
        for method in ["GET", "POST", "DELETE"]:
            response = api.request(method, path, token=token, raw="{}" if method == "POST" else None)
            assert_problem(response, 404, "not-found")


# Every path also answers OPTIONS, and HEAD where it has GET (decisions §3).
@pytest.mark.parametrize(
    "method, path, allowed",
    [
        ("DELETE", "/products", {"GET", "HEAD", "OPTIONS", "POST"}),
        ("PUT", "/products", {"GET", "HEAD", "OPTIONS", "POST"}),
        ("PATCH", "/products", {"GET", "HEAD", "OPTIONS", "POST"}),
        ("POST", "/products/p1", {"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"}),
        ("POST", "/categories/c1", {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"}),
        ("PATCH", "/categories/c1", {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"}),
        ("DELETE", "/categories", {"GET", "HEAD", "OPTIONS", "POST"}),
    ],
)
def test_known_path_with_wrong_method(api, method, path, allowed):
    for token in [SUPPLIER_TOKEN, None]:
        response = api.request(method, path, token=token, raw="{}" if method in ("POST", "PUT", "PATCH") else None)
        assert_problem(response, 405, "method-not-allowed")
        assert {m.strip() for m in response.headers["Allow"].split(",")} == allowed


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "PROPFIND"])
@pytest.mark.parametrize(
    "path, allowed",
    [
        ("/products", {"GET", "HEAD", "OPTIONS", "POST"}),
        ("/products/p1", {"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"}),
        ("/nope/deeper", None),
    ],
)
def test_methods_no_route_registers_are_405_on_known_paths_and_404_elsewhere(api, method, path, allowed):
    # Chalice answers these itself; its Allow header would name the fallback views as well.
    response = api.client.http.request(method, path, headers={"Authorization": f"token {SUPPLIER_TOKEN}"})
    response.data = json.loads(response.body)
    if allowed is None:
        assert_problem(response, 404, "not-found")
    else:
        assert_problem(response, 405, "method-not-allowed")
        assert {m.strip() for m in response.headers["Allow"].split(",")} == allowed


ONE_MIB = 1024 * 1024


def test_body_over_one_mib(api):
    raw = '{"name": "' + "x" * ONE_MIB + '"}'
    response = api.put("/categories/drinks", raw=raw)
    assert_problem(response, 413, "payload-too-large")


def test_body_just_under_one_mib_is_read(api):
    raw = '{"name": "' + "x" * (ONE_MIB - 20) + '"}'
    assert len(raw.encode()) <= ONE_MIB
    response = api.put("/categories/drinks", raw=raw)
    # Read and judged on its content: the name is too long, not the body.
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["name"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(existing, literal):
    raw = '{"id": "p2", "status": "ACTIVE", "category": "drinks", "name": "Apple", "price": %s}' % literal
    response = existing.post("/products", raw=raw)
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["body"]
    assert existing.get("/products/p2").status_code == 404


@pytest.mark.parametrize("raw", [b'{"name": "\xff\xfe"}', b'{"name": "Gr\xfcne"}', b"\xef\xbb"])
def test_body_that_is_not_utf8_is_refused(existing, raw):
    response = existing.put("/categories/drinks", raw=raw)
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["body"]


def test_utf8_body_is_read(existing):
    response = existing.put("/categories/drinks", raw='{"name": "Grüne Säfte 🍏"}'.encode())
    assert response.status_code == 200
    assert response.data["name"] == "Grüne Säfte 🍏"


@pytest.mark.parametrize("raw", ['{"name": "\\ud800"}', '{"name": "x\\udfff"}', '{"\\ud83d": "x", "name": "x"}'])
def test_lone_surrogate_escape_is_refused(existing, raw):
    response = existing.put("/categories/drinks", raw=raw)
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["body"]


def test_surrogate_pair_escape_is_read(existing):
    response = existing.put("/categories/drinks", raw='{"name": "Apple \\ud83c\\udf4f"}')
    assert response.status_code == 200
    assert response.data["name"] == "Apple 🍏"


@pytest.mark.parametrize("depth", [900, 100_000])
def test_deeply_nested_body_is_refused(existing, depth):
    raw = '{"name": ' + "[" * depth + "]" * depth + "}"
    response = existing.put("/categories/drinks", raw=raw)
    assert_problem(response, 400, "validation-error")


def test_huge_integer_literal_is_refused(existing):
    raw = '{"id": "p2", "status": "ACTIVE", "category": "drinks", "name": "Apple", "price": 1%s}' % ("0" * 5000)
    assert_problem(existing.post("/products", raw=raw), 400, "validation-error")


@pytest.mark.parametrize(
    "raw",
    [
        '{"price": 1e999999999}',
        '{"vessel": {"size": 1e-999999999, "unit": "l"}}',
        '{"vessel": {"size": 1e999999999, "unit": "l"}}',
        '{"min_order_count": -0.0}',
    ],
)
def test_extreme_numbers_are_refused_not_crashed(existing, raw):
    assert_problem(existing.patch("/products/p1", raw=raw), 400, "validation-error")


def test_validation_error_lists_every_field(existing):
    response = existing.post("/products", {"id": "bad id", "status": "NOPE", "category": "drinks", "name": "x"})
    data = assert_problem(response, 400, "validation-error")
    assert sorted(problem_paths(response)) == ["id", "name", "status"]
    assert all(error["message"] for error in data["errors"])


@pytest.mark.parametrize(
    "method, path, status, type_",
    [("GET", "/products/nope", 404, "not-found"), ("GET", "/products", 401, "unauthorized")],
)
def test_other_errors_have_the_same_shape(api, method, path, status, type_):
    token = None if status == 401 else SUPPLIER_TOKEN
    assert_problem(api.request(method, path, token=token), status, type_)


JUNK_BODIES = [
    "",
    "{",
    "[]",
    "null",
    '{"id": null}',
    '{"name": {"$ne": 1}}',
    '{"status": []}',
    '{"bundles": "x"}',
    '{"bundles": [null]}',
    '{"bundles": [{"type": "PX"}]}',
    '{"pricing": {"date_overrides": [{}]}}',
    '{"pricing": {"strategy": "VOLUME", "price_points": [{}]}}',
    '{"delivery_days": []}',
    '{"delivery_date_overrides": {"x": null}}',
    '{"custom_properties": 1}',
    '{"image": "http://x"}',
    '{"vessel": {"size": "1e400", "unit": "l"}}',
    '{"__proto__": {}}',
]


@pytest.mark.parametrize("method, path", BODY_ROUTES)
def test_junk_never_yields_a_5xx(existing, method, path):
    for raw in JUNK_BODIES:
        response = existing.request(method, path, raw=raw)
        assert response.status_code < 500, raw
        if response.status_code >= 400:
            assert_problem(response, response.status_code, response.data["type"])


ODD_PATHS = [
    "/products?limit=-1",
    "/products?limit=1.5",
    "/products?limit=",
    "/products?cursor=",
    "/products?cursor=%FF%FE",
    "/products?cursor=a.b.c",
    "/products?cursor=..",
    "/categories?limit=99999999999999999999999",
    "/products/%00",
    "/products/" + "x" * 3000,
]


def test_odd_query_and_path_values_never_yield_a_5xx(api):
    for path in ODD_PATHS:
        response = api.get(path)
        assert 400 <= response.status_code < 500, path
        assert_problem(response, response.status_code, response.data["type"])


def test_unknown_query_parameters_are_ignored(api):
    assert api.get("/products?colour=red").status_code == 200


def test_errors_of_another_account_look_like_absent(existing):
    assert_problem(existing.get("/products/p1", token=OTHER_TOKEN), 404, "not-found")
