"""Account delivery settings: defaults, timezone, comment flags, rules; null clears (interface: Account delivery
settings; decisions §7, §9)."""

import pytest

from tests.api.customer_support import customer_token, dynamodb_calls, make_customer
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem

PATH = "/account/settings/deliveries"
DEFAULTS = {
    "timezone": "UTC",
    "allow_delivery_comments": False,
    "allow_product_comments": False,
    "claim_window_hours": 72,  # decisions §18
}
RULE = {"lead_days": 1, "cutoff": "12:00"}


def test_an_account_without_settings_reads_the_defaults(api):
    response = api.get(PATH)
    assert response.status_code == 200
    assert response.data == DEFAULTS


def test_an_account_keeps_the_zone_it_was_made_with_whatever_zone_the_reading_process_has(api, monkeypatch):
    """decisions §7: acme was made with TIMEZONE unset (UTC); a process started with another zone reads UTC."""
    monkeypatch.setenv("TIMEZONE", "Asia/Tokyo")
    assert api.get(PATH).data == DEFAULTS


def test_an_account_takes_the_deployments_timezone_when_it_is_made(api, monkeypatch):
    from chalicelib.service import accounts

    monkeypatch.setenv("TIMEZONE", "Europe/Berlin")
    accounts.create_account("berlin", None, "berlin-supplier-token")
    monkeypatch.setenv("TIMEZONE", "America/New_York")
    assert api.get(PATH, token="berlin-supplier-token").data == {**DEFAULTS, "timezone": "Europe/Berlin"}
    accounts.create_account("berlin", None, "berlin-supplier-token")  # idempotent: the zone stays
    monkeypatch.delenv("TIMEZONE")
    assert api.get(PATH, token="berlin-supplier-token").data["timezone"] == "Europe/Berlin"
    assert api.get(PATH).data["timezone"] == "UTC"  # acme, made before, still reads its own


def test_an_account_made_before_zones_were_stored_reads_utc_until_created_again(api, monkeypatch):
    """An account whose settings item is missing (made before) reads UTC, not the process's zone; create-account
    run again gives it the deployment's zone, once."""
    from chalicelib.service import accounts
    from chalicelib.store import keys, table

    table.client().delete_item(TableName=table.name(), Key=table.to_item(keys.settings_key("acme", "DELIVERIES")))
    monkeypatch.setenv("TIMEZONE", "Europe/Helsinki")
    assert api.get(PATH).data["timezone"] == "UTC"
    accounts.create_account("acme")
    monkeypatch.setenv("TIMEZONE", "Asia/Tokyo")
    accounts.create_account("acme")
    assert api.get(PATH).data["timezone"] == "Europe/Helsinki"


def test_the_first_patch_keeps_the_zone_the_account_was_made_with(api, monkeypatch):
    monkeypatch.setenv("TIMEZONE", "Europe/Helsinki")
    assert api.patch(PATH, {"allow_product_comments": True}).status_code == 200
    assert api.get(PATH).data["timezone"] == "UTC"


def test_cutoffs_follow_the_accounts_zone_not_the_processes(api, monkeypatch):
    """A cutoff of 12:00 for Wednesday's delivery (lead 1 day) in Berlin: at 10:30 UTC (12:30 in Berlin) it has
    passed, whatever zone the process was started with."""
    import datetime as dt

    from chalicelib.service import accounts
    from tests.conftest import clock_at

    monkeypatch.setenv("TIMEZONE", "Europe/Berlin")
    accounts.create_account("berlin", None, "berlin-supplier-token")
    monkeypatch.setenv("TIMEZONE", "UTC")
    supplier = {"token": "berlin-supplier-token"}
    rules = {"delivery_days": {"3": {"lead_days": 1, "cutoff": "12:00"}}}
    assert api.patch(PATH, rules, **supplier).data["timezone"] == "Europe/Berlin"
    make_customer_as = api.put("/customers/bar", {"name": "Bar"}, **supplier)
    assert make_customer_as.status_code == 200
    token = api.post("/customers/bar/tokens", **supplier).data["token"]
    clock_at(monkeypatch, dt.datetime(2026, 5, 5, 10, 30, tzinfo=dt.timezone.utc))  # Tuesday 12:30 in Berlin
    dates = api.get("/customer/delivery-dates?days=1", token=token).data
    assert dates["dates"] == ["2026-05-13"]  # this Wednesday's cutoff has passed in Berlin


