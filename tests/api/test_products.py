"""Products over HTTP: create, replace, patch, read, delete, presence rules, numbers and ETags."""

import pytest

from chalicelib.store import table
from tests.conftest import problem_paths
from tests.problems import assert_problem as problem


def minimal(product_id="p1", **fields):
    return {"id": product_id, "status": "ACTIVE", "category": "drinks", "name": "Apple juice", **fields}


FULL = minimal(
    "full",
    order_by="vessel",
    vessel={"id": "v1", "size": 1.5, "unit": "l", "type": "BO"},
    bundles=[
        {"id": "crate", "id_override": "juice-crate", "type": "CT", "size": 6},
        {"type": "PX", "size": 40, "pallet_bundle": {"id": "crate", "type": "CT", "size": 6}},
    ],
    price=250,
    price_per="l",
    min_order_count=2,
    delivery_days={"1": {"lead_days": 1, "cutoff": "12:00"}, "4": {"lead_days": 0}},
    delivery_date_overrides={"2026-12-24": {"lead_days": 2}},
    dates_with_no_delivery=["2026-12-25", "2026-12-26"],
    pricing={
        "strategy": "VOLUME",
        "price_points": [{"from": 2, "price": 250}, {"from": 12, "price": 230}],
        "date_overrides": [
            {"from_date": "2026-07-01", "to_date": "2026-07-31", "price_points": [{"from": 2, "price": 200}]}
        ],
    },
    gtin="4006381333931",
    custom_properties={"origin": "Bavaria", "organic": True, "abv": 0, "tags": ["vegan", "local"]},
    image={"url": "https://img.example.com/juice.png", "etag": "abc", "last_modified": "2026-01-01T00:00:00Z"},
)


# --- POST /products ---


def test_post_returns_the_product_as_get_returns_it(catalogue):
    created = catalogue.post("/products", FULL)
    assert created.status_code == 200
    assert created.data == FULL
    read = catalogue.get("/products/full")
    assert read.status_code == 200
    assert read.data == created.data


def test_post_minimal_product_has_only_the_given_fields(catalogue):
    created = catalogue.post("/products", minimal())
    assert created.data == minimal()
    assert catalogue.get("/products/p1").data == minimal()


def test_post_trims_the_name(catalogue):
    created = catalogue.post("/products", minimal(name="  Apple juice \n"))
    assert created.data["name"] == "Apple juice"
    assert catalogue.get("/products/p1").data["name"] == "Apple juice"


def test_post_with_an_existing_id_is_a_conflict(catalogue):
    catalogue.post("/products", minimal())
    response = catalogue.post("/products", minimal(name="Other name"))
    problem(response, 400, "conflict")
    assert catalogue.get("/products/p1").data["name"] == "Apple juice"


@pytest.mark.parametrize("field", ["id", "status", "category", "name"])
def test_post_without_a_required_field_names_it(catalogue, field):
    body = minimal()
    del body[field]
    response = catalogue.post("/products", body)
    problem(response, 400, "validation-error")
    assert problem_paths(response) == [field]


def test_post_with_unknown_category_names_category(catalogue):
    response = catalogue.post("/products", minimal(category="food"))
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["category"]
    assert catalogue.get("/products/p1").status_code == 404


