"""Claims (decisions §18): POST /customer/deliveries/:id/claims on a DELIVERED delivery within the account's claim
window, each line once and no more than what is left of it, evidence links, at most ten; withdrawal; the integration
state PENDING; no balance moved; versions (ETag, If-Match) and Idempotency-Key."""

import datetime as dt

import pytest

from chalicelib.domain.delivery import Delivery
from tests.conftest import OTHER_TOKEN, SUPPLIER_TOKEN, clock_at, problem_paths

from .claim_support import PHOTO, accepted, answer, claim, claimed, line, received, withdraw
from .deliveries_helpers import (  # noqa: F401
    CUSTOMER_TOKEN,
    NOW,
    OTHER_CUSTOMER_TOKEN,
    USER,
    assert_shape,
    order,
    place,
    respond,
    shop,
)
from .note_support import CRATE, bottled, note


def test_a_claim_on_a_received_delivery_is_claim_2_after_the_receipt_s(shop):
    delivery = received(shop, body={"items": [line("beer", 2)]})
    response = claim(shop, delivery["id"], line("water", 1, "SHORT"), line("beer", 1, "EXPIRED"), message="late")
    assert response.status_code == 200, response.data
    assert_shape(Delivery, response)
    assert [c["number"] for c in response.data["claims"]] == [1, 2]
    assert response.data["claims"][1] == {
        "number": 2,
        "status": "OPEN",
        "opened_at": "2026-05-04T09:30:00.000Z",
        "message": "late",
        "items": [{"id": "water", "issue": "SHORT", "count": 1}, {"id": "beer", "issue": "EXPIRED", "count": 1}],
    }
    assert shop.get(f"/customer/deliveries/{delivery['id']}", token=CUSTOMER_TOKEN).data == response.data
    listed = shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).data["deliveries"][0]
    assert listed["id"] == delivery["id"] and "claims" not in listed
    assert "claims" not in shop.get("/deliveries").data["deliveries"][0]


@pytest.mark.parametrize("status", ["REQUESTED", "ACCEPTED", "REJECTED", "CANCELLED"])
def test_only_a_delivered_delivery_takes_claims(shop, status):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    if status in ("ACCEPTED", "REJECTED"):
        respond(shop, delivery["id"], {"type": status[:-2] if status == "ACCEPTED" else "REJECT"})
    if status == "CANCELLED":
        shop.post(f"/customer/deliveries/{delivery['id']}/cancel", {}, token=CUSTOMER_TOKEN)
    assert shop.get(f"/deliveries/{delivery['id']}").data["status"] == status
    response = claim(shop, delivery["id"], line("beer", 1))
    assert (response.status_code, response.data["type"]) == (400, "invalid-transition")
    assert f"a {status} delivery takes no claims" in response.data["detail"]
    wrong_too = claim(shop, delivery["id"], line("beer", 1, "LOST"))  # the transition is named first (§8, §18)
    assert (wrong_too.status_code, wrong_too.data["type"]) == (400, "invalid-transition")


def test_a_delivered_return_takes_no_claims(shop):
    (returned,) = order(shop, [{"id": "beer", "count": 2}], type="RETURN").data["deliveries"]
    assert note(shop, returned["id"]).status_code == 200
    response = claim(shop, returned["id"], line("beer", 1))
    assert (response.status_code, response.data["type"]) == (400, "invalid-transition")


def test_a_note_delivered_delivery_takes_claims_on_what_the_note_says_and_its_substitutes(shop):
    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 3, "bundle": CRATE}])
    noted = note(
        shop,
        delivery["id"],
        {
            "items": [{"id": "lager", "count": 2, "reason": "SUBSTITUTED"}],
            "substitutions": [{"for": "lager", "id": "helles", "count": 1, "bundle": CRATE}],
        },
    )
    assert noted.status_code == 200, noted.data
    response = claim(shop, delivery["id"], line("lager", 3))
    assert (response.status_code, problem_paths(response)) == (400, ["items[0].count"])
    response = claim(shop, delivery["id"], line("lager", 2), line("helles", 1, "WRONG_ITEM"))
    assert response.status_code == 200, response.data
    response = claim(shop, delivery["id"], line("helles", 1))
    assert (response.status_code, problem_paths(response)) == (400, ["items[0].count"])


# --- the claim window ---


