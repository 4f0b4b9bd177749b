"""The supplier's delivery note (decisions §18): POST /deliveries/:id/delivery-note makes a REQUESTED or ACCEPTED
delivery DELIVERED with every line as ordered, confirmed and delivered, once; its fields and their bounds."""

import datetime as dt

import pytest

from chalicelib.domain.delivery import SupplierDelivery
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem

from .deliveries_helpers import (  # noqa: F401
    CUSTOMER_TOKEN,
    NOW,
    USER,
    assert_shape,
    place,
    put_settings,
    respond,
    shop,
)
from .note_support import CRATE, SHOWN_CRATE, bottled, note


def test_a_note_delivers_an_accepted_delivery_line_by_line(shop):
    delivery = place(shop, [{"id": "beer", "count": 20}, {"id": "cheese", "count": 2}, {"id": "water", "count": 6}])
    respond(shop, delivery["id"], {"type": "ACCEPT", "items": [{"id": "beer", "count": 18, "reason": "OUT_OF_STOCK"}]})
    before = shop.get(f"/deliveries/{delivery['id']}")
    response = note(
        shop,
        delivery["id"],
        {"items": [{"id": "water", "count": 5, "reason": "OTHER"}, {"id": "cheese", "count": 1.75}]},
    )
    assert response.status_code == 200, response.data
    assert_shape(SupplierDelivery, response)
    delivered = response.data
    assert delivered["status"] == "DELIVERED"
    assert delivered["delivery_note"] == {
        "number": "LS-1",
        "delivered_at": "2026-05-04T09:30:00.000+00:00",
        "items": [
            {"id": "beer", "bundle": None, "ordered": 20, "confirmed": 18, "count": 18, "vessel_count": 18},
            {"id": "cheese", "bundle": None, "ordered": 2, "confirmed": 2, "count": 1.75, "vessel_count": 1.75},
            {
                "id": "water",
                "bundle": None,
                "ordered": 6,
                "confirmed": 6,
                "count": 5,
                "vessel_count": 5,
                "reason": "OTHER",
            },
        ],
        "substitutions": [],
        "empties": [],
        "timestamp": "2026-05-04T09:30:00.000Z",
    }
    assert list(delivered).index("delivery_note") == list(delivered).index("responses") + 1
    assert list(delivered)[-1] == "integration"
    assert delivered["responses"] == before.data["responses"]  # a note adds no response
    assert shop.get(f"/deliveries/{delivery['id']}").data == delivered
    assert (
        shop.get(f"/customer/deliveries/{delivery['id']}", token=CUSTOMER_TOKEN).data["delivery_note"]
        == (delivered["delivery_note"])
    )
    assert shop.get(f"/deliveries/{delivery['id']}").headers["ETag"] != before.headers["ETag"]
    listed = shop.get("/deliveries").data["deliveries"][0]
    assert listed["status"] == "DELIVERED" and "delivery_note" not in listed  # lists leave it out
    assert "delivery_note" not in shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).data["deliveries"][0]


def test_a_requested_delivery_takes_a_note_and_its_lines_are_as_requested(shop):
    delivery = place(shop, [{"id": "beer", "count": 2, "bundle": {"id": "crate"}}])
    response = note(shop, delivery["id"], {"number": "A" * 35})
    assert response.status_code == 200, response.data
    assert response.data["responses"] == [] and response.data["status"] == "DELIVERED"
    (line,) = response.data["delivery_note"]["items"]
    bundle = {"id": "crate", "type": "CT", "size": 24}
    assert line == {"id": "beer-crate", "bundle": bundle, "ordered": 2, "confirmed": 2, "count": 2, "vessel_count": 48}


def test_a_line_s_bundle_as_the_response_and_then_the_note_give_it(shop):
    delivery = place(shop, [{"id": "beer", "count": 2, "bundle": {"id": "crate"}}])
    respond(shop, delivery["id"], {"type": "ACCEPT", "items": [{"id": "beer-crate", "bundle": None, "count": 40}]})
    confirmed = note(
        shop, delivery["id"], {"items": [{"id": "beer-crate", "count": 3, "bundle": {"type": "CT", "size": 12}}]}
    )
    line = confirmed.data["delivery_note"]["items"][0]
    assert (line["confirmed"], line["count"], line["bundle"], line["vessel_count"]) == (
        40,
        3,
        {"type": "CT", "size": 12},
        36,
    )
    other = place(shop, [{"id": "beer", "count": 2, "bundle": {"id": "crate"}}])
    respond(shop, other["id"], {"type": "ACCEPT", "items": [{"id": "beer-crate", "bundle": None, "count": 40}]})
    kept = note(shop, other["id"], {"items": [{"id": "beer-crate", "count": 39}]})
    line = kept.data["delivery_note"]["items"][0]
    assert (line["bundle"], line["vessel_count"]) == (None, 39)  # the bundle the response confirmed


