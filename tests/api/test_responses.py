"""POST /deliveries/:id/responses: every row of the transition table (decisions §8) and item rules."""

import pytest

from chalicelib.domain.delivery import SupplierDelivery as Delivery
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem

from .deliveries_helpers import CUSTOMER_TOKEN, assert_shape, place, respond, shop  # noqa: F401

STAMP = "2026-05-04T09:30:00.000Z"


def delivery_in(api, status) -> int:
    """A delivery of beer crates and cheese, brought to `status`."""
    delivery = place(api, [{"id": "beer", "count": 2, "bundle": {"id": "crate"}}, {"id": "cheese", "count": 1.5}])
    delivery_id = delivery["id"]
    if status in ("ACCEPTED", "REJECTED"):
        assert respond(api, delivery_id, {"type": "ACCEPT" if status == "ACCEPTED" else "REJECT"}).status_code == 200
    if status in ("CANCELLED", "DELIVERED"):
        action = "cancel" if status == "CANCELLED" else "receive"
        assert api.post(f"/customer/deliveries/{delivery_id}/{action}", token=CUSTOMER_TOKEN).status_code == 200
    return delivery_id


ALLOWED = [
    ("REQUESTED", "ACCEPT", "ACCEPTED"),
    ("REQUESTED", "REJECT", "REJECTED"),
    ("ACCEPTED", "ACCEPT", "ACCEPTED"),
    ("ACCEPTED", "UPDATE", "ACCEPTED"),
    ("ACCEPTED", "REJECT", "REJECTED"),
]
FORBIDDEN = [("REQUESTED", "UPDATE")] + [
    (final, kind) for final in ("REJECTED", "CANCELLED", "DELIVERED") for kind in ("ACCEPT", "UPDATE", "REJECT")
]


@pytest.mark.parametrize("start, kind, end", ALLOWED)
def test_allowed_responses_are_appended(shop, start, kind, end):
    delivery_id = delivery_in(shop, start)
    before = shop.get(f"/deliveries/{delivery_id}").data
    response = respond(shop, delivery_id, {"type": kind, "reference": "R-7"})
    assert response.status_code == 200
    assert_shape(Delivery, response)
    assert response.data["status"] == end
    assert response.data["responses"] == before["responses"] + [{"type": kind, "timestamp": STAMP, "reference": "R-7"}]
    assert shop.get(f"/deliveries/{delivery_id}").data == response.data


@pytest.mark.parametrize("start, kind", FORBIDDEN)
def test_forbidden_responses_are_refused(shop, start, kind):
    delivery_id = delivery_in(shop, start)
    before = shop.get(f"/deliveries/{delivery_id}").data
    response = respond(shop, delivery_id, {"type": kind})
    assert_problem(response, 400, "invalid-transition")
    assert shop.get(f"/deliveries/{delivery_id}").data == before


@pytest.mark.parametrize("start, kind", FORBIDDEN)
def test_a_forbidden_response_is_an_invalid_transition_whatever_else_its_body_says(shop, start, kind):
    """decisions §8: any response to a final delivery, and an UPDATE before an ACCEPT, is 400 invalid-transition,
    even when its fields are wrong too."""
    delivery_id = delivery_in(shop, start)
    before = shop.get(f"/deliveries/{delivery_id}").data
    wrong = {"type": kind, "items": [{"id": "nope", "count": -1}], "scheduled": {"date": "not a date"}}
    assert_problem(respond(shop, delivery_id, wrong), 400, "invalid-transition")
    if start != "REQUESTED":  # a final delivery takes no response of any kind
        assert_problem(respond(shop, delivery_id, {"type": "MAYBE"}), 400, "invalid-transition")
    assert shop.get(f"/deliveries/{delivery_id}").data == before


def test_a_wrong_field_in_an_allowed_response_is_a_validation_error(shop):
    delivery_id = delivery_in(shop, "REQUESTED")
    wrong = {"type": "ACCEPT", "items": [{"id": "nope"}]}
    assert_problem(respond(shop, delivery_id, wrong), 400, "validation-error")
    assert problem_paths(respond(shop, delivery_id, {"type": "MAYBE"})) == ["type"]
    assert problem_paths(respond(shop, 99, {"type": "UPDATE", "items": 1})) == ["items"]  # no delivery: the fields


