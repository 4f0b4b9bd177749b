"""POST /customer/deliveries/:id/amendments (decisions §16): every rule with a failing and a passing case."""

import datetime as dt

import pytest

from chalicelib.domain import limits
from chalicelib.domain.delivery import Delivery
from tests.conftest import clock_at, problem_paths
from tests.problems import assert_problem

from .deliveries_helpers import (  # noqa: F401
    CUSTOMER_TOKEN,
    NOW,
    OTHER_CUSTOMER_TOKEN,
    USER,
    assert_shape,
    place,
    put_customer_pricing,
    put_product,
    put_settings,
    respond,
    shop,
)

STAMP = "2026-05-04T09:30:00.000Z"
WEDNESDAY = {"date": "2026-05-06"}
CRATES = {"id": "beer", "count": 2, "bundle": {"id": "crate"}}
CHEESE = {"id": "cheese", "count": 1.5}
CRATE = {"id": "crate", "type": "CT", "size": 24}


def amend(api, delivery_id, body, token=CUSTOMER_TOKEN, **kw):
    return api.post(f"/customer/deliveries/{delivery_id}/amendments", body={"user": USER, **body}, token=token, **kw)


def customer_read(api, delivery_id):
    return api.get(f"/customer/deliveries/{delivery_id}", token=CUSTOMER_TOKEN)


def test_an_amendment_changes_the_items_and_records_each_line(shop):
    delivery = place(shop, [CRATES, CHEESE, {"id": "water", "count": 6}], scheduled=WEDNESDAY)
    response = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}, CHEESE]})
    assert response.status_code == 200, response.data
    assert_shape(Delivery, response)
    items = response.data["request"]["items"]
    assert [(i["id"], i["count"]) for i in items] == [("beer-crate", 3), ("cheese", 1.5)]
    assert items[0]["vessel_count"] == 72 and items[1] == delivery["request"]["items"][1]  # kept as it was
    assert response.data["amendments"] == [
        {
            "sequence": 1,
            "timestamp": STAMP,
            "user": USER,
            "items": [
                {"id": "beer-crate", "bundle": CRATE, "action": "CHANGED", "count_before": 2, "count": 3},
                {"id": "water", "bundle": None, "action": "REMOVED", "count_before": 6, "count": 0},
            ],
        }
    ]
    assert customer_read(shop, delivery["id"]).data == response.data
    supplier = shop.get(f"/deliveries/{delivery['id']}").data
    assert list(supplier)[-2:] == ["amendments", "integration"]  # after the interface's fields (no deposits here)
    assert "amendments" not in shop.get("/deliveries").data["deliveries"][0]
    assert "amendments" not in shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).data["deliveries"][0]


def test_added_lines_come_first_in_the_new_order_and_removed_lines_last(shop):
    delivery = place(shop, [CRATES, CHEESE])
    response = amend(shop, delivery["id"], {"items": [{"id": "water", "count": 2}, CHEESE]})
    assert response.status_code == 200, response.data
    assert response.data["amendments"][0]["items"] == [
        {"id": "water", "bundle": None, "action": "ADDED", "count_before": 0, "count": 2},
        {"id": "beer-crate", "bundle": CRATE, "action": "REMOVED", "count_before": 2, "count": 0},
    ]
    assert [i["id"] for i in response.data["request"]["items"]] == ["water", "cheese"]


def test_a_message_or_bundle_change_is_a_changed_line(shop):
    delivery = place(shop, [CRATES])
    response = amend(
        shop, delivery["id"], {"items": [{"id": "beer", "count": 2, "bundle": {"id": "crate"}, "message": "cold"}]}
    )
    assert response.data["amendments"][0]["items"] == [
        {"id": "beer-crate", "bundle": CRATE, "action": "CHANGED", "count_before": 2, "count": 2}
    ]
    response = amend(shop, delivery["id"], {"items": [{"id": "beer", "count": 2, "message": "cold"}]})
    assert response.data["amendments"][1]["items"] == [
        {"id": "beer", "bundle": None, "action": "CHANGED", "count_before": 2, "count": 2}
    ]
    assert response.data["request"]["items"][0]["vessel_count"] == 2