@pytest.mark.parametrize(
    "fields, paths",
    [
        ({"category": "food", "price": -1}, ["price", "category"]),
        ({"category": "food", "vessel": {"size": 1, "unit": "l", "deposit": "nodep"}}, ["category", "vessel.deposit"]),
        (
            {"bundles": [{"type": "CR", "size": 0, "deposit": "nodep"}], "price": "1"},
            ["bundles[0].size", "price", "bundles[0].deposit"],
        ),
        ({"category": "drinks", "price": -1}, ["price"]),  # an existing category is no problem
        ({"category": "Food!", "price": -1}, ["category", "price"]),  # a wrong id is named once, by its rule
    ],
)
def test_every_problem_is_named_at_once_references_among_them(catalogue, fields, paths):
    """decisions §3: `errors` lists every field problem, the category and deposit types a body names included."""
    response = catalogue.post("/products", minimal(**fields))
    problem(response, 400, "validation-error")
    assert sorted(problem_paths(response)) == sorted(paths)
    put = catalogue.put("/products/p1", {k: v for k, v in minimal(**fields).items() if k != "id"})
    assert sorted(problem_paths(put)) == sorted(paths)
    assert catalogue.get("/products/p1").status_code == 404
    assert catalogue.put("/products/p1", minimal()).status_code == 200
    patched = catalogue.patch("/products/p1", fields)
    assert sorted(problem_paths(patched)) == sorted(paths)


# --- PUT /products/:id ---


def test_put_creates_then_replaces(catalogue):
    body = minimal(price=100, vessel={"size": 1, "unit": "l"})
    del body["id"]
    created = catalogue.put("/products/p1", body)
    assert created.status_code == 200
    assert created.data == {"id": "p1", **body}

    replacement = {"status": "INACTIVE", "category": "drinks", "name": "Pear juice", "gtin": "123"}
    replaced = catalogue.put("/products/p1", replacement)
    assert replaced.status_code == 200
    # A replacement keeps nothing of the old product: price and vessel are gone.
    assert replaced.data == {"id": "p1", **replacement}
    assert catalogue.get("/products/p1").data == replaced.data


def test_put_accepts_a_body_id_equal_to_the_url_id(catalogue):
    response = catalogue.put("/products/p1", minimal("p1"))
    assert response.status_code == 200
    assert response.data == minimal("p1")


def test_put_refuses_a_body_id_other_than_the_url_id(catalogue):
    response = catalogue.put("/products/p1", minimal("p2"))
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["id"]
    assert catalogue.get("/products/p1").status_code == 404
    assert catalogue.get("/products/p2").status_code == 404


@pytest.mark.parametrize("bad_id", ["bad.id", "with%20space", "a" * 129, "%C3%A4pfel"])
def test_put_refuses_an_invalid_url_id(catalogue, bad_id):
    body = minimal()
    del body["id"]
    response = catalogue.put(f"/products/{bad_id}", body)
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["id"]


@pytest.mark.parametrize("field", ["status", "category", "name"])
def test_put_without_a_required_field_names_it(catalogue, field):
    body = minimal()
    del body[field]
    response = catalogue.put("/products/p1", body)
    problem(response, 400, "validation-error")
    assert problem_paths(response) == [field]


# --- PATCH /products/:id ---


def test_patch_merges_top_level_fields(catalogue):
    catalogue.post("/products", FULL)
    response = catalogue.patch("/products/full", {"name": "Cloudy apple juice", "status": "OUT_OF_STOCK"})
    assert response.status_code == 200
    expected = {**FULL, "name": "Cloudy apple juice", "status": "OUT_OF_STOCK"}
    assert response.data == expected
    assert catalogue.get("/products/full").data == expected


def test_patch_replaces_a_nested_object_as_a_whole(catalogue):
    catalogue.post("/products", FULL)
    response = catalogue.patch("/products/full", {"vessel": {"size": 0.5, "unit": "l"}})
    assert response.status_code == 200
    assert response.data["vessel"] == {"size": 0.5, "unit": "l"}


def test_patch_with_null_removes_an_optional_field(catalogue):
    catalogue.post("/products", FULL)
    response = catalogue.patch("/products/full", {"price": None, "gtin": None, "custom_properties": None})
    assert response.status_code == 200
    for field in ("price", "gtin", "custom_properties"):
        assert field not in response.data
        assert field not in catalogue.get("/products/full").data
    assert response.data["vessel"] == FULL["vessel"]


def test_patch_image_null_removes_the_image(catalogue):
    catalogue.post("/products", FULL)
    response = catalogue.patch("/products/full", {"image": None})
    assert response.status_code == 200
    assert "image" not in response.data
    assert "image" not in catalogue.get("/products/full").data


