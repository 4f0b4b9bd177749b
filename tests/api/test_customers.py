"""Customers: profile (PUT), settings (PATCH), reads, list paging and customer tokens (interface: Customer;
decisions §2, §4, §9)."""

import pytest

from tests.api.customer_support import customer_token, dynamodb_calls, make_customer
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem

ADDRESS = {"address1": "Main Street 1", "address2": "Floor 2", "zip": "00100", "city": "Helsinki", "country": "FI"}
CONTACT = {"name": "Maija Buyer", "email": "maija@example.com"}
RULE = {"lead_days": 1, "cutoff": "12:00"}
ALLOWED = {"substitutions": "ALLOWED"}  # decisions §18: every read shows the policy, ALLOWED unless set


# --- PUT /customers/:id: the profile ---


def test_put_creates_a_customer_with_only_the_given_profile_fields(api):
    response = api.put("/customers/bar-1", {"name": "Bar One"})
    assert response.status_code == 200
    assert response.data == {"id": "bar-1", "name": "Bar One", **ALLOWED}
    assert api.get("/customers/bar-1").data == {"id": "bar-1", "name": "Bar One", **ALLOWED}


def test_put_returns_the_full_profile_as_get_shows_it(api):
    body = {"name": "  Bar One ", "company": "Bar Oy", "address": ADDRESS, "contact": CONTACT}
    response = api.put("/customers/bar-1", body)
    expected = {
        "id": "bar-1",
        "name": "Bar One",
        "company": "Bar Oy",
        "address": ADDRESS,
        "contact": CONTACT,
        **ALLOWED,
    }
    assert response.status_code == 200
    assert response.data == expected
    assert api.get("/customers/bar-1").data == expected


def test_put_replaces_the_profile_and_keeps_the_settings(api):
    make_customer(api, "bar-1", company="Bar Oy", address=ADDRESS, contact=CONTACT)
    api.patch("/customers/bar-1", {"price_group": "gold", "delivery_days": {"1": RULE}})
    response = api.put("/customers/bar-1", {"name": "Renamed"})
    expected = {"id": "bar-1", "name": "Renamed", "price_group": "gold", "delivery_days": {"1": RULE}, **ALLOWED}
    assert response.data == expected
    assert api.get("/customers/bar-1").data == expected


def test_put_with_a_matching_body_id_is_accepted_and_a_different_one_refused(api):
    accepted = api.put("/customers/bar-1", {"id": "bar-1", "name": "Bar"})
    assert (accepted.status_code, accepted.data) == (200, {"id": "bar-1", "name": "Bar", **ALLOWED})
    response = api.put("/customers/bar-1", {"id": "bar-2", "name": "Bar"})
    assert response.status_code == 400
    assert problem_paths(response) == ["id"]
    assert api.get("/customers/bar-1").data == {"id": "bar-1", "name": "Bar", **ALLOWED}


@pytest.mark.parametrize("customer_id", ["bad%20id", "a.b", "x" * 129])
def test_put_with_an_invalid_url_id_is_400_on_id(api, customer_id):
    response = api.put(f"/customers/{customer_id}", {"name": "Bar"})
    assert response.status_code == 400
    assert problem_paths(response) == ["id"]


@pytest.mark.parametrize(
    "body, path",
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 129}, "name"),
        ({"name": "Two\nlines"}, "name"),
        ({"name": 5}, "name"),
        ({"name": "Bar", "company": ""}, "company"),
        ({"name": "Bar", "address": {**ADDRESS, "country": "XX"}}, "address.country"),
        ({"name": "Bar", "address": {**ADDRESS, "country": "fi"}}, "address.country"),
        ({"name": "Bar", "address": {**ADDRESS, "country": "FIN"}}, "address.country"),
        ({"name": "Bar", "address": {k: v for k, v in ADDRESS.items() if k != "zip"}}, "address.zip"),
        ({"name": "Bar", "address": {**ADDRESS, "street": "x"}}, "address.street"),
        ({"name": "Bar", "contact": {**CONTACT, "email": "not-an-email"}}, "contact.email"),
        ({"name": "Bar", "contact": {"email": "a@example.com"}}, "contact.name"),
        ({"name": "Bar", "nickname": "B"}, "nickname"),
        ({"name": "Bar", "price_group": "gold"}, "price_group"),
        ({"name": "Bar", "delivery_days": {}}, "delivery_days"),
    ],
)
def test_put_validates_the_profile(api, body, path):
    response = api.put("/customers/bar-1", body)
    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/problem+json"
    assert problem_paths(response) == [path]
    assert api.get("/customers/bar-1").status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {"name": "B"},
        {"name": "x" * 128},
        {"name": "Bar", "address": {k: v for k, v in ADDRESS.items() if k != "address2"}},
        {"name": "Bar", "address": {**ADDRESS, "country": "DE"}},
        {"name": "Bar", "contact": {"name": "A", "email": "a.b+c@sub.example.co.uk"}},
    ],
)
def test_put_accepts_valid_profiles(api, body):
    response = api.put("/customers/bar-1", body)
    assert response.status_code == 200
    assert response.data == {"id": "bar-1", **body, **ALLOWED}
    assert api.get("/customers/bar-1").data == {"id": "bar-1", **body, **ALLOWED}