def test_several_updates_after_an_accept(shop):
    delivery_id = delivery_in(shop, "ACCEPTED")
    for reference in ("R-1", "R-2"):
        assert respond(shop, delivery_id, {"type": "UPDATE", "reference": reference}).status_code == 200
    delivery = respond(shop, delivery_id, {"type": "REJECT", "message": "sold out"}).data
    assert [r["type"] for r in delivery["responses"]] == ["ACCEPT", "UPDATE", "UPDATE", "REJECT"]
    assert delivery["status"] == "REJECTED"


def test_a_full_response_is_stored_as_given_with_vessel_counts(shop):
    delivery_id = delivery_in(shop, "REQUESTED")
    body = {
        "type": "ACCEPT",
        "reference": "SO-991",
        "scheduled": {"date": "2026-05-08", "time": "12:00"},
        "items": [
            {"id": "beer-crate", "count": 1, "bundle": {"id": "c6", "type": "CT", "size": 6}, "price": 140},
            {"id": "cheese", "count": 1.25},
        ],
        "user": {"name": "Sam Supplier", "email": "sam@example.com"},
        "message": "half the beer",
    }
    response = respond(shop, delivery_id, body)
    assert response.status_code == 200
    (stored,) = response.data["responses"]
    assert stored == {
        **body,
        "timestamp": STAMP,
        "items": [
            {
                "id": "beer-crate",
                "count": 1,
                "bundle": {"id": "c6", "type": "CT", "size": 6},
                "vessel_count": 6,
                "price": 140,
            },
            {"id": "cheese", "count": 1.25, "vessel_count": 1.25},
        ],
    }


def test_an_omitted_count_or_bundle_means_the_requested_one(shop):
    delivery_id = delivery_in(shop, "REQUESTED")
    items = [{"id": "beer-crate", "price": 120}, {"id": "cheese", "count": 0}]
    (stored,) = respond(shop, delivery_id, {"type": "REJECT", "items": items}).data["responses"]
    assert stored["items"] == [
        {"id": "beer-crate", "vessel_count": 48, "price": 120},
        {"id": "cheese", "count": 0, "vessel_count": 0},
    ]


def test_reject_may_not_carry_a_schedule(shop):
    delivery_id = delivery_in(shop, "ACCEPTED")
    response = respond(shop, delivery_id, {"type": "REJECT", "scheduled": {"date": "2026-05-08"}})
    assert response.status_code == 400
    assert problem_paths(response) == ["scheduled"]
    assert shop.get(f"/deliveries/{delivery_id}").data["responses"][-1]["type"] == "ACCEPT"  # the REJECT kept nothing
    update = respond(shop, delivery_id, {"type": "UPDATE", "scheduled": {"date": "2026-05-08"}})
    assert update.status_code == 200
    assert update.data["responses"][-1] == {"type": "UPDATE", "timestamp": STAMP, "scheduled": {"date": "2026-05-08"}}


@pytest.mark.parametrize(
    "body, paths",
    [
        ({}, ["type"]),
        ({"type": "MAYBE"}, ["type"]),
        ({"type": "ACCEPT", "items": [{"id": "wine"}]}, ["items[0].id"]),
        ({"type": "ACCEPT", "items": [{"id": "beer"}]}, ["items[0].id"]),  # the delivery shows beer-crate
        ({"type": "ACCEPT", "items": [{"id": "beer-crate", "count": -1}]}, ["items[0].count"]),
        ({"type": "ACCEPT", "items": [{"id": "beer-crate", "count": 1.5}]}, ["items[0].count"]),
        ({"type": "ACCEPT", "items": [{"id": "beer-crate", "price": 1.5}]}, ["items[0].price"]),
        ({"type": "ACCEPT", "items": [{"id": "beer-crate", "price": -1}]}, ["items[0].price"]),
        ({"type": "ACCEPT", "items": [{"id": "beer-crate", "bundle": {"size": 6}}]}, ["items[0].bundle.type"]),
        (
            {"type": "ACCEPT", "items": [{"id": "beer-crate", "bundle": {"type": "PX", "size": 2}}]},
            ["items[0].bundle.pallet_bundle"],
        ),
        ({"type": "ACCEPT", "items": [{"count": 1}]}, ["items[0].id"]),
        ({"type": "ACCEPT", "items": [{"id": "cheese"}, {"id": "cheese"}]}, ["items[1].id"]),
        ({"type": "ACCEPT", "scheduled": {"time": "10:00"}}, ["scheduled.date"]),
        ({"type": "ACCEPT", "scheduled": {"date": "2026-05-08", "time": "25:00"}}, ["scheduled.time"]),
        ({"type": "ACCEPT", "user": {"name": "Sam"}}, ["user.email"]),
        ({"type": "ACCEPT", "note": "x"}, ["note"]),
    ],
)
def test_invalid_responses(shop, body, paths):
    delivery_id = delivery_in(shop, "REQUESTED")
    response = respond(shop, delivery_id, body)
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == paths
    assert shop.get(f"/deliveries/{delivery_id}").data["responses"] == []


