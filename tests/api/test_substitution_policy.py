"""A customer's substitution policy (decisions §18): `substitutions` on PUT and PATCH /customers/:id, ALLOWED by
default, shown after the interface's customer fields on every read (lists and the feed's data included)."""

import pytest

from chalicelib.store import keys, table
from tests.conftest import problem_paths

from .customer_support import make_customer


def _feed(api, after=0):
    return api.get(f"/changes?after={after}&include=data").data["changes"]


def test_a_new_customer_allows_substitutes_and_every_read_says_so(api):
    created = make_customer(api, "bar-1")
    assert created["substitutions"] == "ALLOWED"
    assert api.get("/customers/bar-1").data["substitutions"] == "ALLOWED"
    assert api.get("/customers").data["customers"][0]["substitutions"] == "ALLOWED"
    assert _feed(api)[-1]["data"]["substitutions"] == "ALLOWED"


def test_a_customer_stored_before_the_policy_existed_reads_as_allowed(api):
    table.client().put_item(
        TableName=table.name(),
        Item=table.to_item({**keys.customer_key("acme", "old"), "data": {"id": "old", "name": "Old Bar"}}),
    )
    assert api.get("/customers/old").data == {"id": "old", "name": "Old Bar", "substitutions": "ALLOWED"}


def test_put_sets_the_policy_and_a_put_without_it_sets_allowed_again(api):
    response = api.put("/customers/bar-1", {"name": "Bar", "substitutions": "NOT_ALLOWED"})
    assert (response.status_code, response.data) == (
        200,
        {"id": "bar-1", "name": "Bar", "substitutions": "NOT_ALLOWED"},
    )
    assert api.get("/customers/bar-1").data["substitutions"] == "NOT_ALLOWED"
    assert api.get("/customers").data["customers"][0]["substitutions"] == "NOT_ALLOWED"
    again = api.put("/customers/bar-1", {"name": "Bar"})
    assert again.data["substitutions"] == "ALLOWED"
    assert api.get("/customers/bar-1").data["substitutions"] == "ALLOWED"


def test_patch_sets_the_policy_and_keeps_it_through_other_settings(api):
    make_customer(api, "bar-1")
    response = api.patch("/customers/bar-1", {"substitutions": "NOT_ALLOWED"})
    assert (response.status_code, response.data["substitutions"]) == (200, "NOT_ALLOWED")
    assert api.patch("/customers/bar-1", {"price_group": "gold"}).data["substitutions"] == "NOT_ALLOWED"
    assert _feed(api)[-1]["data"]["substitutions"] == "NOT_ALLOWED"
    assert api.patch("/customers/bar-1", {"substitutions": "ALLOWED"}).data["substitutions"] == "ALLOWED"
    assert api.get("/customers/bar-1").data["substitutions"] == "ALLOWED"


def test_patching_the_policy_it_already_has_changes_nothing_and_appends_no_entry(api):
    make_customer(api, "bar-1")
    before = api.get("/changes?after=latest").data["max_sequence"]
    assert api.patch("/customers/bar-1", {"substitutions": "ALLOWED"}).status_code == 200
    assert api.get("/changes?after=latest").data["max_sequence"] == before


@pytest.mark.parametrize(
    "method, body, message",
    [
        ("patch", {"substitutions": None}, "cannot be null"),
        ("patch", {"substitutions": "SOMETIMES"}, None),
        ("patch", {"substitutions": "allowed"}, None),
        ("put", {"name": "Bar", "substitutions": "NEVER"}, None),
        ("put", {"name": "Bar", "substitutions": False}, None),
    ],
)
def test_a_policy_other_than_allowed_or_not_allowed_is_a_400_naming_it(api, method, body, message):
    make_customer(api, "bar-1", substitutions="NOT_ALLOWED")
    response = getattr(api, method)("/customers/bar-1", body)
    assert response.status_code == 400
    assert problem_paths(response) == ["substitutions"]
    if message is not None:
        assert response.data["errors"][0]["message"] == message
    assert api.get("/customers/bar-1").data["substitutions"] == "NOT_ALLOWED"