def test_nothing_changed_answers_200_and_records_nothing(shop):
    delivery = place(shop, [CRATES, CHEESE], scheduled=WEDNESDAY, message="hi")
    etag = customer_read(shop, delivery["id"]).headers["ETag"]
    same = {
        "items": [{"id": "beer", "count": 2, "bundle": {"type": "CT", "size": 24}}, CHEESE],
        "scheduled": WEDNESDAY,
        "message": "hi",
    }
    for body in (same, {"items": [CRATES, CHEESE]}):
        response = amend(shop, delivery["id"], body)
        assert response.status_code == 200
        assert "amendments" not in response.data
        assert response.data == customer_read(shop, delivery["id"]).data
    assert customer_read(shop, delivery["id"]).headers["ETag"] == etag
    assert [c["type"] for c in shop.get("/changes").data["changes"]][-1] == "delivery.requested"


def test_the_date_message_and_empties_are_replaced_only_when_given(shop):
    delivery = place(shop, [CRATES], scheduled=WEDNESDAY, message="hi")
    response = amend(shop, delivery["id"], {"items": [CRATES], "scheduled": {"date": "2026-05-07", "time": "10:00"}})
    assert response.data["request"]["scheduled"] == {"date": "2026-05-07", "time": "10:00"}
    assert response.data["request"]["message"] == "hi"
    assert response.data["amendments"][0]["scheduled"] == {
        "from": WEDNESDAY,
        "to": {"date": "2026-05-07", "time": "10:00"},
    }
    assert response.data["amendments"][0]["items"] == []
    response = amend(shop, delivery["id"], {"items": [CRATES], "scheduled": None, "message": "asap please"})
    assert response.data["request"]["scheduled"] is None and response.data["request"]["message"] == "asap please"
    record = response.data["amendments"][1]
    assert record["message"] == "asap please" and record["scheduled"] == {
        "from": {"date": "2026-05-07", "time": "10:00"},
        "to": None,
    }


def test_only_the_customers_own_deliveries(shop):
    delivery = place(shop, [CRATES])
    assert amend(shop, delivery["id"], {"items": [CRATES]}, token=OTHER_CUSTOMER_TOKEN).status_code == 404
    assert amend(shop, 999, {"items": [CRATES]}).status_code == 404
    assert (
        shop.post(
            f"/customer/deliveries/{delivery['id']}/amendments", body={"items": [CRATES], "user": USER}
        ).status_code
        == 403
    )


@pytest.mark.parametrize("response_type, action", [("REJECT", None), (None, "cancel"), (None, "receive")])
def test_final_deliveries_cannot_be_amended(shop, response_type, action):
    delivery = place(shop, [CRATES])
    if response_type:
        respond(shop, delivery["id"], {"type": response_type})
    else:
        shop.post(f"/customer/deliveries/{delivery['id']}/{action}", token=CUSTOMER_TOKEN)
    response = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 5}]})
    assert_problem(response, 400, "invalid-transition")


def test_an_accepted_delivery_goes_back_to_requested_and_keeps_its_responses(shop):
    delivery = place(shop, [CRATES], scheduled=WEDNESDAY)
    accepted = respond(
        shop, delivery["id"], {"type": "ACCEPT", "items": [{"id": "beer-crate", "count": 1, "reason": "MIN_ORDER"}]}
    )
    assert accepted.data["status"] == "ACCEPTED"
    response = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 4}]})
    assert response.data["status"] == "REQUESTED"
    assert response.data["responses"] == accepted.data["responses"]
    assert_problem(respond(shop, delivery["id"], {"type": "UPDATE"}), 400, "invalid-transition")
    assert respond(shop, delivery["id"], {"type": "ACCEPT"}).data["status"] == "ACCEPTED"