def test_patch_sets_an_image(catalogue):
    catalogue.post("/products", minimal())
    response = catalogue.patch("/products/p1", {"image": {"url": "http://img.example.com/a.jpg"}})
    assert response.status_code == 200
    assert response.data["image"] == {"url": "http://img.example.com/a.jpg"}


@pytest.mark.parametrize("id_value", ["p1", "p2"])
def test_patch_refuses_id(catalogue, id_value):
    catalogue.post("/products", minimal())
    response = catalogue.patch("/products/p1", {"id": id_value})
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["id"]


def test_patch_revalidates_the_merged_product(catalogue):
    catalogue.post("/products", minimal(vessel={"size": 2, "unit": "l"}))
    # order_by kg is valid alone, but not with the stored 2 l vessel.
    response = catalogue.patch("/products/p1", {"order_by": "kg"})
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["vessel"]
    assert "order_by" not in catalogue.get("/products/p1").data


def test_patch_null_on_a_required_field_is_refused(catalogue):
    catalogue.post("/products", minimal())
    response = catalogue.patch("/products/p1", {"status": None})
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["status"]


def test_patch_validates_each_field(catalogue):
    catalogue.post("/products", minimal())
    response = catalogue.patch("/products/p1", {"price": -1, "name": "ab"})
    problem(response, 400, "validation-error")
    assert sorted(problem_paths(response)) == ["name", "price"]


def test_patch_to_an_unknown_category_is_refused(catalogue):
    catalogue.post("/products", minimal())
    response = catalogue.patch("/products/p1", {"category": "nope"})
    problem(response, 400, "validation-error")
    assert problem_paths(response) == ["category"]


def test_patch_of_an_absent_product_is_404(catalogue):
    problem(catalogue.patch("/products/nope", {"name": "Something"}), 404, "not-found")


def test_patch_keeps_stored_numbers_valid(catalogue):
    """Stored whole numbers come back from DynamoDB as Decimal; a PATCH must still accept them."""
    catalogue.post("/products", FULL)
    response = catalogue.patch("/products/full", {"name": "Renamed juice"})
    assert response.status_code == 200, response.data
    assert response.data == {**FULL, "name": "Renamed juice"}


def test_patch_accepts_merge_patch_content_type(catalogue):
    catalogue.post("/products", minimal())
    response = catalogue.patch("/products/p1", {"gtin": "42"}, headers={"Content-Type": "application/merge-patch+json"})
    assert response.status_code == 200
    assert response.data["gtin"] == "42"


# --- GET /products/:id ---


def test_get_of_an_absent_product_is_404(catalogue):
    problem(catalogue.get("/products/nope"), 404, "not-found")


def test_get_with_an_id_outside_the_charset_is_404(catalogue):
    problem(catalogue.get("/products/bad.id"), 404, "not-found")


# --- DELETE /products/:id ---


def test_delete_then_gone(catalogue):
    catalogue.post("/products", minimal())
    response = catalogue.delete("/products/p1")
    assert response.status_code == 204
    assert response.body == b""
    problem(catalogue.get("/products/p1"), 404, "not-found")
    problem(catalogue.delete("/products/p1"), 404, "not-found")


def test_delete_of_an_absent_product_is_404(catalogue):
    problem(catalogue.delete("/products/nope"), 404, "not-found")


def mark_used(account, product_id):
    from chalicelib.store import delivery_writes

    table.client().transact_write_items(TransactItems=[delivery_writes.marking_used(account, product_id).item])


def test_a_used_product_cannot_be_deleted(catalogue):
    catalogue.post("/products", minimal())
    mark_used("acme", "p1")
    problem(catalogue.delete("/products/p1"), 400, "conflict")
    assert catalogue.get("/products/p1").status_code == 200