def test_the_window_closes_claim_window_hours_after_the_receive(shop, monkeypatch):
    assert shop.patch("/account/settings/deliveries", {"claim_window_hours": 2}).status_code == 200
    clock = clock_at(monkeypatch, NOW)
    delivery = received(shop)
    clock.advance(2 * 3600 - 1)
    assert claim(shop, delivery["id"], line("beer", 1)).status_code == 200
    clock.advance(1)
    response = claim(shop, delivery["id"], line("beer", 1))
    assert response.status_code == 400
    assert response.data["type"] == "invalid-transition"
    assert response.data["closed_at"] == "2026-05-04T11:30:00.000+00:00"
    assert "the claim window closed at 2026-05-04T11:30:00.000+00:00" in response.data["detail"]
    assert list(response.data) == ["type", "title", "status", "detail", "instance", "errors", "closed_at"]
    assert len(shop.get(f"/deliveries/{delivery['id']}").data["claims"]) == 1


def test_the_window_counts_from_the_note_s_delivered_at_in_the_account_s_offset(shop, monkeypatch):
    assert shop.patch("/account/settings/deliveries", {"timezone": "Europe/Helsinki"}).status_code == 200
    clock = clock_at(monkeypatch, NOW)
    delivery = place(shop, [{"id": "beer", "count": 2}])
    clock.advance(3600)
    assert note(shop, delivery["id"], {"delivered_at": "2026-05-04T12:40:00+03:00"}).status_code == 200
    clock.advance(72 * 3600 - 50 * 60 - 1)  # now 10:30Z: to 72 hours after 09:40Z (delivered_at), less a second
    assert claim(shop, delivery["id"], line("beer", 1)).status_code == 200
    clock.advance(1)
    response = claim(shop, delivery["id"], line("beer", 1))
    assert (response.status_code, response.data["closed_at"]) == (400, "2026-05-07T12:40:00.000+03:00")


def test_a_window_of_the_account_changed_later_applies_to_claims_from_then_on(shop, monkeypatch):
    clock = clock_at(monkeypatch, NOW)
    delivery = received(shop)
    clock.advance(100 * 3600)
    assert claim(shop, delivery["id"], line("beer", 1)).data["closed_at"] == "2026-05-07T09:30:00.000+00:00"
    assert shop.patch("/account/settings/deliveries", {"claim_window_hours": 2160}).status_code == 200
    assert claim(shop, delivery["id"], line("beer", 1)).status_code == 200


# --- what a claim may say ---

TEXT = "x" * 2000
LINK = "https://photos.example/" + "a" * (2000 - len("https://photos.example/"))


@pytest.mark.parametrize(
    "items, fields, paths",
    [
        ([], {}, ["items"]),
        ([line("beer", 1)] * 101, {}, ["items"]),
        ([line("beer", 1, "LOST")], {}, ["items[0].issue"]),
        ([line("beer", 0)], {}, ["items[0].count"]),
        ([line("beer", -1)], {}, ["items[0].count"]),
        ([line("beer", "1")], {}, ["items[0].count"]),
        ([line("beer", 1.5)], {}, ["items[0].count"]),
        ([line("beer", 11)], {}, ["items[0].count"]),
        ([line("nope", 1)], {}, ["items[0].id"]),
        ([line("beer", 1), line("water", 1), line("beer", 1)], {}, ["items[2].id"]),
        ([line("beer", 1, evidence=["http://photos.example/a.jpg"])], {}, ["items[0].evidence[0]"]),
        ([line("beer", 1, evidence=["photos.example/a.jpg"])], {}, ["items[0].evidence[0]"]),
        ([line("beer", 1, evidence=[LINK + "a"])], {}, ["items[0].evidence[0]"]),
        ([line("beer", 1, evidence=[PHOTO] * 6)], {}, ["items[0].evidence"]),
        ([line("beer", 1, message=TEXT + "x")], {}, ["items[0].message"]),
        ([line("beer", 1)], {"message": TEXT + "x"}, ["message"]),
        ([line("beer", 1)], {"user": {"name": "A", "email": "not-an-address"}}, ["user.email"]),
        ([line("beer", 1, colour="red")], {"reason": "x"}, ["items[0].colour", "reason"]),
        # Every problem at once (decisions §3): the body's own, then what its well-formed items get wrong.
        (
            [line("beer", 11), line("nope", 1), line("water", 1, evidence=["http://photos.example/a.jpg"])],
            {"message": TEXT + "x"},
            ["items[2].evidence[0]", "message", "items[0].count", "items[1].id"],
        ),
        ([line("beer", 1.5), line("beer", 1, "LOST")], {}, ["items[1].issue", "items[0].count"]),
    ],
)
def test_every_wrong_field_is_named(shop, items, fields, paths):
    delivery = received(shop)
    response = claim(shop, delivery["id"], *items, **fields)
    assert (response.status_code, response.data["type"], problem_paths(response)) == (400, "validation-error", paths)
    assert "claims" not in shop.get(f"/deliveries/{delivery['id']}").data


