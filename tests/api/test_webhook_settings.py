"""GET/PUT/DELETE /account/settings/webhooks (decisions §10)."""

import base64
import json

import pytest
from standardwebhooks import Webhook

from tests.api.deliveries_helpers import place, shop  # noqa: F401 - a fixture
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem

PATH = "/account/settings/webhooks"
HOOK = "https://hooks.example.com/orders"


def test_before_any_put_there_is_no_webhook(api):
    response = api.get(PATH)
    assert_problem(response, 404, "not-found")
    assert response.headers["Content-Type"] == "application/problem+json"


def test_put_stores_the_configuration_with_post_by_default_and_adds_a_signing_secret(api):
    response = api.put(PATH, {"url": HOOK})
    assert response.status_code == 200
    secret = response.data.pop("signing_secret")
    assert response.data == {"url": HOOK, "method": "POST", "events": LEGACY}
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) >= 24
    Webhook(secret)  # the Standard Webhooks library accepts it
    assert api.get(PATH).data == {"url": HOOK, "method": "POST", "events": LEGACY, "signing_secret": secret}


LEGACY = ["request-delivery", "cancel-delivery", "receive-delivery"]


def test_events_select_legacy_and_feed_types_and_are_answered_back(api):
    selected = ["request-delivery", "delivery.accepted", "product.updated"]
    response = api.put(PATH, {"url": HOOK, "events": selected})
    assert response.status_code == 200 and response.data["events"] == selected
    assert api.get(PATH).data["events"] == selected
    assert api.put(PATH, {"url": HOOK}).data["events"] == LEGACY  # without events: the default again


@pytest.mark.parametrize(
    "events",
    [
        ["request-delivery", "delivery.requested"],
        ["cancel-delivery", "delivery.cancelled"],
        ["receive-delivery", "delivery.delivered"],
        ["product.exploded"],
        ["request-delivery", "nope"],
        "request-delivery",
        [1],
    ],
)
def test_a_legacy_type_with_its_twin_or_an_unknown_type_is_400_naming_events(api, events):
    response = api.put(PATH, {"url": HOOK, "events": events})
    assert response.status_code == 400
    assert {path.split("[")[0] for path in problem_paths(response)} == {"events"}
    assert api.get(PATH).status_code == 404  # nothing stored


def test_an_empty_selection_is_answered_back_and_sends_nothing_while_null_is_the_default(shop):
    """An audit found `"events": []` stored as the legacy default: the account got delivery events it deselected."""
    response = shop.put(PATH, {"url": HOOK, "events": []})
    assert (response.status_code, response.data["events"]) == (200, [])
    assert shop.get(PATH).data["events"] == []
    place(shop, [{"id": "beer", "count": 1}])
    assert shop.get("/account/events").data == {"events": []}
    changes = shop.get("/changes?include=data&limit=1000").data["changes"]
    assert [c["data"] for c in changes if c["resource"] == "settings"] == [
        {"url": HOOK, "method": "POST", "events": []}
    ]
    assert shop.put(PATH, {"url": HOOK, "events": None}).data["events"] == LEGACY


def test_the_signing_secret_is_kept_across_puts_and_differs_between_accounts(api):
    first = api.put(PATH, {"url": HOOK}).data["signing_secret"]
    second = api.put(PATH, {"url": "http://other.example/h", "method": "PATCH"}).data["signing_secret"]
    assert first == second == api.get(PATH).data["signing_secret"]
    assert api.put(PATH, {"url": HOOK}, token=OTHER_TOKEN).data["signing_secret"] != first


def test_the_password_is_never_shown_back(api):
    body = {
        "url": HOOK,
        "method": "PUT",
        "headers": {"X-Api-Key": "k1"},
        "authorization": {"type": "basic", "username": "shop", "password": "s3cret"},
    }
    put = api.put(PATH, body)
    got = api.get(PATH)
    for response in (put, got):
        assert response.status_code == 200
        assert response.data["authorization"] == {"type": "basic", "username": "shop"}
        assert response.data["headers"] == {"X-Api-Key": "k1"}
        assert response.data["method"] == "PUT"
        assert "s3cret" not in json.dumps(response.data)