def test_patch_sets_every_field_and_returns_the_settings_as_get_shows_them(api):
    body = {
        "timezone": "Europe/Helsinki",
        "allow_delivery_comments": True,
        "allow_product_comments": True,
        "delivery_days": {"1": RULE, "3": {"lead_days": 0}},
        "delivery_date_overrides": {"2026-12-24": {"lead_days": 2}},
        "dates_with_no_delivery": ["2026-12-25"],
        "claim_window_hours": 48,
    }
    response = api.patch(PATH, body)
    assert response.status_code == 200
    assert response.data == body
    assert api.get(PATH).data == body


def test_patch_changes_only_the_fields_given(api):
    api.patch(PATH, {"timezone": "America/New_York", "dates_with_no_delivery": ["2026-07-04"]})
    response = api.patch(PATH, {"allow_delivery_comments": True})
    assert response.data == {
        "timezone": "America/New_York",
        "allow_delivery_comments": True,
        "allow_product_comments": False,
        "dates_with_no_delivery": ["2026-07-04"],
        "claim_window_hours": 72,
    }


def test_flags_can_be_turned_off_again(api):
    api.patch(PATH, {"allow_delivery_comments": True, "allow_product_comments": True})
    assert api.patch(PATH, {"allow_delivery_comments": False, "allow_product_comments": False}).data == DEFAULTS


@pytest.mark.parametrize(
    "field, value",
    [
        ("delivery_days", {"1": RULE}),
        ("delivery_date_overrides", {"2026-12-24": RULE}),
        ("dates_with_no_delivery", ["2026-12-25"]),
    ],
)
def test_null_clears_a_rule_field(api, field, value):
    assert api.patch(PATH, {field: value}).data[field] == value
    response = api.patch(PATH, {field: None})
    assert response.status_code == 200
    assert response.data == DEFAULTS
    assert api.get(PATH).data == DEFAULTS


@pytest.mark.parametrize(
    "field", ["timezone", "allow_delivery_comments", "allow_product_comments", "claim_window_hours"]
)
def test_null_is_refused_for_fields_that_always_have_a_value(api, field):
    api.patch(PATH, {"timezone": "Europe/Helsinki", "allow_delivery_comments": True, "allow_product_comments": True})
    response = api.patch(PATH, {field: None})
    assert response.status_code == 400
    assert problem_paths(response) == [field]
    assert api.get(PATH).data[field] is not None


@pytest.mark.parametrize("hours", [0, 1, 2160])
def test_the_claim_window_takes_0_to_2160_hours(api, hours):
    response = api.patch(PATH, {"claim_window_hours": hours})
    assert response.status_code == 200
    assert response.data == {**DEFAULTS, "claim_window_hours": hours}
    assert api.get(PATH).data == {**DEFAULTS, "claim_window_hours": hours}


def test_empty_delivery_days_is_kept(api):
    response = api.patch(PATH, {"delivery_days": {}})
    assert response.status_code == 200
    assert response.data["delivery_days"] == {}
    assert api.get(PATH).data["delivery_days"] == {}


@pytest.mark.parametrize(
    "timezone",
    [
        "",
        "Mars/Base",
        "europe/helsinki",
        "Europe/Helsinki ",
        "../../etc/passwd",
        "/etc/localtime",
        "Europe/../UTC",
        "Europe//Helsinki",
        "x" * 300,
        "\u0000",
        3,
        True,
        ["UTC"],
    ],
)
def test_timezone_must_be_an_iana_name(api, timezone):
    response = api.patch(PATH, {"timezone": timezone})
    assert response.status_code == 400
    assert problem_paths(response) == ["timezone"]
    assert api.get(PATH).data["timezone"] == "UTC"


@pytest.mark.parametrize("timezone", ["UTC", "Europe/Helsinki", "America/Argentina/Buenos_Aires", "Etc/GMT+5"])
def test_iana_timezones_are_accepted(api, timezone):
    response = api.patch(PATH, {"timezone": timezone})
    assert response.status_code == 200
    assert response.data["timezone"] == timezone