def test_every_field_at_its_bound_is_taken(shop):
    delivery = received(shop, items=[{"id": "beer", "count": 10}, {"id": "cheese", "count": 2}])
    response = claim(
        shop,
        delivery["id"],
        line("beer", 10, message=TEXT[:1000], evidence=[LINK] * 5),
        line("cheese", 1.25, "QUALITY"),
        message=TEXT[:500],
        user=USER,
    )
    assert response.status_code == 200, response.data
    items = response.data["claims"][0]["items"]
    assert items[0]["evidence"] == [LINK] * 5 and items[1]["count"] == 1.25


def test_claims_hold_what_they_claim_until_withdrawn_or_declined(shop):
    delivery = received(shop)
    claimed(shop, delivery["id"], line("beer", 6))
    claimed(shop, delivery["id"], line("beer", 3))
    response = claim(shop, delivery["id"], line("beer", 2))
    assert (response.status_code, problem_paths(response)) == (400, ["items[0].count"])
    assert response.data["errors"][0]["message"] == (
        "must be at most 1: 10 delivered, 9 claimed by claims that are not WITHDRAWN or DECLINED"
    )
    assert withdraw(shop, delivery["id"], 2).status_code == 200
    answered = answer(shop, delivery["id"], 1, accepted("beer", 0, "NONE"), message="no breakage on our side")
    assert answered.data["claims"][0]["status"] == "DECLINED"
    assert claimed(shop, delivery["id"], line("beer", 10))["claims"][2]["items"][0]["count"] == 10


def test_a_delivery_takes_ten_claims_and_the_eleventh_is_refused_naming_items(shop):
    delivery = received(shop)
    for _ in range(10):
        claimed(shop, delivery["id"], line("beer", 1))
    response = claim(shop, delivery["id"], line("water", 1))
    assert (response.status_code, problem_paths(response)) == (400, ["items"])
    assert "at most 10 claims" in response.data["errors"][0]["message"]
    assert withdraw(shop, delivery["id"], 10).status_code == 200  # a withdrawn claim still counts
    assert claim(shop, delivery["id"], line("water", 1)).status_code == 400


def test_a_claim_is_the_customer_s_own(shop):
    delivery = received(shop)
    for token in (OTHER_CUSTOMER_TOKEN,):
        response = claim(shop, delivery["id"], line("beer", 1), token=token)
        assert (response.status_code, response.data["type"]) == (404, "not-found")
    assert claim(shop, delivery["id"], line("beer", 1), token=SUPPLIER_TOKEN).status_code == 403
    assert claim(shop, 999, line("beer", 1)).status_code == 404
    assert claim(shop, "abc", line("beer", 1)).status_code == 404
    assert claim(shop, delivery["id"], line("beer", 1), token=OTHER_TOKEN).status_code == 403


@pytest.mark.parametrize("number", ["2", "0", "01", "11", "abc", "99", "100"])
def test_an_unknown_claim_number_is_not_found(shop, number):
    delivery = received(shop, body={"items": [line("beer", 1)]})
    assert withdraw(shop, delivery["id"], number).status_code == 404
    response = answer(shop, delivery["id"], number, accepted("beer", 1))
    assert (response.status_code, response.data["type"]) == (404, "not-found")
    assert withdraw(shop, delivery["id"], 1, token=OTHER_CUSTOMER_TOKEN).status_code == 404


# --- withdrawal ---


def test_an_open_claim_is_withdrawn_once(shop, monkeypatch):
    clock = clock_at(monkeypatch, NOW)
    delivery = received(shop, body={"items": [line("beer", 1)]})
    clock.advance(60)
    response = withdraw(shop, delivery["id"], 1)
    assert response.status_code == 200, response.data
    assert response.data["claims"][0]["status"] == "WITHDRAWN"
    assert response.data["claims"][0]["withdrawn_at"] == "2026-05-04T09:31:00.000Z"
    assert list(response.data["claims"][0]) == ["number", "status", "opened_at", "items", "withdrawn_at"]
    again = withdraw(shop, delivery["id"], 1)
    assert (again.status_code, again.data["type"]) == (400, "invalid-transition")
    assert withdraw(shop, delivery["id"], 1, body={"reason": "x"}).status_code == 400  # it takes no fields
    assert withdraw(shop, delivery["id"], 1, token=SUPPLIER_TOKEN).status_code == 403


def test_an_answered_claim_cannot_be_withdrawn(shop):
    delivery = received(shop, body={"items": [line("beer", 1)]})
    assert answer(shop, delivery["id"], 1, accepted("beer", 1)).status_code == 200
    response = withdraw(shop, delivery["id"], 1)
    assert (response.status_code, response.data["type"]) == (400, "invalid-transition")
    assert "claim 1 is ACCEPTED" in response.data["detail"]


