"""The supplier's answer to a claim (decisions §18): POST /deliveries/:id/claims/:number/answer answers every claimed
line once with what it accepts and how it settles it; the credit's default; the status it derives; once only."""

import pytest

from chalicelib.domain.delivery import SupplierDelivery
from tests.conftest import problem_paths

from .claim_support import accepted, answer, claimed, line, received
from .deliveries_helpers import CUSTOMER_TOKEN, USER, assert_shape, place, respond, shop  # noqa: F401
from .note_support import CRATE, bottled, note

SAMI = {"name": "Sami Supplier", "email": "sami@supplier.example"}


def test_an_answer_settles_each_line_and_the_claim_is_partially_accepted(shop):
    delivery = received(shop, body={"items": [line("beer", 4), line("water", 2, "SHORT")]})
    response = answer(
        shop,
        delivery["id"],
        1,
        accepted("water", 2, "REPLACE", reason="on Thursday's truck"),
        accepted("beer", 3),
        message="one was fine",
        user=SAMI,
    )
    assert response.status_code == 200, response.data
    assert_shape(SupplierDelivery, response)
    (claim,) = response.data["claims"]
    assert claim == {
        "number": 1,
        "status": "PARTIALLY_ACCEPTED",
        "opened_at": "2026-05-04T09:30:00.000Z",
        "items": [
            {"id": "beer", "issue": "DAMAGED", "count": 4, "accepted": 3, "resolution": "CREDIT", "credit": 3 * 150},
            {
                "id": "water",
                "issue": "SHORT",
                "count": 2,
                "accepted": 2,
                "resolution": "REPLACE",
                "credit": 0,
                "reason": "on Thursday's truck",
            },
        ],
        "answer": {"timestamp": "2026-05-04T09:30:00.000Z", "user": SAMI, "message": "one was fine"},
    }
    assert list(response.data)[-1] == "integration"
    assert shop.get(f"/customer/deliveries/{delivery['id']}", token=CUSTOMER_TOKEN).data["claims"] == [claim]


def test_everything_accepted_is_accepted_and_nothing_accepted_is_declined_with_a_message(shop):
    delivery = received(shop, body={"items": [line("beer", 2)]})
    claimed(shop, delivery["id"], line("water", 1))
    done = answer(shop, delivery["id"], 1, accepted("beer", 2, "COLLECT"))
    assert done.data["claims"][0]["status"] == "ACCEPTED"
    assert done.data["claims"][0]["items"][0]["credit"] == 0
    refused = answer(shop, delivery["id"], 2, accepted("water", 0, "NONE"))
    assert (refused.status_code, problem_paths(refused)) == (400, ["message"])
    declined = answer(shop, delivery["id"], 2, accepted("water", 0, "NONE"), message="counted six at the door")
    assert declined.data["claims"][1]["status"] == "DECLINED"


def test_the_default_credit_is_the_accepted_count_in_vessels_at_the_price_as_delivered(shop):
    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 3, "bundle": CRATE}, {"id": "cheese", "count": 2}])
    respond(
        shop,
        delivery["id"],
        {
            "type": "ACCEPT",
            "items": [{"id": "lager", "count": 2, "price": 90}],
            "substitutions": [{"for": "lager", "id": "helles", "count": 1, "bundle": CRATE, "price": 100}],
        },
    )
    assert note(shop, delivery["id"]).status_code == 200
    claimed(shop, delivery["id"], line("lager", 2), line("helles", 1), line("cheese", 1.5, "QUALITY"))
    response = answer(shop, delivery["id"], 1, accepted("lager", 2), accepted("helles", 1), accepted("cheese", 0.75))
    assert response.status_code == 200, response.data
    credits = [(item["id"], item["credit"]) for item in response.data["claims"][0]["items"]]
    # Two crates of 20 at the response's 90; one crate of the substitute at its 100; 0.75 kg at 1,200 a kilo.
    assert credits == [("lager", 2 * 20 * 90), ("helles", 20 * 100), ("cheese", 900)]


def test_a_credit_given_replaces_the_default(shop):
    delivery = received(shop, body={"items": [line("beer", 2)]})
    response = answer(shop, delivery["id"], 1, accepted("beer", 1, "REPLACE", credit=50))
    assert response.data["claims"][0]["items"][0]["credit"] == 50


TEXT = "x" * 2000