def test_put_lists_every_wrong_field(api):
    response = api.put("/customers/bar-1", {"name": "", "address": {**ADDRESS, "country": "XX"}, "price_group": "g"})
    assert response.status_code == 400
    assert sorted(problem_paths(response)) == ["address.country", "name", "price_group"]


def test_put_refuses_a_body_that_is_not_an_object(api):
    response = api.put("/customers/bar-1", ["Bar"])
    assert response.status_code == 400
    assert problem_paths(response) == ["body"]


# --- GET /customers/:id ---


def test_get_unknown_customer_is_404(api):
    response = api.get("/customers/nobody")
    assert_problem(response, 404, "not-found")


def test_customers_of_another_account_read_as_404(api):
    make_customer(api, "bar-1")
    assert api.get("/customers/bar-1", token=OTHER_TOKEN).status_code == 404
    assert api.patch("/customers/bar-1", {"price_group": "x"}, token=OTHER_TOKEN).status_code == 404
    assert api.post("/customers/bar-1/tokens", token=OTHER_TOKEN).status_code == 404
    assert api.get("/customers", token=OTHER_TOKEN).data == {"customers": []}


def test_get_is_one_dynamodb_request(api):
    make_customer(api, "bar-1")
    with dynamodb_calls() as calls:
        assert api.get("/customers/bar-1").status_code == 200
    assert calls == ["GetItem"]


@pytest.mark.pending_feed  # the write's own requests: the stream's numbering comes later
def test_put_of_an_existing_customer_reads_then_writes_one_item_marked_for_the_feed(api):
    make_customer(api, "bar-1")
    with dynamodb_calls() as calls:
        assert api.put("/customers/bar-1", {"name": "Again"}).status_code == 200
    # One item changed: its write carries the change's feed mark (store/feed_marks.py), so it is one UpdateItem,
    # no transaction; the stream's numbering writes the entry later.
    assert calls == ["BatchGetItem", "UpdateItem"]


# --- PATCH /customers/:id: the settings ---


def test_a_new_customer_has_no_settings_fields(api):
    customer = make_customer(api, "bar-1")
    for field in ("price_group", "delivery_days", "delivery_date_overrides", "dates_with_no_delivery"):
        assert field not in customer
        assert field not in api.get("/customers/bar-1").data


def test_patch_sets_every_setting_and_returns_the_customer_as_get_shows_it(api):
    make_customer(api, "bar-1", company="Bar Oy")
    settings = {
        "price_group": "key accounts",
        "delivery_days": {"0": {"lead_days": 0}, "6": RULE},
        "delivery_date_overrides": {"2026-12-24": {"lead_days": 3, "cutoff": "08:00"}},
        "dates_with_no_delivery": ["2026-12-25", "2026-12-26"],
    }
    response = api.patch("/customers/bar-1", settings)
    expected = {"id": "bar-1", "name": "Customer bar-1", "company": "Bar Oy", **settings, **ALLOWED}
    assert response.status_code == 200
    assert response.data == expected
    assert api.get("/customers/bar-1").data == expected


def test_patch_changes_only_the_fields_given(api):
    make_customer(api, "bar-1")
    api.patch("/customers/bar-1", {"price_group": "gold", "dates_with_no_delivery": ["2026-12-25"]})
    response = api.patch("/customers/bar-1", {"price_group": "silver"})
    assert response.data == {
        "id": "bar-1",
        "name": "Customer bar-1",
        "price_group": "silver",
        "dates_with_no_delivery": ["2026-12-25"],
        **ALLOWED,
    }