def test_as_soon_as_possible_only_while_requested(shop):
    asap = place(shop, [CRATES])
    assert respond(shop, asap["id"], {"type": "ACCEPT"}).status_code == 200
    response = amend(shop, asap["id"], {"items": [{**CRATES, "count": 4}], "scheduled": WEDNESDAY})
    assert_problem(response, 400, "invalid-transition")
    dated = place(shop, [CRATES], scheduled=WEDNESDAY)
    assert respond(shop, dated["id"], {"type": "ACCEPT"}).status_code == 200
    response = amend(shop, dated["id"], {"items": [CRATES], "scheduled": None})
    assert_problem(response, 400, "invalid-transition")
    requested = place(shop, [CRATES])
    assert amend(shop, requested["id"], {"items": [{**CRATES, "count": 4}]}).status_code == 200


def _cutoff_shop(api):
    """Wednesdays only, ordered by noon the day before, in Helsinki (UTC+3 in May)."""
    put_settings(timezone="Europe/Helsinki", delivery_days={"3": {"lead_days": 1, "cutoff": "12:00"}})


def test_the_cutoff_at_its_edge_in_the_accounts_time_zone(shop, monkeypatch):
    _cutoff_shop(shop)
    delivery = place(shop, [CRATES], scheduled=WEDNESDAY)
    clock_at(monkeypatch, dt.datetime(2026, 5, 5, 9, 0, 59, tzinfo=dt.timezone.utc))  # 12:00:59 in Helsinki
    assert amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]}).status_code == 200
    clock_at(monkeypatch, dt.datetime(2026, 5, 5, 9, 1, tzinfo=dt.timezone.utc))  # 12:01: past the cutoff
    response = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 4}]})
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == ["scheduled"]
    assert customer_read(shop, delivery["id"]).data["request"]["items"][0]["count"] == 3
    moved = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 4}], "scheduled": {"date": "2026-05-13"}})
    assert moved.status_code == 200 and moved.data["request"]["scheduled"] == {"date": "2026-05-13"}


def test_a_new_date_that_is_not_deliverable_names_scheduled(shop):
    _cutoff_shop(shop)
    delivery = place(shop, [CRATES], scheduled=WEDNESDAY)
    response = amend(shop, delivery["id"], {"items": [CRATES], "scheduled": {"date": "2026-05-07"}})  # a Thursday
    assert response.status_code == 400 and problem_paths(response) == ["scheduled"]


def test_added_and_changed_lines_are_checked_as_an_orders(shop):
    delivery = place(shop, [CRATES])
    response = amend(
        shop,
        delivery["id"],
        {
            "items": [
                {"id": "beer", "count": 2.5},
                {"id": "nope", "count": 1},
                {"id": "old", "count": 1},
                {"id": "cheese", "count": 0.1},
                {"id": "water", "count": 1, "bundle": {"id": "nope"}},
            ]
        },
    )
    assert response.status_code == 400
    assert problem_paths(response) == [
        "items[0].count",
        "items[1].id",
        "items[2].id",
        "items[3].count",
        "items[4].bundle",
    ]
    assert customer_read(shop, delivery["id"]).data["request"]["items"] == delivery["request"]["items"]


def test_a_product_given_twice_names_the_later_line(shop):
    delivery = place(shop, [CRATES])
    response = amend(shop, delivery["id"], {"items": [CRATES, {"id": "water", "count": 1}, {"id": "beer", "count": 1}]})
    assert response.status_code == 400 and problem_paths(response) == ["items[2]"]


def test_comments_must_be_allowed(shop):
    put_settings()
    delivery = place(shop, [CRATES])
    response = amend(shop, delivery["id"], {"items": [{**CRATES, "message": "x"}], "message": "y"})
    assert response.status_code == 400 and problem_paths(response) == ["message", "items[0].message"]


