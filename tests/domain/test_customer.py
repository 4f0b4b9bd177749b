"""Customer and account settings shapes: what PUT and PATCH bodies turn into (decisions §7, §9)."""

from decimal import Decimal

import pytest

from chalicelib.domain.customer import (
    Changes,
    validate_account_settings_patch,
    validate_profile,
    validate_settings_patch,
)
from chalicelib.domain.errors import ValidationFailed
from chalicelib.domain.scaled_pricing import validate_price_groups, validate_price_level


def paths(call, *args):
    with pytest.raises(ValidationFailed) as failure:
        call(*args)
    return [error.path for error in failure.value.errors]


def test_profile_sets_the_given_fields_and_removes_the_rest():
    assert validate_profile({"name": " Bar ", "company": "Bar Oy"}, "b1") == Changes(
        set={"name": "Bar", "company": "Bar Oy", "id": "b1"}, remove=("address", "contact", "substitutions")
    )


def test_a_put_sets_the_substitution_policy_it_names_and_without_it_the_default_again():
    """decisions §18: a PUT without `substitutions` means ALLOWED (the field is removed, read as the default)."""
    assert validate_profile({"name": "Bar", "substitutions": "NOT_ALLOWED"}, "b1").set["substitutions"] == "NOT_ALLOWED"
    assert "substitutions" in validate_profile({"name": "Bar"}, "b1").remove


def test_a_patch_sets_the_substitution_policy_and_never_clears_it():
    assert validate_settings_patch({"substitutions": "NOT_ALLOWED"}) == Changes(
        set={"substitutions": "NOT_ALLOWED"}, remove=()
    )
    with pytest.raises(ValidationFailed) as refused:
        validate_settings_patch({"substitutions": None})
    assert [(e.path, e.message) for e in refused.value.errors] == [("substitutions", "cannot be null")]
    with pytest.raises(ValidationFailed) as refused:
        validate_settings_patch({"substitutions": "SOMETIMES"})
    assert [e.path for e in refused.value.errors] == ["substitutions"]


def test_settings_patch_sets_values_and_removes_nulls():
    changes = validate_settings_patch({"price_group": None, "delivery_days": {"1": {"lead_days": 2}}})
    assert changes == Changes(set={"delivery_days": {"1": {"lead_days": 2}}}, remove=("price_group",))


def test_empty_delivery_days_is_a_value_not_a_removal():
    assert validate_settings_patch({"delivery_days": {}}) == Changes(set={"delivery_days": {}}, remove=())


def test_account_patch_refuses_null_where_a_value_is_always_kept():
    assert paths(validate_account_settings_patch, {"timezone": None, "allow_delivery_comments": None}) == [
        "timezone",
        "allow_delivery_comments",
    ]
    assert validate_account_settings_patch({"dates_with_no_delivery": None}).remove == ("dates_with_no_delivery",)


def test_profile_and_settings_fields_each_belong_to_their_own_write():
    assert paths(validate_profile, {"name": "x", "delivery_days": {}}, "b1") == ["delivery_days"]
    assert paths(validate_settings_patch, {"company": "x", "id": "b2"}) == ["id", "company"]


def test_shape_and_rule_errors_of_pricing_are_reported_together():
    body = {"price": -1, "pricing": {"strategy": "INCREMENTAL", "price_points": [{"from": Decimal("0.5"), "price": 1}]}}
    assert paths(validate_price_level, body, "kg") == ["price", "pricing.strategy", "pricing.price_points[0].from"]
    groups = {"g1": {"price": "x"}, "g2": body}
    assert paths(validate_price_groups, groups, "vessel") == ["g1.price", "g2.price", "g2.pricing.price_points[0].from"]