@pytest.mark.parametrize(
    "field, value",
    [
        ("price_group", "gold"),
        ("delivery_days", {"1": RULE}),
        ("delivery_date_overrides", {"2026-12-24": RULE}),
        ("dates_with_no_delivery", ["2026-12-25"]),
    ],
)
def test_patch_null_clears_a_setting(api, field, value):
    make_customer(api, "bar-1")
    assert api.patch("/customers/bar-1", {field: value}).data[field] == value
    response = api.patch("/customers/bar-1", {field: None})
    assert response.status_code == 200
    assert field not in response.data
    assert field not in api.get("/customers/bar-1").data


def test_empty_delivery_days_is_kept_as_no_delivery_on_any_weekday(api):
    make_customer(api, "bar-1")
    response = api.patch("/customers/bar-1", {"delivery_days": {}})
    assert response.status_code == 200
    assert response.data["delivery_days"] == {}
    assert api.get("/customers/bar-1").data["delivery_days"] == {}


def test_empty_patch_changes_nothing(api):
    make_customer(api, "bar-1")
    api.patch("/customers/bar-1", {"price_group": "gold"})
    response = api.patch("/customers/bar-1", {})
    assert response.status_code == 200
    assert response.data == {"id": "bar-1", "name": "Customer bar-1", "price_group": "gold", **ALLOWED}


def test_patch_of_an_unknown_customer_is_404_and_creates_nothing(api):
    response = api.patch("/customers/nobody", {"price_group": "gold"})
    assert_problem(response, 404, "not-found")
    assert api.get("/customers/nobody").status_code == 404
    assert api.patch("/customers/nobody", {}).status_code == 404


@pytest.mark.pending_feed  # the write's own requests: the stream's numbering comes later
def test_patch_reads_then_writes_one_item_marked_for_the_feed(api):
    make_customer(api, "bar-1")
    with dynamodb_calls() as calls:
        assert api.patch("/customers/bar-1", {"price_group": "gold", "delivery_days": None}).status_code == 200
    # One item changed: its write carries the change's feed mark (store/feed_marks.py), so it is one UpdateItem,
    # no transaction; the stream's numbering writes the entry later.
    assert calls == ["BatchGetItem", "UpdateItem"]


@pytest.mark.parametrize(
    "body, paths",
    [
        ({"delivery_days": {"7": RULE}}, ["delivery_days.7"]),
        ({"delivery_days": {"mon": RULE}}, ["delivery_days.mon"]),
        ({"delivery_days": {"1": {"cutoff": "12:00"}}}, ["delivery_days.1.lead_days"]),
        ({"delivery_days": {"1": {"lead_days": -1}}}, ["delivery_days.1.lead_days"]),
        ({"delivery_days": {"1": {"lead_days": 1.5}}}, ["delivery_days.1.lead_days"]),
        ({"delivery_days": {"1": {"lead_days": "1"}}}, ["delivery_days.1.lead_days"]),
        ({"delivery_days": {"1": {"lead_days": 1, "cutoff": "24:00"}}}, ["delivery_days.1.cutoff"]),
        ({"delivery_days": {"1": {"lead_days": 1, "cutoff": "9:00"}}}, ["delivery_days.1.cutoff"]),
        ({"delivery_days": {"1": {"lead_days": 1, "cutoff": "12:60"}}}, ["delivery_days.1.cutoff"]),
        ({"delivery_days": {"1": {"lead_days": 1, "until": "12:00"}}}, ["delivery_days.1.until"]),
        ({"delivery_days": ["1"]}, ["delivery_days"]),
        ({"delivery_date_overrides": {"2026-02-30": RULE}}, ["delivery_date_overrides.2026-02-30"]),
        ({"delivery_date_overrides": {"24.12.2026": RULE}}, ["delivery_date_overrides.24.12.2026"]),
        ({"delivery_date_overrides": {"2026-12-24": {}}}, ["delivery_date_overrides.2026-12-24.lead_days"]),
        ({"dates_with_no_delivery": ["2026-12-25", "2026-13-01"]}, ["dates_with_no_delivery[1]"]),
        ({"dates_with_no_delivery": "2026-12-25"}, ["dates_with_no_delivery"]),
        ({"price_group": ""}, ["price_group"]),
        ({"price_group": " gold"}, ["price_group"]),
        ({"price_group": "gold!"}, ["price_group"]),
        ({"price_group": "x" * 65}, ["price_group"]),
        ({"price_group": 1}, ["price_group"]),
        ({"colour": "red"}, ["colour"]),
        ({"name": "New name"}, ["name"]),
        ({"id": "other"}, ["id"]),
    ],
)
def test_patch_validation(api, body, paths):
    make_customer(api, "bar-1")
    response = api.patch("/customers/bar-1", body)
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == paths
    assert api.get("/customers/bar-1").data == {"id": "bar-1", "name": "Customer bar-1", **ALLOWED}


