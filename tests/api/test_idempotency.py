"""Idempotency-Key on POST (decisions §11): a replay returns the first answer and does nothing again."""

import json

import pytest

from chalicelib.service import ordering
from chalicelib.store import keys, table
from tests.conftest import problem_paths
from tests.problems import assert_problem

from .deliveries_helpers import CUSTOMER_TOKEN, NOW, OTHER_CUSTOMER_TOKEN, USER, place, put_product, shop  # noqa: F401
from .test_deliveries_customer import events

NOW_EPOCH = int(NOW.timestamp())  # the service clock in these tests
ORDER = {"items": [{"id": "beer", "count": 1}], "user": USER}


def post(api, path, body, key, token=...):
    return api.post(path, body=body, token=token, headers={"Idempotency-Key": key})


def order(api, key, body=ORDER, token=CUSTOMER_TOKEN):
    return post(api, "/customer/deliveries", body, key, token)


def record(scope, key):
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.idempotency_key("acme", scope, key))
    )
    return table.from_item(response["Item"]) if "Item" in response else None


def test_a_replayed_order_returns_the_first_answer_and_places_nothing(shop):
    first = order(shop, "k-1")
    again = order(shop, "k-1")
    assert first.status_code == again.status_code == 200
    assert again.data == first.data
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert len(shop.get("/deliveries").data["deliveries"]) == 1
    assert len(events()) == 1


def test_the_order_and_its_answer_are_written_together(shop):
    first = order(shop, "k-1")
    stored = record("CUSTOMER:c1", "k-1")
    assert stored["state"] == "COMPLETE" and int(stored["status"]) == 200
    assert stored["expires_at"] - NOW_EPOCH > 23 * 3600
    assert order(shop, "k-1").data == first.data


def test_another_body_under_the_same_key_is_refused(shop):
    order(shop, "k-1")
    response = order(shop, "k-1", {**ORDER, "items": [{"id": "beer", "count": 2}]})
    assert_problem(response, 400, "conflict")
    assert len(shop.get("/deliveries").data["deliveries"]) == 1


def test_the_same_key_on_another_route_or_delivery_is_refused(shop):
    first, second = (place(shop, [{"id": "beer", "count": 1}]) for _ in range(2))
    assert post(shop, f"/deliveries/{first['id']}/responses", {"type": "ACCEPT"}, "k-1").status_code == 200
    other_delivery = post(shop, f"/deliveries/{second['id']}/responses", {"type": "ACCEPT"}, "k-1")
    assert_problem(other_delivery, 400, "conflict")
    other_route = post(shop, "/products", {"id": "tea", "status": "ACTIVE", "category": "drinks", "name": "Tea"}, "k-1")
    assert_problem(other_route, 400, "conflict")
    assert shop.get(f"/deliveries/{second['id']}").data["responses"] == []


def test_keys_of_different_customers_do_not_meet(shop):
    mine = order(shop, "k-1")
    theirs = order(shop, "k-1", token=OTHER_CUSTOMER_TOKEN)
    assert theirs.status_code == 200
    assert theirs.data["deliveries"][0]["id"] != mine.data["deliveries"][0]["id"]