@pytest.mark.parametrize(
    "items, fields, paths",
    [
        ([], {}, ["items"]),
        ([accepted("beer", 1)], {}, ["items"]),  # the water is not answered
        ([accepted("beer", 1), accepted("water", 1), accepted("beer", 1)], {}, ["items[2].id"]),
        ([accepted("beer", 1), accepted("water", 1), accepted("cheese", 1)], {}, ["items[2].id"]),
        ([accepted("beer", 3), accepted("water", 1)], {}, ["items[0].accepted"]),
        ([accepted("beer", -1), accepted("water", 1)], {}, ["items[0].accepted"]),
        ([accepted("beer", 0.5), accepted("water", 1)], {}, ["items[0].accepted"]),
        ([accepted("beer", 1, "REFUND"), accepted("water", 1)], {}, ["items[0].resolution"]),
        ([accepted("beer", 1, credit=-1), accepted("water", 1)], {}, ["items[0].credit"]),
        ([accepted("beer", 1, credit=100_000_001), accepted("water", 1)], {}, ["items[0].credit"]),
        ([accepted("beer", 1, credit=1.5), accepted("water", 1)], {}, ["items[0].credit"]),
        ([accepted("beer", 1, reason=TEXT + "x"), accepted("water", 1)], {}, ["items[0].reason"]),
        ([accepted("beer", 1), accepted("water", 1)], {"message": TEXT + "x"}, ["message"]),
        ([accepted("beer", 1), accepted("water", 1)], {"status": "ACCEPTED"}, ["status"]),
        # Every problem at once (decisions §3): a wrong credit beside a line the claim lacks and one left unanswered.
        ([accepted("beer", 1, credit=-5), accepted("zz", 1)], {}, ["items[0].credit", "items[1].id", "items"]),
        ([accepted("beer", 3), accepted("water", 1, "REFUND")], {}, ["items[1].resolution", "items[0].accepted"]),
    ],
)
def test_every_wrong_field_of_an_answer_is_named(shop, items, fields, paths):
    delivery = received(shop, body={"items": [line("beer", 2), line("water", 1)]})
    response = answer(shop, delivery["id"], 1, *items, **fields)
    assert (response.status_code, response.data["type"], problem_paths(response)) == (400, "validation-error", paths)
    assert shop.get(f"/deliveries/{delivery['id']}").data["claims"][0]["status"] == "OPEN"


def test_an_answer_at_its_field_bounds_is_taken(shop):
    delivery = received(shop, body={"items": [line("beer", 2), line("water", 1)]})
    response = answer(
        shop,
        delivery["id"],
        1,
        accepted("beer", 0, "NONE", credit=100_000_000, reason=TEXT),
        accepted("water", 1, "CREDIT", credit=0),
        message=TEXT,
    )
    assert response.status_code == 200, response.data
    assert [i["credit"] for i in response.data["claims"][0]["items"]] == [100_000_000, 0]


def test_a_claim_is_answered_once_and_not_by_a_customer(shop):
    delivery = received(shop, body={"items": [line("beer", 2)]})
    forbidden = shop.post(
        f"/deliveries/{delivery['id']}/claims/1/answer", {"items": [accepted("beer", 1)]}, token=CUSTOMER_TOKEN
    )
    assert forbidden.status_code == 403
    assert answer(shop, delivery["id"], 1, accepted("beer", 1)).status_code == 200
    again = answer(shop, delivery["id"], 1, accepted("beer", 2))
    assert (again.status_code, again.data["type"]) == (400, "invalid-transition")
    assert "claim 1 is PARTIALLY_ACCEPTED: only an OPEN claim can be answered" == again.data["detail"]
    withdrawn = received(shop, body={"items": [line("beer", 2)]})
    shop.post(f"/customer/deliveries/{withdrawn['id']}/claims/1/withdraw", token=CUSTOMER_TOKEN)
    late = answer(shop, withdrawn["id"], 1, accepted("beer", 1))
    assert (late.status_code, late.data["type"]) == (400, "invalid-transition")


def test_an_answer_with_an_idempotency_key_is_replayed(shop):
    delivery = received(shop, body={"items": [line("beer", 2)]})
    headers = {"Idempotency-Key": "answer-1"}
    first = answer(shop, delivery["id"], 1, accepted("beer", 2), headers=headers)
    again = answer(shop, delivery["id"], 1, accepted("beer", 2), headers=headers)
    assert (first.status_code, again.status_code, again.body) == (200, 200, first.body)
    other = answer(shop, delivery["id"], 1, accepted("beer", 1), headers=headers)
    assert (other.status_code, other.data["type"]) == (400, "conflict")