@pytest.mark.parametrize(
    "body",
    [
        {"delivery_days": {str(n): {"lead_days": n} for n in range(7)}},
        {"delivery_days": {"1": {"lead_days": 0, "cutoff": "00:00"}, "2": {"lead_days": 365, "cutoff": "23:59"}}},
        {"delivery_date_overrides": {"2028-02-29": RULE}},
        {"dates_with_no_delivery": []},
        {"price_group": "x" * 64},
        {"price_group": "Gold_2 -A"},
    ],
)
def test_patch_accepts_valid_settings(api, body):
    make_customer(api, "bar-1")
    response = api.patch("/customers/bar-1", body)
    assert response.status_code == 200
    assert {k: response.data[k] for k in body} == body


def test_at_most_500_dates_per_setting(api):
    import datetime as dt

    make_customer(api, "bar-1")
    days = [(dt.date(2026, 1, 1) + dt.timedelta(days=n)).isoformat() for n in range(501)]
    overrides = {day: {"lead_days": 1} for day in days}
    first_500 = dict(list(overrides.items())[:500])
    assert api.patch("/customers/bar-1", {"delivery_date_overrides": first_500}).status_code == 200
    assert api.patch("/customers/bar-1", {"dates_with_no_delivery": days[:500]}).status_code == 200
    response = api.patch("/customers/bar-1", {"delivery_date_overrides": overrides, "dates_with_no_delivery": days})
    assert response.status_code == 400
    assert problem_paths(response) == ["delivery_date_overrides", "dates_with_no_delivery"]


def test_patch_lists_every_wrong_field(api):
    make_customer(api, "bar-1")
    response = api.patch(
        "/customers/bar-1",
        {"delivery_days": {"7": RULE, "1": {"lead_days": -1}}, "dates_with_no_delivery": ["nope"], "name": "x"},
    )
    assert response.status_code == 400
    assert sorted(problem_paths(response)) == [
        "dates_with_no_delivery[0]",
        "delivery_days.1.lead_days",
        "delivery_days.7",
        "name",
    ]


@pytest.mark.parametrize("raw", ["[]", '"gold"', "{", "null"])
def test_patch_refuses_bodies_that_are_not_objects(api, raw):
    make_customer(api, "bar-1")
    response = api.patch("/customers/bar-1", raw=raw)
    assert response.status_code == 400
    assert problem_paths(response) == ["body"]


# --- GET /customers ---


def test_list_pages_by_id_ascending_with_a_cursor_until_the_last_page(api):
    for customer_id in ["c", "a", "e", "b", "d"]:
        make_customer(api, customer_id)
    api.patch("/customers/b", {"price_group": "gold"})
    first = api.get("/customers?limit=2")
    assert first.status_code == 200
    assert [c["id"] for c in first.data["customers"]] == ["a", "b"]
    assert first.data["customers"][1] == {"id": "b", "name": "Customer b", "price_group": "gold", **ALLOWED}
    second = api.get(f"/customers?limit=2&cursor={first.data['cursor']}")
    assert [c["id"] for c in second.data["customers"]] == ["c", "d"]
    last = api.get(f"/customers?limit=2&cursor={second.data['cursor']}")
    assert [c["id"] for c in last.data["customers"]] == ["e"]
    assert "cursor" not in last.data


def test_list_without_customers_is_empty(api):
    assert api.get("/customers").data == {"customers": []}


def test_list_shows_unset_settings_as_absent(api):
    make_customer(api, "a")
    assert api.get("/customers").data == {"customers": [{"id": "a", "name": "Customer a", **ALLOWED}]}


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=abc", "limit=%C2%B2", "cursor=garbage"])
def test_list_refuses_bad_paging_parameters(api, query):
    response = api.get(f"/customers?{query}")
    assert response.status_code == 400
    assert problem_paths(response) == [query.split("=")[0]]


def test_a_cursor_of_another_list_or_account_is_refused(api):
    for customer_id in "abc":
        make_customer(api, customer_id)
    cursor = api.get("/customers?limit=1").data["cursor"]
    for response in (
        api.get(f"/customers?cursor={cursor}", token=OTHER_TOKEN),
        api.get(f"/categories?cursor={cursor}"),
    ):
        assert_problem(response, 400, "validation-error")
        assert problem_paths(response) == ["cursor"]


# --- customer tokens ---