def test_a_replayed_response_appends_nothing(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    path = f"/deliveries/{delivery['id']}/responses"
    first = post(shop, path, {"type": "ACCEPT", "reference": "R"}, "r-1")
    again = post(shop, path, {"type": "ACCEPT", "reference": "R"}, "r-1")
    assert again.status_code == 200 and again.data == first.data
    assert len(shop.get(f"/deliveries/{delivery['id']}").data["responses"]) == 1
    assert record("SUPPLIER", "r-1")["state"] == "COMPLETE"


def test_a_replayed_cancel_returns_the_first_answer(shop):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    path = f"/customer/deliveries/{delivery['id']}/cancel"
    first = post(shop, path, {"message": "oops"}, "c-1", token=CUSTOMER_TOKEN)
    again = post(shop, path, {"message": "oops"}, "c-1", token=CUSTOMER_TOKEN)
    assert first.status_code == again.status_code == 200
    assert again.data == first.data
    assert [e["type"] for e in events()].count("cancel-delivery") == 1
    without_key = shop.post(path, body={"message": "oops"}, token=CUSTOMER_TOKEN)
    assert_problem(without_key, 400, "invalid-transition")


def test_errors_are_answers_too(shop):
    first = order(shop, "k-1", {**ORDER, "items": [{"id": "nope", "count": 1}]})
    assert first.status_code == 400
    put_product(shop, "nope", {"status": "ACTIVE", "category": "drinks", "name": "Now it exists"})
    again = order(shop, "k-1", {**ORDER, "items": [{"id": "nope", "count": 1}]})
    # The first answer byte for byte (decisions §11): its `instance` names the first request; X-Request-Id this one.
    assert again.status_code == 400 and again.headers["Idempotent-Replayed"] == "true"
    assert again.body == first.body
    assert again.data["instance"] == first.headers["X-Request-Id"] != again.headers["X-Request-Id"]
    assert again.headers["Content-Type"] == "application/problem+json"


def test_a_request_still_in_progress_gives_409(shop):
    claim = {
        **keys.idempotency_key("acme", "CUSTOMER:c1", "k-1"),
        "state": "IN_PROGRESS",
        "fingerprint": "unknown",
        "claim_id": "someone",
        "claimed_at": NOW_EPOCH,
        "expires_at": NOW_EPOCH + 3600,
    }
    table.client().put_item(TableName=table.name(), Item=table.to_item(claim))
    assert_problem(order(shop, "k-1"), 400, "conflict")  # another request: 400
    first = order(shop, "k-2")
    claim.update(keys.idempotency_key("acme", "CUSTOMER:c1", "k-2"))
    claim["fingerprint"] = record("CUSTOMER:c1", "k-2")["fingerprint"]
    table.client().put_item(TableName=table.name(), Item=table.to_item(claim))
    busy = order(shop, "k-2")
    assert_problem(busy, 409, "conflict")
    # a claim older than 60 s belongs to a request that died: it is taken over and the work is done
    claim["claimed_at"] = NOW_EPOCH - 61
    table.client().put_item(TableName=table.name(), Item=table.to_item(claim))
    taken_over = order(shop, "k-2")
    assert taken_over.status_code == 200
    assert taken_over.data["deliveries"][0]["id"] == first.data["deliveries"][0]["id"] + 1


def test_an_expired_key_can_be_used_again(shop):
    first = order(shop, "k-1")
    table.client().update_item(
        TableName=table.name(),
        Key=table.to_item(keys.idempotency_key("acme", "CUSTOMER:c1", "k-1")),
        UpdateExpression="SET expires_at = :past",
        ExpressionAttributeValues=table.values(past=NOW_EPOCH - 1),
    )
    again = order(shop, "k-1", {**ORDER, "items": [{"id": "beer", "count": 5}]})
    assert again.status_code == 200
    assert again.data["deliveries"][0]["id"] == first.data["deliveries"][0]["id"] + 1


def test_a_server_error_releases_the_key(shop, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    real = ordering.place_order
    monkeypatch.setattr(ordering, "place_order", broken)
    assert order(shop, "k-1").status_code == 500
    assert record("CUSTOMER:c1", "k-1") is None
    monkeypatch.setattr(ordering, "place_order", real)
    assert order(shop, "k-1").status_code == 200


def test_any_post_route_honours_the_key(shop):
    product = {"id": "tea", "status": "ACTIVE", "category": "drinks", "name": "Green Tea"}
    first = post(shop, "/products", product, "p-1")
    again = post(shop, "/products", product, "p-1")
    assert first.status_code == again.status_code == 200
    assert again.data == first.data
    assert shop.post("/products", body=product).status_code == 400  # without the key: it exists


@pytest.mark.parametrize("key", ["x" * 256, "bad\tkey"])
def test_a_malformed_key_is_refused(shop, key):
    response = order(shop, key)
    assert response.status_code == 400
    assert problem_paths(response) == ["Idempotency-Key"]


def test_an_empty_key_is_refused(shop):
    response = order(shop, "")
    assert response.status_code == 400


def test_a_token_secret_is_never_stored_for_a_replay(shop):
    """Token creation ignores Idempotency-Key: a replay would need the secret, which is kept only as a hash."""
    first = post(shop, "/customers/c2/tokens", None, "t-1")
    again = post(shop, "/customers/c2/tokens", None, "t-1")
    assert first.status_code == again.status_code == 200
    assert first.data["token"] != again.data["token"]
    assert "Idempotent-Replayed" not in again.headers
    assert record("supplier", "t-1") is None
    stored = table.client().scan(TableName=table.name())["Items"]
    assert first.data["token"] not in str(stored)


def test_a_key_claimed_and_let_go_again_and_again_while_we_claim_is_409_and_nothing_is_done(shop, monkeypatch):
    from chalicelib.store import outcomes

    monkeypatch.setattr("chalicelib.store.idempotency.claim", lambda *args: outcomes.Contended())
    busy = order(shop, "k-1")
    assert (busy.status_code, busy.data["type"]) == (409, "conflict")
    assert busy.data["detail"] == "a request with this Idempotency-Key is still in progress; retry later"
    assert record("CUSTOMER:c1", "k-1") is None


def test_a_409_after_lasting_contention_is_not_replayed_and_the_retry_gets_the_real_outcome(shop, monkeypatch):
    from chalicelib.service import deliveries

    delivery = place(shop, [{"id": "beer", "count": 1}])
    path = f"/deliveries/{delivery['id']}/responses"
    monkeypatch.setattr(deliveries, "MAX_ATTEMPTS", 0)  # every attempt lost to another change...
    monkeypatch.setattr(deliveries, "CONTENTION_SECONDS", 0)  # ...for as long as the service keeps trying
    busy = post(shop, path, {"type": "ACCEPT", "reference": "R"}, "contended")
    assert (busy.status_code, busy.data["type"]) == (409, "conflict")
    assert record("SUPPLIER", "contended") is None  # the key was given back

    monkeypatch.undo()
    retried = post(shop, path, {"type": "ACCEPT", "reference": "R"}, "contended")
    assert retried.status_code == 200
    assert "Idempotent-Replayed" not in retried.headers
    assert [r["reference"] for r in retried.data["responses"]] == ["R"]
    assert record("SUPPLIER", "contended")["state"] == "COMPLETE"


def test_a_server_error_is_not_replayed(shop, monkeypatch):
    from chalicelib.service import deliveries

    delivery = place(shop, [{"id": "beer", "count": 1}])
    path = f"/deliveries/{delivery['id']}/responses"

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(deliveries, "_change", broken)
    failed = post(shop, path, {"type": "ACCEPT"}, "broken")
    assert failed.status_code == 500
    assert record("SUPPLIER", "broken") is None

    monkeypatch.undo()
    retried = post(shop, path, {"type": "ACCEPT"}, "broken")
    assert (retried.status_code, len(retried.data["responses"])) == (200, 1)


# The request the fingerprint covers (decisions §11): method, path, query string, Content-Type and body.
CSV_FILE = b"Item ID;Item name;Category name\ncola;Cola;Soft drinks\n"


def upload(api, query="", content_type="text/csv; charset=utf-8", key="u-1"):
    headers = {"Content-Type": content_type, "Idempotency-Key": key}
    return api.request("POST", f"/imports/products{query}", raw=CSV_FILE, headers=headers)


def test_a_dry_run_and_a_real_import_under_one_key_are_different_requests(api):
    dry = upload(api, "?dry_run=true")
    assert (dry.status_code, dry.data["dry_run"]) == (202, True)
    real = upload(api, "?dry_run=false")
    assert (real.status_code, real.data["type"]) == (400, "conflict")
    assert "Idempotent-Replayed" not in real.headers
    assert upload(api, "", key="u-2").data["dry_run"] is False  # without a query: a real import under a new key
    assert_problem(upload(api, "?dry_run=true&dry_run=false"), 400, "conflict")  # another set of pairs


def test_the_same_query_in_another_order_is_the_same_request(api):
    first = upload(api, "?dry_run=true&note=a")
    again = upload(api, "?note=a&dry_run=true")
    assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (202, "true")
    assert again.data == first.data
    assert len(api.get("/imports/products").data["imports"]) == 1


def test_another_charset_under_one_key_is_another_request(api):
    assert upload(api, content_type="text/csv; charset=utf-8").status_code == 202
    other = upload(api, content_type="text/csv; charset=latin1")
    assert (other.status_code, other.data["type"]) == (400, "conflict")
    assert_problem(upload(api, content_type="text/csv"), 400, "conflict")  # no charset is not utf-8 either


def test_the_media_type_and_charset_are_compared_without_regard_to_case(api):
    first = upload(api, content_type="text/csv; charset=utf-8")
    again = upload(api, content_type='TEXT/CSV;Charset="UTF-8"')
    assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (202, "true")
    assert again.data["id"] == first.data["id"]


def test_another_content_type_with_the_same_body_is_refused(shop):
    order(shop, "k-1")
    raw = json.dumps(ORDER).encode()
    headers = {"Content-Type": "application/json; charset=utf-8", "Idempotency-Key": "k-1"}
    response = shop.request("POST", "/customer/deliveries", raw=raw, headers=headers, token=CUSTOMER_TOKEN)
    assert (response.status_code, response.data["type"]) == (400, "conflict")
    assert len(shop.get("/deliveries").data["deliveries"]) == 1


def upload_form(api, boundary, file=CSV_FILE, part_type="text/csv; charset=utf-8", key="f-1"):
    """The file as the part `file` of a form; clients pick a new boundary on every request, retries included."""
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="c.csv"\r\n'
        f"Content-Type: {part_type}\r\n\r\n".encode()
        + file
        + f"\r\n--{boundary}--\r\n".encode()
    )
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}", "Idempotency-Key": key}
    return api.request("POST", "/imports/products", raw=body, headers=headers)


def test_a_retried_form_upload_with_a_new_boundary_is_the_same_request(api):
    first = upload_form(api, "b-one")
    again = upload_form(api, "b-two-other")
    assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (202, "true")
    assert again.data["id"] == first.data["id"]
    assert len(api.get("/imports/products").data["imports"]) == 1


def test_a_form_with_another_file_or_charset_under_one_key_is_refused(api):
    assert upload_form(api, "b-one").status_code == 202
    other_file = upload_form(api, "b-one", file=CSV_FILE + b"fanta;Fanta;Soft drinks\n")
    assert (other_file.status_code, other_file.data["type"]) == (400, "conflict")
    other_charset = upload_form(api, "b-one", part_type="text/csv; charset=latin1")
    assert (other_charset.status_code, other_charset.data["type"]) == (400, "conflict")
    as_body = upload(api, key="f-1")  # the same file as a text/csv body is another request as sent
    assert (as_body.status_code, as_body.data["type"]) == (400, "conflict")