def test_kept_lines_are_not_checked_again_and_keep_their_price(shop):
    delivery = place(shop, [CRATES, {"id": "water", "count": 3}])
    assert delivery["request"]["items"][0]["price"] == 150
    put_product(shop, "beer", {**_beer(), "price": 170})
    put_product(shop, "water", {**_water(), "status": "INACTIVE"})  # kept as it is: not checked again
    response = amend(
        shop, delivery["id"], {"items": [CRATES, {"id": "water", "count": 3}, {"id": "cheese", "count": 1}]}
    )
    assert response.status_code == 200, response.data
    assert [i.get("price") for i in response.data["request"]["items"]] == [150, None, 1200]
    changed = amend(
        shop,
        delivery["id"],
        {"items": [{**CRATES, "count": 3}, {"id": "water", "count": 3}, {"id": "cheese", "count": 1}]},
    )
    assert changed.data["request"]["items"][0]["price"] == 170  # a changed line takes the price that applies now
    refused = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}, {"id": "water", "count": 4}]})
    assert refused.status_code == 400 and problem_paths(refused) == ["items[1].id"]


def test_customer_pricing_applies_to_changed_lines(shop):
    delivery = place(shop, [CRATES])
    put_customer_pricing("beer", "c1", price=120)
    response = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 5}]})
    assert response.data["request"]["items"][0]["price"] == 120


def test_out_of_stock_lines_only_as_soon_as_possible(shop):
    dated = place(shop, [CRATES], scheduled=WEDNESDAY)
    response = amend(shop, dated["id"], {"items": [CRATES, {"id": "wine", "count": 1}]})
    assert response.status_code == 400 and problem_paths(response) == ["items[1].id"]
    asap = place(shop, [CRATES])
    response = amend(shop, asap["id"], {"items": [CRATES, {"id": "wine", "count": 1}]})
    assert response.status_code == 200 and response.data["request"]["items"][1]["id"] == "wine"


def test_at_least_one_item(shop):
    delivery = place(shop, [CRATES])
    response = amend(shop, delivery["id"], {"items": []})
    assert response.status_code == 400 and problem_paths(response) == ["items"]
    missing = shop.post(f"/customer/deliveries/{delivery['id']}/amendments", body={"user": USER}, token=CUSTOMER_TOKEN)
    assert missing.status_code == 400 and problem_paths(missing) == ["items"]


def test_at_most_twenty_amendments(shop):
    delivery = place(shop, [CRATES])
    for n in range(limits.AMENDMENTS):
        assert amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3 + n}]}).status_code == 200
    response = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 100}]})
    assert response.status_code == 400 and problem_paths(response) == ["items"]
    read = customer_read(shop, delivery["id"]).data
    assert [a["sequence"] for a in read["amendments"]] == list(range(1, 21))
    assert read["request"]["items"][0]["count"] == 22
    assert amend(shop, delivery["id"], {"items": [{**CRATES, "count": 22}]}).status_code == 200  # a no-op still answers
    assert shop.post(f"/customer/deliveries/{delivery['id']}/cancel", token=CUSTOMER_TOKEN).status_code == 200


def test_the_integration_state_becomes_pending_and_the_feed_says_amended(shop):
    delivery = place(shop, [CRATES])
    shop.put(f"/deliveries/{delivery['id']}/integration", {"status": "IMPORTED", "reference": "ERP-1"})
    response = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]})
    assert response.status_code == 200 and "integration" not in response.data
    integration = shop.get(f"/deliveries/{delivery['id']}").data["integration"]
    assert integration["status"] == "PENDING" and integration["reference"] == "ERP-1"
    changes = shop.get("/changes").data["changes"]
    assert [(c["type"], c.get("status")) for c in changes][-1] == ("delivery.amended", "REQUESTED")
    assert shop.get("/account/integration").data["pending"] == 1


def test_if_match_on_amendments(shop):
    delivery = place(shop, [CRATES], scheduled=WEDNESDAY)
    etag = customer_read(shop, delivery["id"]).headers["ETag"]
    assert respond(shop, delivery["id"], {"type": "ACCEPT"}).status_code == 200
    stale = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]}, headers={"If-Match": etag})
    assert_problem(stale, 412, "precondition-failed")
    current = customer_read(shop, delivery["id"]).headers["ETag"]
    assert (
        amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]}, headers={"If-Match": current}).status_code
        == 200
    )