def test_a_customer_token_is_created_for_an_existing_customer(api):
    make_customer(api, "bar-1")
    response = api.post("/customers/bar-1/tokens")
    assert response.status_code == 200
    assert set(response.data) == {"id", "token", "customer_id"}
    assert response.data["customer_id"] == "bar-1"
    assert len(response.data["token"]) >= 22  # at least 128 random bits
    assert api.get("/customer/products", token=response.data["token"]).status_code == 200


def test_a_token_for_an_unknown_customer_is_404(api):
    response = api.post("/customers/nobody/tokens")
    assert_problem(response, 404, "not-found")
    assert "token" not in response.data


def test_each_token_is_new(api):
    make_customer(api, "bar-1")
    first, second = api.post("/customers/bar-1/tokens").data, api.post("/customers/bar-1/tokens").data
    assert first["id"] != second["id"] and first["token"] != second["token"]


def test_a_revoked_customer_token_stops_working(api):
    make_customer(api, "bar-1")
    created = api.post("/customers/bar-1/tokens").data
    assert api.get("/customer/products", token=created["token"]).data == {"products": []}
    revoked = api.delete(f"/customers/bar-1/tokens/{created['id']}")
    assert (revoked.status_code, revoked.body) == (204, b"")
    refused = api.get("/customer/products", token=created["token"])
    assert (refused.status_code, refused.data["type"]) == (401, "unauthorized")
    again = api.delete(f"/customers/bar-1/tokens/{created['id']}")
    assert (again.status_code, again.data["type"]) == (404, "not-found")


def test_a_token_is_revoked_only_through_its_own_customer(api):
    make_customer(api, "bar-1")
    make_customer(api, "bar-2")
    created = api.post("/customers/bar-1/tokens").data
    for response in (
        api.delete(f"/customers/bar-2/tokens/{created['id']}"),
        api.delete(f"/customers/bar-1/tokens/{created['id']}", token=OTHER_TOKEN),
    ):
        assert (response.status_code, response.data["type"]) == (404, "not-found")
    assert api.get("/customer/products", token=created["token"]).data == {"products": []}


def test_supplier_tokens_cannot_be_revoked_as_customer_tokens(api):
    from chalicelib.store import tokens

    make_customer(api, "bar-1")
    token_id, secret = tokens.create("acme", "supplier")
    response = api.delete(f"/customers/bar-1/tokens/{token_id}")
    assert (response.status_code, response.data["type"]) == (404, "not-found")
    assert api.get("/customers", token=secret).data == {
        "customers": [{"id": "bar-1", "name": "Customer bar-1", **ALLOWED}]
    }


@pytest.mark.parametrize(
    "method, path",
    [
        ("GET", "/customers"),
        ("GET", "/customers/bar-1"),
        ("PUT", "/customers/bar-1"),
        ("PATCH", "/customers/bar-1"),
        ("POST", "/customers/bar-1/tokens"),
        ("DELETE", "/customers/bar-1/tokens/abc"),
    ],
)
def test_customer_tokens_are_forbidden_on_supplier_routes(api, method, path):
    make_customer(api, "bar-1")
    token = customer_token(api, "bar-1")
    body = {"name": "x"} if method in ("PUT", "PATCH") else None
    response = api.request(method, path, body, token=token)
    assert_problem(response, 403, "forbidden")


def test_customer_routes_need_a_token(api):
    for response in (api.get("/customers", token=None), api.put("/customers/a", {"name": "x"}, token="nope")):
        assert (response.status_code, response.data["type"]) == (401, "unauthorized")
    assert api.get("/customers/a").status_code == 404  # the refused PUT created nothing


def test_a_customer_that_keeps_changing_under_a_patch_is_409_and_unchanged(api, monkeypatch):
    """Every write of the customer loses to a change made between its read and its write (its one conditional
    UpdateItem): the PATCH reads and tries again WRITE_ATTEMPTS times, then answers 409 (decisions §8), not 400."""
    from chalicelib.service import documents
    from tests.transactions import condition_failed, intercept

    make_customer(api, "bar-1")
    before = api.get("/customers/bar-1").data
    tried = []

    def changed_meanwhile(send, **request):
        tried.append(request["Key"]["SK"]["S"])
        raise condition_failed("UpdateItem")

    intercept(monkeypatch, changed_meanwhile, "update_item")
    response = api.patch("/customers/bar-1", {"price_group": "gold"})
    assert_problem(response, 409, "conflict")
    assert response.data["detail"] == "the document kept changing while it was being written; try again"
    assert len(tried) == documents.WRITE_ATTEMPTS == 5
    monkeypatch.undo()
    assert api.get("/customers/bar-1").data == before