def test_a_used_product_stays_used_after_put_and_patch(catalogue):
    catalogue.post("/products", minimal())
    mark_used("acme", "p1")
    body = minimal()
    del body["id"]
    assert catalogue.put("/products/p1", body).status_code == 200
    assert catalogue.patch("/products/p1", {"price": 5}).status_code == 200
    problem(catalogue.delete("/products/p1"), 400, "conflict")


# --- presence rules on reads ---


def test_defaults_are_not_shown_on_reads(catalogue):
    catalogue.post("/products", minimal())
    data = catalogue.get("/products/p1").data
    for absent in (
        "order_by",
        "price_per",
        "vessel",
        "bundles",
        "price",
        "pricing",
        "image",
        "gtin",
        "min_order_count",
        "delivery_days",
        "delivery_date_overrides",
        "dates_with_no_delivery",
        "custom_properties",
    ):
        assert absent not in data


@pytest.mark.parametrize(
    "field, value",
    [
        ("order_by", "vessel"),
        ("price_per", "vessel"),
        ("order_by", "kg"),
        ("price_per", "100g"),
        ("price", 0),
        ("bundles", []),
        ("vessel", {"size": 1, "unit": "quantity"}),
    ],
)
def test_fields_given_are_shown_even_when_they_equal_the_default(catalogue, field, value):
    catalogue.post("/products", minimal(**{field: value}))
    assert catalogue.get("/products/p1").data[field] == value


def test_list_shows_products_as_get_does(catalogue):
    catalogue.post("/products", FULL)
    catalogue.post("/products", minimal())
    listed = catalogue.get("/products")
    assert listed.status_code == 200
    assert listed.data == {"products": [FULL, minimal()]}


# --- numbers ---


def test_numbers_round_trip_exactly(catalogue):
    body = minimal(
        vessel={"size": 1.5, "unit": "l"},
        bundles=[{"type": "CT", "size": 2}],
        price=2,
        custom_properties={"ratio": 0.25, "count": 2, "negative": -3.5},
    )
    created = catalogue.post("/products", body)
    assert created.data == body
    for response in (created, catalogue.get("/products/p1"), catalogue.get("/products")):
        text = response.body.decode()
        assert '"size":1.5' in text
        assert '"size":2' in text and '"size":2.0' not in text
        assert '"price":2' in text and "2.0" not in text
        assert '"ratio":0.25' in text and '"negative":-3.5' in text


def test_fractional_numbers_with_many_digits_round_trip(catalogue):
    raw = (
        '{"id":"p1","status":"ACTIVE","category":"drinks","name":"Precise","order_by":"kg",'
        '"min_order_count":0.125,"vessel":{"size":1,"unit":"kg"},'
        '"custom_properties":{"big":123456789012.123456}}'
    )
    created = catalogue.post("/products", raw=raw)
    assert created.status_code == 200, created.data
    text = catalogue.get("/products/p1").body.decode()
    assert '"min_order_count":0.125' in text
    assert '"big":123456789012.123456' in text


# --- ETag and If-Match ---


def test_etag_on_every_product_response(catalogue):
    body = minimal()
    posted = catalogue.post("/products", body)
    got = catalogue.get("/products/p1")
    assert posted.headers["ETag"] == got.headers["ETag"]
    assert got.headers["ETag"].startswith('"') and got.headers["ETag"].endswith('"')
    same = catalogue.put("/products/p1", body)
    assert same.headers["ETag"] == got.headers["ETag"]  # an identical PUT changes nothing (decisions §13)
    put = catalogue.put("/products/p1", {**body, "name": "Renamed"})
    assert put.headers["ETag"] != got.headers["ETag"]
    patched = catalogue.patch("/products/p1", {"price": 3})
    assert patched.headers["ETag"] not in (put.headers["ETag"], got.headers["ETag"])
    assert catalogue.get("/products/p1").headers["ETag"] == patched.headers["ETag"]