# --- what else a claim changes, and what it does not ---


def test_opening_and_withdrawing_make_the_integration_state_pending_an_answer_does_not(shop, monkeypatch):
    clock = clock_at(monkeypatch, NOW)
    delivery = received(shop)
    path = f"/deliveries/{delivery['id']}/integration"

    def acknowledged():
        clock.advance(60)
        assert shop.put(path, {"status": "IMPORTED", "reference": "ERP-1"}).status_code == 200

    def state():
        return shop.get(f"/deliveries/{delivery['id']}").data["integration"]

    acknowledged()
    clock.advance(60)
    claimed(shop, delivery["id"], line("beer", 1))
    assert state() == {"status": "PENDING", "reference": "ERP-1", "updated": "2026-05-04T09:32:00.000Z"}
    assert shop.get("/account/integration").data["oldest_pending"]["id"] == delivery["id"]
    acknowledged()
    assert answer(shop, delivery["id"], 1, accepted("beer", 1)).status_code == 200
    assert state()["status"] == "IMPORTED"
    claimed(shop, delivery["id"], line("beer", 1))
    acknowledged()
    clock.advance(60)
    assert withdraw(shop, delivery["id"], 2).status_code == 200
    assert state() == {"status": "PENDING", "reference": "ERP-1", "updated": "2026-05-04T09:35:00.000Z"}


def test_a_claim_moves_no_deposit_balance(shop):
    bottled(shop)
    delivery = received(shop, items=[{"id": "lager", "count": 2, "bundle": CRATE}])
    balances = shop.get("/customers/c1/deposits").data
    movements = shop.get("/customers/c1/deposits/movements").data
    claimed(shop, delivery["id"], line("lager", 2, "REFUSED"))
    assert answer(shop, delivery["id"], 1, accepted("lager", 2)).status_code == 200
    assert shop.get("/customers/c1/deposits").data == balances
    assert shop.get("/customers/c1/deposits/movements").data == movements
    assert shop.get(f"/deliveries/{delivery['id']}").data["deposits"] == delivery["deposits"]


def test_claims_and_their_answers_change_the_delivery_s_etag_on_both_reads(shop):
    delivery = received(shop)
    path = f"/deliveries/{delivery['id']}"

    def etags() -> tuple[str, str]:
        supplier, customer = shop.get(path), shop.get(f"/customer{path}", token=CUSTOMER_TOKEN)
        assert supplier.headers["ETag"] == customer.headers["ETag"]
        return supplier.headers["ETag"], customer.headers["ETag"]

    before, _ = etags()
    claimed(shop, delivery["id"], line("beer", 1))
    opened, _ = etags()
    assert opened != before
    stale = {"If-Match": before}
    response = shop.post(f"/customer{path}/claims", {"items": [line("beer", 1)]}, token=CUSTOMER_TOKEN, headers=stale)
    assert (response.status_code, response.data["type"]) == (412, "precondition-failed")
    current = {"If-Match": opened}
    assert shop.post(f"/customer{path}/claims", {"items": [line("beer", 1)]}, token=CUSTOMER_TOKEN, headers=current)
    second, _ = etags()
    assert answer(shop, delivery["id"], 1, accepted("beer", 1), headers={"If-Match": opened}).status_code == 412
    assert withdraw(shop, delivery["id"], 2, headers={"If-Match": opened}).status_code == 412
    assert answer(shop, delivery["id"], 1, accepted("beer", 1), headers={"If-Match": second}).status_code == 200
    answered, _ = etags()
    assert withdraw(shop, delivery["id"], 2, headers={"If-Match": answered}).status_code == 200
    assert etags()[0] not in (before, opened, second, answered)
    assert [c["status"] for c in shop.get(path).data["claims"]] == ["ACCEPTED", "WITHDRAWN"]


def test_a_claim_with_an_idempotency_key_is_made_once_and_replayed_byte_for_byte(shop):
    delivery = received(shop)
    headers = {"Idempotency-Key": "claim-1"}
    path = f"/customer/deliveries/{delivery['id']}/claims"
    body = {"items": [line("beer", 1)]}
    first = shop.post(path, body, token=CUSTOMER_TOKEN, headers=headers)
    claimed(shop, delivery["id"], line("water", 1))
    again = shop.post(path, body, token=CUSTOMER_TOKEN, headers=headers)
    assert (again.status_code, again.body) == (200, first.body)
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert [c["number"] for c in shop.get(f"/deliveries/{delivery['id']}").data["claims"]] == [1, 2]
    when = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
    assert first.data["claims"][0]["opened_at"] == when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