def test_kg_items_take_fractional_counts(shop):
    delivery_id = delivery_in(shop, "REQUESTED")
    response = respond(shop, delivery_id, {"type": "ACCEPT", "items": [{"id": "cheese", "count": 0.75}]})
    assert response.status_code == 200
    stored = {"type": "ACCEPT", "timestamp": STAMP, "items": [{"id": "cheese", "count": 0.75, "vessel_count": 0.75}]}
    assert response.data["responses"] == [stored]
    read_back = shop.get(f"/deliveries/{delivery_id}")
    assert read_back.data["responses"] == [stored]
    assert b'"count":0.75,"vessel_count":0.75' in read_back.body  # the stored number, exactly as written


def test_responses_to_unknown_deliveries_are_404(shop):
    delivery_in(shop, "REQUESTED")
    for response in (
        respond(shop, 99, {"type": "ACCEPT"}),
        respond(shop, "x", {"type": "ACCEPT"}),
        respond(shop, 1, {"type": "ACCEPT"}, token=OTHER_TOKEN),
    ):
        assert (response.status_code, response.data["type"]) == (404, "not-found")
    assert shop.get("/deliveries/1").data["responses"] == []  # the other account's response touched nothing


def test_a_malformed_body_is_400(shop):
    delivery_id = delivery_in(shop, "REQUESTED")
    response = shop.post(f"/deliveries/{delivery_id}/responses", raw="{not json")
    assert response.status_code == 400
    assert problem_paths(response) == ["body"]


def test_a_delivery_that_keeps_changing_gives_409_and_keeps_nothing(shop, monkeypatch):
    from chalicelib.service import deliveries
    from chalicelib.service import write_units as store
    from chalicelib.store import outcomes

    delivery_id = delivery_in(shop, "REQUESTED")
    monkeypatch.setattr(deliveries, "MAX_ATTEMPTS", 3)
    monkeypatch.setattr(deliveries, "CONTENTION_SECONDS", 0)  # and no time to keep trying
    monkeypatch.setattr(store, "commit", lambda *args, **named: outcomes.Stale())  # every write loses a race
    response = respond(shop, delivery_id, {"type": "ACCEPT"})
    assert_problem(response, 409, "conflict")
    monkeypatch.undo()
    assert shop.get(f"/deliveries/{delivery_id}").data["responses"] == []


def test_a_lost_race_is_evaluated_again_against_the_new_state(shop, monkeypatch):
    """Another response lands between our read and our write: ours is re-checked against it."""
    from chalicelib.service import write_units as store

    delivery_id = delivery_in(shop, "REQUESTED")
    real_change = store.commit
    raced = []

    def reject_first(*args, **named):
        if not raced:
            raced.append(True)
            assert respond(shop, delivery_id, {"type": "REJECT", "reference": "theirs"}).status_code == 200
        return real_change(*args, **named)

    monkeypatch.setattr(store, "commit", reject_first)
    response = respond(shop, delivery_id, {"type": "ACCEPT", "reference": "ours"})
    assert_problem(response, 400, "invalid-transition")
    monkeypatch.undo()
    delivery = shop.get(f"/deliveries/{delivery_id}").data
    assert [r["reference"] for r in delivery["responses"]] == ["theirs"]
    assert delivery["status"] == "REJECTED"