def test_put_replaces_the_whole_configuration(api):
    api.put(
        PATH,
        {"url": HOOK, "headers": {"X-A": "1"}, "authorization": {"type": "basic", "username": "u", "password": "p"}},
    )
    response = api.put(PATH, {"url": HOOK})
    assert "headers" not in response.data and "authorization" not in response.data
    assert "headers" not in api.get(PATH).data


@pytest.mark.parametrize(
    "body, path",
    [
        ({}, "url"),
        ({"url": "/relative/hook"}, "url"),
        ({"url": "ftp://example.com/hook"}, "url"),
        ({"url": "https://user:pass@example.com/hook"}, "url"),
        ({"url": "https://example.com:99999/hook"}, "url"),
        ({"url": "https://example.com/" + "a" * 2048}, "url"),
        ({"url": "https://exa mple.com/hook"}, "url"),
        ({"url": 42}, "url"),
        ({"url": "https://bücher.example/hook"}, "url"),
        ({"url": "https://example.com/h\x01ook"}, "url"),
        ({"url": HOOK, "method": "GET"}, "method"),
        ({"url": HOOK, "method": "post"}, "method"),
        ({"url": HOOK, "headers": ["X-A"]}, "headers"),
        ({"url": HOOK, "headers": {"Host": "evil.example"}}, "headers.Host"),
        ({"url": HOOK, "headers": {"content-type": "text/plain"}}, "headers.content-type"),
        ({"url": HOOK, "headers": {"Content-Length": "1"}}, "headers.Content-Length"),
        ({"url": HOOK, "headers": {"Webhook-Signature": "v1,x"}}, "headers.Webhook-Signature"),
        ({"url": HOOK, "headers": {"webhook-id": "x"}}, "headers.webhook-id"),
        ({"url": HOOK, "headers": {"Transfer-Encoding": "chunked"}}, "headers.Transfer-Encoding"),
        ({"url": HOOK, "headers": {"Bad Header": "x"}}, "headers.Bad Header"),
        ({"url": HOOK, "headers": {"X-A\n": "x"}}, "headers.X-A\n"),
        ({"url": HOOK, "headers": {"": "x"}}, "headers."),
        ({"url": HOOK, "headers": {"X-Ä": "x"}}, "headers.X-Ä"),
        ({"url": HOOK, "headers": {"X-A": "line\r\nInjected: yes"}}, "headers.X-A"),
        ({"url": HOOK, "headers": {"X-A": 1}}, "headers.X-A"),
        ({"url": HOOK, "headers": {"X-A": "wört"}}, "headers.X-A"),
        ({"url": HOOK, "headers": {"X-A": "a\x00b"}}, "headers.X-A"),
        ({"url": HOOK, "headers": {"X-A": "a" * 1025}}, "headers.X-A"),
        ({"url": HOOK, "headers": {f"X-{n}": "v" for n in range(21)}}, "headers"),
        ({"url": HOOK, "headers": {"X-A": "1", "x-a": "2"}}, "headers.x-a"),
        ({"url": HOOK, "authorization": {"type": "bearer", "username": "u", "password": "p"}}, "authorization.type"),
        (
            {"url": HOOK, "authorization": {"type": "basic", "username": "u:v", "password": "p"}},
            "authorization.username",
        ),
        ({"url": HOOK, "authorization": {"type": "basic", "username": "u"}}, "authorization.password"),
        ({"url": HOOK, "authorization": {"type": "basic", "username": "", "password": "p"}}, "authorization.username"),
        (
            {
                "url": HOOK,
                "headers": {"Authorization": "Bearer t"},
                "authorization": {"type": "basic", "username": "u", "password": "p"},
            },
            "headers.Authorization",
        ),
        ({"url": HOOK, "secret": "mine"}, "secret"),
        ({"url": HOOK, "signing_secret": "whsec_x"}, "signing_secret"),
    ],
)
def test_invalid_settings_are_refused_naming_the_field(api, body, path):
    response = api.put(PATH, body)
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == [path]
    assert api.get(PATH).status_code == 404  # nothing was stored