def test_the_order_file_shows_the_items_as_they_stand(shop):
    delivery = place(shop, [CRATES, CHEESE])
    amend(shop, delivery["id"], {"items": [{"id": "water", "count": 7}]})
    headers = {"Authorization": f"token {shop.token}", "Accept": "text/csv"}
    text = shop.client.http.get(f"/deliveries/{delivery['id']}/csv", headers=headers).body.decode("utf-8-sig")
    assert ",water,Water," in text and "beer-crate" not in text and "Cheddar" not in text


def test_idempotency_key_replays_the_amendment(shop):
    delivery = place(shop, [CRATES])
    headers = {"Idempotency-Key": "amend-1"}
    first = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]}, headers=headers)
    again = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]}, headers=headers)
    assert first.body == again.body and len(again.data["amendments"]) == 1


def _beer():
    from .deliveries_helpers import BEER

    return BEER


def _water():
    from .deliveries_helpers import WATER

    return WATER


def test_a_supplier_that_read_before_an_amendment_cannot_accept_it(shop):
    delivery = place(shop, [CRATES], scheduled=WEDNESDAY)
    read = shop.get(f"/deliveries/{delivery['id']}")
    assert amend(shop, delivery["id"], {"items": [{**CRATES, "count": 9}]}).status_code == 200
    stale = respond(shop, delivery["id"], {"type": "ACCEPT"}, headers={"If-Match": read.headers["ETag"]})
    assert stale.status_code == 412 and shop.get(f"/deliveries/{delivery['id']}").data["responses"] == []
    fresh = shop.get(f"/deliveries/{delivery['id']}")
    accepted = respond(shop, delivery["id"], {"type": "ACCEPT"}, headers={"If-Match": fresh.headers["ETag"]})
    assert accepted.status_code == 200 and accepted.data["request"]["items"][0]["count"] == 9


def test_amendment_records_are_bounded_in_bytes(shop):
    delivery = place(shop, [CRATES])
    widest = {"name": "\x01" * 256, "email": "\x01" * 120 + "@" + "\x01" * 120 + ".fi"}  # 6 bytes a character
    for n in range(limits.AMENDMENTS):
        body = {"items": [{**CRATES, "count": 3 + n}], "user": widest, "message": "\x01" * limits.MESSAGE_LENGTH}
        response = shop.post(f"/customer/deliveries/{delivery['id']}/amendments", body=body, token=CUSTOMER_TOKEN)
        if response.status_code == 400:
            break
    assert 0 < n < limits.AMENDMENTS and problem_paths(response) == ["items"]
    assert "the amendments of a delivery hold at most 60,000" in response.data["errors"][0]["message"]
    assert len(customer_read(shop, delivery["id"]).data["amendments"]) == n


def test_a_no_op_with_an_idempotency_key_replays_its_answer(shop):
    delivery = place(shop, [CRATES])
    headers = {"Idempotency-Key": "same-1"}
    first = amend(shop, delivery["id"], {"items": [CRATES]}, headers=headers)
    again = amend(shop, delivery["id"], {"items": [CRATES]}, headers=headers)
    assert first.status_code == again.status_code == 200 and first.body == again.body
    assert "amendments" not in again.data


def test_a_malformed_body_names_each_field(shop):
    delivery = place(shop, [CRATES])
    response = shop.post(
        f"/customer/deliveries/{delivery['id']}/amendments",
        body={"items": [{"id": "beer"}], "scheduled": {"date": "x"}, "colour": 1},
        token=CUSTOMER_TOKEN,
    )
    assert_problem(response, 400, "validation-error")
    assert set(problem_paths(response)) == {"items[0].count", "scheduled.date", "user", "colour"}


def test_two_products_shown_as_one_item_id_are_refused(shop):
    put_product(
        shop,
        "lager",
        {
            **_beer(),
            "name": "Lager",
            "bundles": [{"id": "crate", "id_override": "beer-crate", "type": "CT", "size": 24}],
        },
    )
    delivery = place(shop, [CRATES])
    response = amend(shop, delivery["id"], {"items": [CRATES, {"id": "lager", "count": 1, "bundle": {"id": "crate"}}]})
    assert response.status_code == 400 and problem_paths(response) == ["items[1].id"]