@pytest.mark.parametrize(
    "body, paths",
    [
        ({"allow_delivery_comments": "true"}, ["allow_delivery_comments"]),
        ({"allow_product_comments": 1}, ["allow_product_comments"]),
        ({"delivery_days": {"7": RULE}}, ["delivery_days.7"]),
        ({"delivery_days": {"1": {}}}, ["delivery_days.1.lead_days"]),
        ({"delivery_days": {"1": {"lead_days": -1}}}, ["delivery_days.1.lead_days"]),
        ({"delivery_days": {"1": {"lead_days": 0.5}}}, ["delivery_days.1.lead_days"]),
        ({"delivery_days": {"1": {"lead_days": 1, "cutoff": "12.00"}}}, ["delivery_days.1.cutoff"]),
        ({"delivery_date_overrides": {"2025-02-29": RULE}}, ["delivery_date_overrides.2025-02-29"]),
        ({"dates_with_no_delivery": ["2026-1-5"]}, ["dates_with_no_delivery[0]"]),
        ({"price_group": "gold"}, ["price_group"]),
        ({"webhook": "x"}, ["webhook"]),
        ({"timezone": "Mars/Base", "allow_product_comments": "no"}, ["timezone", "allow_product_comments"]),
        ({"claim_window_hours": -1}, ["claim_window_hours"]),
        ({"claim_window_hours": 2161}, ["claim_window_hours"]),
        ({"claim_window_hours": 1.5}, ["claim_window_hours"]),
        ({"claim_window_hours": "72"}, ["claim_window_hours"]),
        ({"claim_window_hours": True}, ["claim_window_hours"]),
    ],
)
def test_patch_validation(api, body, paths):
    response = api.patch(PATH, body)
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == paths
    assert api.get(PATH).data == DEFAULTS


@pytest.mark.parametrize("raw", ["[]", "true", "{"])
def test_patch_refuses_bodies_that_are_not_objects(api, raw):
    response = api.patch(PATH, raw=raw)
    assert response.status_code == 400
    assert problem_paths(response) == ["body"]


def test_empty_patch_returns_the_settings(api):
    assert api.patch(PATH, {}).data == DEFAULTS
    api.patch(PATH, {"allow_delivery_comments": True})
    assert api.patch(PATH, {}).data == {**DEFAULTS, "allow_delivery_comments": True}


def test_accounts_have_their_own_settings(api):
    api.patch(PATH, {"timezone": "Asia/Tokyo", "allow_delivery_comments": True})
    assert api.get(PATH, token=OTHER_TOKEN).data == DEFAULTS


def test_read_is_one_dynamodb_request_with_or_without_stored_settings(api):
    api.get("/customers")  # the token is looked up once, then cached
    with dynamodb_calls() as calls:
        api.get(PATH)
    assert calls == ["GetItem"]
    api.patch(PATH, {"allow_delivery_comments": True})
    with dynamodb_calls() as calls:
        api.get(PATH)
    assert calls == ["GetItem"]


@pytest.mark.pending_feed  # the write's own requests: the stream's numbering comes later
def test_patch_of_stored_settings_reads_then_writes_one_item_marked_for_the_feed(api):
    api.patch(PATH, {"allow_delivery_comments": True})
    with dynamodb_calls() as calls:
        assert api.patch(PATH, {"allow_product_comments": True, "delivery_days": None}).status_code == 200
    # One item changed: its write carries the change's feed mark (store/feed_marks.py), so it is one UpdateItem,
    # no transaction; the stream's numbering writes the entry later.
    assert calls == ["BatchGetItem", "UpdateItem"]
    # A change of the rules or the zone also puts the standing orders' look again in the write (decisions §17).
    with dynamodb_calls() as calls:
        assert api.patch(PATH, {"timezone": "Europe/Oslo"}).status_code == 200
    assert calls == ["BatchGetItem", "TransactWriteItems"]


def test_customer_tokens_are_forbidden(api):
    make_customer(api, "bar-1")
    token = customer_token(api, "bar-1")
    assert api.get(PATH, token=token).status_code == 403
    assert api.patch(PATH, {"allow_delivery_comments": True}, token=token).status_code == 403
    assert api.get(PATH).data == DEFAULTS