def test_stale_if_match_fails_on_put_patch_and_delete(catalogue):
    stale = catalogue.post("/products", minimal()).headers["ETag"]
    current = catalogue.patch("/products/p1", {"price": 1}).headers["ETag"]
    assert stale != current
    headers = {"If-Match": stale}
    problem(catalogue.put("/products/p1", minimal(price=9), headers=headers), 412, "precondition-failed")
    problem(catalogue.patch("/products/p1", {"price": 9}, headers=headers), 412, "precondition-failed")
    problem(catalogue.delete("/products/p1", headers=headers), 412, "precondition-failed")
    still = catalogue.get("/products/p1")
    assert still.data["price"] == 1
    assert still.headers["ETag"] == current


def test_matching_if_match_succeeds(catalogue):
    etag = catalogue.post("/products", minimal()).headers["ETag"]
    put = catalogue.put("/products/p1", minimal(price=5), headers={"If-Match": etag})
    assert put.status_code == 200 and put.data["price"] == 5
    patched = catalogue.patch("/products/p1", {"price": 6}, headers={"If-Match": put.headers["ETag"]})
    assert patched.status_code == 200 and patched.data["price"] == 6
    deleted = catalogue.delete("/products/p1", headers={"If-Match": patched.headers["ETag"]})
    assert deleted.status_code == 204


def test_if_match_star_matches_any_version(catalogue):
    catalogue.post("/products", minimal())
    response = catalogue.patch("/products/p1", {"price": 7}, headers={"If-Match": "*"})
    assert response.status_code == 200
    stored = catalogue.get("/products/p1")
    assert stored.data["price"] == 7 and stored.headers["ETag"] == response.headers["ETag"]


def test_if_match_on_a_put_that_would_create_fails(catalogue):
    body = minimal()
    response = catalogue.put("/products/p1", body, headers={"If-Match": '"0123456789abcdef"'})
    problem(response, 412, "precondition-failed")
    assert catalogue.get("/products/p1").status_code == 404


def lose_races(monkeypatch, clock, losses, seconds_each):
    """The next `losses` saves of a product lose to another write, each costing `seconds_each` of the clock."""
    from chalicelib.service import contention
    from chalicelib.store import outcomes
    from tests.unit_of_work import fake_commits

    lost = []

    def lose(uow, real):
        lost.append(clock.advance(seconds_each))
        return outcomes.Stale()

    fake_commits(monkeypatch, *[lose] * losses)
    monkeypatch.setattr(contention, "back_off", lambda attempt: None)
    return lost


def test_without_if_match_contention_is_retried_and_never_412(catalogue, monkeypatch):
    """decisions §8/§11: 412 is only for a stale If-Match; contention shorter than 5 s is waited out."""
    import datetime as dt

    from tests.conftest import clock_at

    clock = clock_at(monkeypatch, dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc))
    catalogue.post("/products", minimal())
    lost = lose_races(monkeypatch, clock, losses=45, seconds_each=0.1)  # 4.5 s of lost races
    put = catalogue.put("/products/p1", minimal(price=5))
    assert (put.status_code, put.data["price"], len(lost)) == (200, 5, 45)
    lose_races(monkeypatch, clock, losses=45, seconds_each=0.1)
    patched = catalogue.patch("/products/p1", {"price": 6})
    assert (patched.status_code, patched.data["price"]) == (200, 6)


def test_contention_lasting_5_seconds_is_409_with_retry_after(catalogue, monkeypatch):
    import datetime as dt

    from tests.conftest import clock_at

    start = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
    clock = clock_at(monkeypatch, start)
    catalogue.post("/products", minimal())
    lost = lose_races(monkeypatch, clock, losses=10_000, seconds_each=0.1)
    response = catalogue.put("/products/p1", minimal(price=5))
    problem(response, 409, "conflict")
    assert "Retry-After" in response.headers
    assert (lost[-1] - start).total_seconds() >= 5
    assert "price" not in catalogue.get("/products/p1").data  # nothing written