def test_every_wrong_field_is_named_at_once(api):
    response = api.put(PATH, {"url": "nope", "method": "GET", "headers": {"Host": "x"}})
    assert response.status_code == 400
    assert sorted(problem_paths(response)) == ["headers.Host", "method", "url"]


@pytest.mark.parametrize(
    "body",
    [
        {"url": "http://localhost:8080/hook"},
        {"url": "https://example.com/hook?tenant=acme&x=1", "method": "PATCH"},
        {"url": "https://example.com/" + "a" * 2000},
        {"url": "https://xn--bcher-kva.example/b%C3%BCcher"},
        {"url": HOOK, "headers": {"X-Api-Key": "k", "Authorization": "Bearer t", "User-Agent": "mine"}},
        {"url": HOOK, "headers": {"X-Empty": "", "X-Tab": "a\tb", "X-Long": "a" * 1024}},
        {"url": HOOK, "headers": {f"X-{n}": "v" for n in range(20)}},
        {"url": HOOK, "headers": {}},
        {"url": HOOK, "authorization": {"type": "basic", "username": "shop", "password": "p:ss wörd"}},
    ],
)
def test_valid_settings_are_accepted(api, body):
    response = api.put(PATH, body)
    assert response.status_code == 200, response.data
    assert response.data["url"] == body["url"]
    assert response.data["method"] == body.get("method", "POST")


def test_malformed_json_is_a_validation_error(api):
    response = api.put(PATH, raw="{not json")
    assert response.status_code == 400
    assert problem_paths(response) == ["body"]


def test_delete_stops_sending_and_a_later_put_brings_back_the_same_secret(api):
    secret = api.put(PATH, {"url": HOOK}).data["signing_secret"]
    assert api.delete(PATH).status_code == 204
    assert api.get(PATH).status_code == 404
    assert api.delete(PATH).status_code == 404
    assert api.put(PATH, {"url": HOOK}).data["signing_secret"] == secret


def test_settings_belong_to_one_account(api):
    api.put(PATH, {"url": HOOK})
    assert api.get(PATH, token=OTHER_TOKEN).status_code == 404


def test_a_token_is_required(api):
    assert api.get(PATH, token=None).status_code == 401
    assert api.put(PATH, {"url": HOOK}, token=None).status_code == 401


def test_a_customer_token_is_forbidden(api):
    from chalicelib.store import tokens

    _, customer_token = tokens.create("acme", "customer", customer_id="c1")
    assert api.get(PATH, token=customer_token).status_code == 403


def test_unsupported_methods_are_405(api):
    response = api.post(PATH, {"url": HOOK})
    assert response.status_code == 405
    assert set(response.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"}


def test_settings_that_keep_changing_under_a_put_are_409_and_unchanged(api, monkeypatch):
    """Every write of the settings (their conditional update with its feed mark, and the selection kept on the feed's
    head, in one transaction) loses to a change made between its read and its write: the PUT reads and tries again
    WRITE_ATTEMPTS times, then answers 409."""
    from chalicelib.service import webhooks
    from tests.transactions import cancelled, intercept

    assert api.put(PATH, {"url": HOOK}).status_code == 200
    tried = []

    def changed_meanwhile(send, **request):
        tried.append(request["TransactItems"][0]["Update"]["Key"])
        raise cancelled(["ConditionalCheckFailed", "None"], "changed meanwhile")

    intercept(monkeypatch, changed_meanwhile)
    response = api.put(PATH, {"url": HOOK + "/v2"})
    assert (response.status_code, response.data["type"]) == (409, "conflict")
    assert response.data["detail"] == "the account is being changed by many requests at once; try again"
    assert len(tried) == webhooks.WRITE_ATTEMPTS == 5
    monkeypatch.undo()
    assert api.get(PATH).data["url"] == HOOK