@pytest.mark.parametrize("status", ["REJECTED", "CANCELLED", "DELIVERED"])
def test_a_final_delivery_takes_no_note(shop, status):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    if status == "REJECTED":
        respond(shop, delivery["id"], {"type": "REJECT"})
    else:
        action = "cancel" if status == "CANCELLED" else "receive"
        shop.post(f"/customer/deliveries/{delivery['id']}/{action}", {}, token=CUSTOMER_TOKEN)
    response = note(shop, delivery["id"])
    assert (response.status_code, response.data["type"]) == (400, "invalid-transition")
    assert "delivery_note" not in shop.get(f"/deliveries/{delivery['id']}").data


def test_a_note_is_given_once_and_then_nothing_else_moves_the_delivery(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    assert note(shop, delivery["id"]).status_code == 200
    again = note(shop, delivery["id"], {"number": "LS-2"})
    assert (again.status_code, again.data["type"]) == (400, "invalid-transition")
    assert shop.get(f"/deliveries/{delivery['id']}").data["delivery_note"]["number"] == "LS-1"
    for action in ("receive", "cancel"):
        refused = shop.post(f"/customer/deliveries/{delivery['id']}/{action}", {}, token=CUSTOMER_TOKEN)
        assert (refused.status_code, refused.data["type"]) == (400, "invalid-transition")
    assert_problem(respond(shop, delivery["id"], {"type": "UPDATE"}), 400, "invalid-transition")


def test_delivered_at_defaults_to_now_and_is_shown_with_the_account_s_offset(shop):
    put_settings(timezone="Europe/Helsinki", allow_delivery_comments=True, allow_product_comments=True)
    delivery = place(shop, [{"id": "beer", "count": 2}])
    assert note(shop, delivery["id"]).data["delivery_note"]["delivered_at"] == "2026-05-04T12:30:00.000+03:00"
    given = place(shop, [{"id": "beer", "count": 2}])
    response = note(shop, given["id"], {"delivered_at": "2026-05-04T09:34:59.250Z"})
    assert response.data["delivery_note"]["delivered_at"] == "2026-05-04T12:34:59.250+03:00"


@pytest.mark.parametrize(
    "value, accepted",
    [
        ("2026-05-04T09:35:00Z", True),  # 5 minutes ahead
        ("2026-05-04T09:35:00.001Z", False),
        ("2026-05-04T12:35:00+03:00", True),
        ("2026-05-04T09:30:00.000Z", True),  # the moment it was requested
        ("2026-05-04T09:29:59.999Z", False),
        ("2026-05-04T09:30:00", False),  # no offset
        ("2026-05-04", False),
        ("04.05.2026 09:30", False),
        ("2026-02-30T09:30:00Z", False),
        ("2026-05-04t09:31:00z", True),
        ("2026-05-04T09:31:00.123456789+00:00", True),  # RFC 3339 takes any number of fraction digits
        ("2026-05-04T09:29:59.9999999Z", False),  # ... and they are compared to the microsecond
        ("2026-05-04T09:31:60Z", True),  # a leap second
        ("2026-05-04T09:31:61Z", False),
        ("2026-05-04T09:31:00.Z", False),
    ],
)
def test_delivered_at_is_rfc_3339_not_before_the_request_and_at_most_5_minutes_ahead(shop, value, accepted):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    assert delivery["request"]["timestamp"] == "2026-05-04T09:30:00.000Z"
    response = note(shop, delivery["id"], {"delivered_at": value})
    if accepted:
        assert response.status_code == 200, response.data
    else:
        assert (response.status_code, problem_paths(response)) == (400, ["delivered_at"])


@pytest.mark.parametrize(
    "body, paths",
    [
        ({"number": ""}, ["number"]),
        ({"number": "A" * 36}, ["number"]),
        ({"number": 17}, ["number"]),
        ({"items": [{"id": "wine", "count": 1}]}, ["items[0].id"]),
        ({"items": [{"id": "beer", "count": 1}, {"id": "beer", "count": 2}]}, ["items[1].id"]),
        ({"items": [{"id": "beer", "count": -1}]}, ["items[0].count"]),
        ({"items": [{"id": "beer", "count": 1.5}]}, ["items[0].count"]),
        ({"items": [{"id": "beer"}]}, ["items[0].count"]),
        ({"items": [{"id": "beer", "count": 1, "reason": "LATE"}]}, ["items[0].reason"]),
        (
            {"items": [{"id": "beer", "count": 1, "bundle": {"type": "PX", "size": 10}}]},
            ["items[0].bundle.pallet_bundle"],
        ),
        ({"items": [{"id": "beer", "count": 1, "price": 5}]}, ["items[0].price"]),
        ({"proof": {"signature_url": "http://sign.example/1"}}, ["proof.signature_url"]),
        ({"proof": {"signature_url": "https://sign.example/" + "a" * 1980}}, ["proof.signature_url"]),
        ({"proof": {"photo_urls": ["https://p.example/1"] * 6}}, ["proof.photo_urls"]),
        ({"proof": {"photo_urls": ["https://p.example/ä"]}}, ["proof.photo_urls[0]"]),
        ({"proof": {"received_by": "x" * 201}}, ["proof.received_by"]),
        ({"proof": {"note": "x" * 2001}}, ["proof.note"]),
        ({"proof": {"stamp": "x"}}, ["proof.stamp"]),
        ({"message": "x" * 2001}, ["message"]),
        ({"user": {"name": "Driver", "email": "no"}}, ["user.email"]),
        ({"colour": "red"}, ["colour"]),
        (
            {
                "delivered_at": "2027-01-01T00:00:00Z",
                "items": [{"id": "wine", "count": 1}, {"id": "beer", "count": -2}],
            },
            ["delivered_at", "items[0].id", "items[1].count"],
        ),
    ],
)
def test_every_field_of_a_note_is_checked_and_named(shop, body, paths):
    delivery = place(shop, [{"id": "beer", "count": 2}, {"id": "cheese", "count": 1}])
    response = note(shop, delivery["id"], body)
    assert (response.status_code, response.data["type"]) == (400, "validation-error"), response.data
    assert sorted(problem_paths(response)) == sorted(paths)
    assert shop.get(f"/deliveries/{delivery['id']}").data["status"] == "REQUESTED"


def test_a_number_is_required(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    response = shop.post(f"/deliveries/{delivery['id']}/delivery-note", {})
    assert (response.status_code, problem_paths(response)) == (400, ["number"])


def test_the_proof_keeps_links_at_their_bounds_and_the_rest_as_given(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    longest = "https://sign.example/" + "a" * (2000 - len("https://sign.example/"))
    proof = {
        "received_by": "Ä" * 200,
        "signature_url": longest,
        "photo_urls": [f"https://photos.example/{n}.jpg?size=large&x=%C3%A4" for n in range(5)],
        "note": "left at the back door",
    }
    user = {"name": "Dirk Driver", "email": "dirk@supplier.example"}
    response = note(shop, delivery["id"], {"proof": proof, "message": "x" * 2000, "user": user})
    assert response.status_code == 200, response.data
    shown = response.data["delivery_note"]
    assert (shown["proof"], shown["message"], shown["user"]) == (proof, "x" * 2000, user)
    assert list(shown) == [
        "number",
        "delivered_at",
        "items",
        "substitutions",
        "empties",
        "proof",
        "message",
        "user",
        "timestamp",
    ]
    other = place(shop, [{"id": "beer", "count": 2}])
    bare = note(shop, other["id"], {"proof": {}}).data["delivery_note"]
    assert not {"proof", "message", "user"} & set(bare)


def test_a_note_needs_a_supplier_token_and_a_delivery_of_the_account(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    assert note(shop, delivery["id"], token=CUSTOMER_TOKEN).status_code == 403
    assert note(shop, delivery["id"], token=OTHER_TOKEN).status_code == 404
    assert note(shop, 999).status_code == 404
    assert note(shop, "abc").status_code == 404


def test_a_note_keeps_the_integration_state_as_it_is(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    imported = shop.put(f"/deliveries/{delivery['id']}/integration", {"status": "IMPORTED", "reference": "ERP-1"}).data
    response = note(shop, delivery["id"])
    assert response.data["integration"] == imported
    assert shop.get("/account/integration").data["pending"] == 0
    received = place(shop, [{"id": "beer", "count": 2}])
    shop.put(f"/deliveries/{received['id']}/integration", {"status": "IMPORTED"})
    shop.post(f"/customer/deliveries/{received['id']}/receive", {}, token=CUSTOMER_TOKEN)
    assert shop.get(f"/deliveries/{received['id']}").data["integration"]["status"] == "PENDING"  # unlike a receive


def test_a_keyed_note_is_replayed_byte_for_byte_and_if_match_guards_the_version(shop):
    delivery = place(shop, [{"id": "beer", "count": 2}])
    etag = shop.get(f"/deliveries/{delivery['id']}").headers["ETag"]
    respond(shop, delivery["id"], {"type": "ACCEPT"})
    stale = note(shop, delivery["id"], headers={"If-Match": etag})
    assert (stale.status_code, stale.data["type"]) == (412, "precondition-failed")
    etag = shop.get(f"/deliveries/{delivery['id']}").headers["ETag"]
    headers = {"If-Match": etag, "Idempotency-Key": "note-1"}
    first = note(shop, delivery["id"], headers=headers)
    again = note(shop, delivery["id"], headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.headers.get("Idempotent-Replayed") == "true" and again.body == first.body
    other = note(shop, delivery["id"], {"number": "LS-2"}, headers={"Idempotency-Key": "note-1"})
    assert (other.status_code, other.data["type"]) == (400, "conflict")


def test_the_time_a_note_was_received_is_the_service_s(shop, monkeypatch):
    from tests.conftest import clock_at

    delivery = place(shop, [{"id": "beer", "count": 2}])
    clock_at(monkeypatch, NOW + dt.timedelta(hours=3))
    shown = note(shop, delivery["id"], {"delivered_at": "2026-05-04T11:00:00Z"}).data["delivery_note"]
    assert (shown["delivered_at"], shown["timestamp"]) == ("2026-05-04T11:00:00.000+00:00", "2026-05-04T12:30:00.000Z")


def test_substitutes_in_a_note_replace_the_responses(shop):
    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 2, "bundle": CRATE}])
    substitute = {"for": "lager", "id": "helles", "count": 1, "bundle": CRATE}
    respond(shop, delivery["id"], {"type": "ACCEPT", "substitutions": [substitute]})
    kept = note(shop, delivery["id"])
    assert kept.data["delivery_note"]["substitutions"] == [
        {"for": "lager", "id": "helles", "count": 1, "bundle": SHOWN_CRATE, "vessel_count": 20, "price": 110}
    ]
    other = place(shop, [{"id": "lager", "count": 2, "bundle": CRATE}])
    respond(shop, other["id"], {"type": "ACCEPT", "substitutions": [substitute]})
    replaced = note(shop, other["id"], {"substitutions": [{**substitute, "count": 2, "price": 100}]})
    assert [(s["count"], s["price"]) for s in replaced.data["delivery_note"]["substitutions"]] == [(2, 100)]
    cleared = place(shop, [{"id": "lager", "count": 2, "bundle": CRATE}])
    respond(shop, cleared["id"], {"type": "ACCEPT", "substitutions": [substitute]})
    assert note(shop, cleared["id"], {"substitutions": []}).data["delivery_note"]["substitutions"] == []


def test_substitutes_in_a_note_are_checked_as_in_a_response(shop):
    bottled(shop)
    assert shop.patch("/customers/c1", {"substitutions": "NOT_ALLOWED"}).status_code == 200
    delivery = place(shop, [{"id": "lager", "count": 2, "bundle": CRATE}])
    response = note(
        shop,
        delivery["id"],
        {"substitutions": [{"for": "lager", "id": "old", "count": 1}], "items": [{"id": "lager", "count": -1}]},
    )
    assert response.status_code == 400
    assert problem_paths(response) == ["items[0].count", "substitutions[0].for", "substitutions[0].id"]
