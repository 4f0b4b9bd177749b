"""Amendments, round 2 (decisions §16 as it changed): a product first ordered through an amendment is used, an
ACCEPTED delivery is amended only before the cutoff of the date it is accepted for (and every amendment is checked
against that date), a change of a line's message alone keeps its price."""

import datetime as dt

from tests.conftest import clock_at, problem_paths

from .deliveries_helpers import (  # noqa: F401
    BEER,
    CUSTOMER_TOKEN,
    USER,
    place,
    put_product,
    put_settings,
    respond,
    shop,
)

CRATES = {"id": "beer", "count": 2, "bundle": {"id": "crate"}}
WEDNESDAY, NEXT_WEDNESDAY, WEEK_AFTER = "2026-05-06", "2026-05-13", "2026-05-20"


def amend(api, delivery_id, body):
    return api.post(f"/customer/deliveries/{delivery_id}/amendments", body={"user": USER, **body}, token=CUSTOMER_TOKEN)


def at(monkeypatch, moment: str) -> None:
    clock_at(monkeypatch, dt.datetime.fromisoformat(moment))


def wednesdays_by_noon_the_day_before() -> None:
    """Helsinki (UTC+3 in May): each Wednesday's cutoff is Tuesday 12:00, 09:00 UTC."""
    put_settings(
        timezone="Europe/Helsinki",
        allow_product_comments=True,
        delivery_days={"3": {"lead_days": 1, "cutoff": "12:00"}},
    )


# --- a product first ordered through an amendment counts as used (decisions §5, §16) ---


def test_a_product_first_ordered_through_an_amendment_cannot_be_deleted(shop):
    delivery = place(shop, [CRATES])
    assert amend(shop, delivery["id"], {"items": [CRATES, {"id": "water", "count": 2}]}).status_code == 200
    refused = shop.delete("/products/water")
    assert refused.status_code == 400
    assert refused.data["type"] == "conflict"
    assert refused.data["detail"] == "product water is used by a delivery and cannot be deleted"
    assert shop.get("/products/water").status_code == 200
    # The bar keeps the line in a later amendment.
    kept = amend(shop, delivery["id"], {"items": [{"id": "water", "count": 2}]})
    assert kept.status_code == 200 and [i["id"] for i in kept.data["request"]["items"]] == ["water"]


def test_a_product_no_amendment_ordered_can_still_be_deleted(shop):
    delivery = place(shop, [CRATES])
    refused = amend(shop, delivery["id"], {"items": [CRATES, {"id": "cheese", "count": 0.1}]})  # below its minimum
    assert refused.status_code == 400
    assert shop.delete("/products/cheese").status_code == 204


def test_a_product_deleted_between_an_amendments_read_and_its_write_is_named(shop, monkeypatch):
    """The amendment's write marks the product used on condition it exists: deleted meanwhile, the amendment is
    checked again and refused naming the line (never a delivery holding a product that no longer exists)."""
    from chalicelib.service import amendments, catalogue

    delivery = place(shop, [CRATES])
    loaded = amendments.load_context
    deleted = []

    def load_then_delete(*args, **kwargs):
        context = loaded(*args, **kwargs)
        if not deleted:
            deleted.append(catalogue.delete_product("acme", "water", None))
        return context

    monkeypatch.setattr(amendments, "load_context", load_then_delete)
    response = amend(shop, delivery["id"], {"items": [CRATES, {"id": "water", "count": 2}]})
    assert response.status_code == 400
    assert problem_paths(response) == ["items[1].id"]
    assert shop.get("/products/water").status_code == 404


# --- the date an ACCEPTED delivery is accepted for (decisions §16) ---


def test_an_accepted_delivery_is_not_changed_after_its_cutoff_by_moving_it_to_a_later_date(shop, monkeypatch):
    wednesdays_by_noon_the_day_before()
    delivery = place(shop, [CRATES], scheduled={"date": WEDNESDAY})
    assert respond(shop, delivery["id"], {"type": "ACCEPT"}).data["status"] == "ACCEPTED"
    at(monkeypatch, "2026-05-05T09:00:59+00:00")  # 12:00:59 on Tuesday in Helsinki: still in time
    early = place(shop, [CRATES], scheduled={"date": WEDNESDAY})
    assert respond(shop, early["id"], {"type": "ACCEPT"}).status_code == 200
    moved = amend(shop, early["id"], {"items": [CRATES], "scheduled": {"date": NEXT_WEDNESDAY}})
    assert moved.status_code == 200 and moved.data["status"] == "REQUESTED"
    at(monkeypatch, "2026-05-05T09:01:00+00:00")  # 12:01: the supplier has planned Wednesday's load
    refused = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 5}], "scheduled": {"date": NEXT_WEDNESDAY}})
    assert refused.status_code == 400
    assert refused.data["type"] == "invalid-transition"
    assert refused.data["detail"] == (
        "the delivery is accepted for 2026-05-06, whose cutoff has passed: it can no longer be amended"
    )
    read = shop.get(f"/deliveries/{delivery['id']}").data
    assert read["status"] == "ACCEPTED" and read["request"]["scheduled"] == {"date": WEDNESDAY}
    assert "amendments" not in read


def test_an_accepted_delivery_is_checked_against_the_date_the_supplier_moved_it_to(shop, monkeypatch):
    wednesdays_by_noon_the_day_before()
    delivery = place(shop, [CRATES], scheduled={"date": WEDNESDAY})
    accepted = respond(shop, delivery["id"], {"type": "ACCEPT", "scheduled": {"date": NEXT_WEDNESDAY}})
    assert accepted.status_code == 200
    at(monkeypatch, "2026-05-05T10:00:00+00:00")  # past Wednesday's cutoff, a week before the next one's
    changed = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]})
    assert changed.status_code == 200, changed.data
    assert changed.data["status"] == "REQUESTED"
    assert changed.data["request"]["scheduled"] == {"date": WEDNESDAY}  # as requested: the date is not replaced
    # Back to REQUESTED, its date is still the one the supplier's latest response states.
    again = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 4}]})
    assert again.status_code == 200, again.data
    at(monkeypatch, "2026-05-12T09:01:00+00:00")  # past the next Wednesday's cutoff too
    late = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 5}]})
    assert late.status_code == 400 and problem_paths(late) == ["scheduled"]


def test_after_the_planned_dates_cutoff_an_accepted_delivery_cannot_be_amended_to_any_date(shop, monkeypatch):
    wednesdays_by_noon_the_day_before()
    delivery = place(shop, [CRATES], scheduled={"date": WEDNESDAY})
    respond(shop, delivery["id"], {"type": "ACCEPT", "scheduled": {"date": NEXT_WEDNESDAY}})
    respond(shop, delivery["id"], {"type": "UPDATE", "message": "see you then"})  # no date: the ACCEPT's stands
    at(monkeypatch, "2026-05-12T09:01:00+00:00")
    refused = amend(shop, delivery["id"], {"items": [CRATES], "scheduled": {"date": WEEK_AFTER}})
    assert refused.status_code == 400 and refused.data["type"] == "invalid-transition"
    assert "2026-05-13" in refused.data["detail"]


def test_a_date_the_amendment_sets_replaces_the_one_responses_stated(shop, monkeypatch):
    wednesdays_by_noon_the_day_before()
    delivery = place(shop, [CRATES], scheduled={"date": WEDNESDAY})
    respond(shop, delivery["id"], {"type": "ACCEPT", "scheduled": {"date": NEXT_WEDNESDAY}})
    moved = amend(shop, delivery["id"], {"items": [CRATES], "scheduled": {"date": WEEK_AFTER}})
    assert moved.status_code == 200
    at(monkeypatch, "2026-05-12T09:01:00+00:00")  # past 13 May's cutoff, before 20 May's
    assert amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]}).status_code == 200
    assert respond(shop, delivery["id"], {"type": "ACCEPT"}).data["status"] == "ACCEPTED"
    assert amend(shop, delivery["id"], {"items": [{**CRATES, "count": 4}]}).status_code == 200  # accepted for 20 May


def test_the_requested_date_asked_for_again_after_the_supplier_moved_it_is_a_change(shop, monkeypatch):
    """An audit found it taken for no change (200, nothing recorded) and the delivery still for the moved date."""
    wednesdays_by_noon_the_day_before()
    delivery = place(shop, [CRATES], scheduled={"date": WEDNESDAY})
    respond(shop, delivery["id"], {"type": "ACCEPT", "scheduled": {"date": NEXT_WEDNESDAY}})
    back = amend(shop, delivery["id"], {"items": [CRATES], "scheduled": {"date": WEDNESDAY}})
    assert (back.status_code, back.data["status"]) == (200, "REQUESTED")
    (record,) = back.data["amendments"]
    assert (record["scheduled"], record["items"]) == ({"from": {"date": NEXT_WEDNESDAY}, "to": {"date": WEDNESDAY}}, [])
    assert amend(shop, delivery["id"], {"items": [CRATES], "scheduled": {"date": WEDNESDAY}}).data["amendments"] == [
        record
    ]  # now no change
    at(monkeypatch, "2026-05-05T09:01:00+00:00")  # past Wednesday's cutoff: the date it is for now
    refused = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]})
    assert (refused.status_code, problem_paths(refused)) == (400, ["scheduled"])


def test_a_line_shown_under_a_bundles_id_override_keeps_its_products_cutoff(shop, monkeypatch):
    """decisions §16: after the cutoff of the date it is accepted for, an ACCEPTED delivery is not amended. The
    product's own rules decide that cutoff (§7) even when the amendment leaves its line out, which is shown under
    the bundle's id_override (an audit found the product not read, and the amendment taken)."""
    put_product(shop, "beer", {**BEER, "delivery_days": {"3": {"lead_days": 1, "cutoff": "12:00"}}})
    delivery = place(shop, [CRATES], scheduled={"date": WEDNESDAY})
    assert [item["id"] for item in delivery["request"]["items"]] == ["beer-crate"]
    assert respond(shop, delivery["id"], {"type": "ACCEPT"}).status_code == 200
    at(monkeypatch, "2026-05-05T11:59:00+00:00")  # before Tuesday 12:00 UTC, Wednesday's cutoff for beer
    before = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3}]})
    assert before.status_code == 200, before.data
    assert respond(shop, delivery["id"], {"type": "ACCEPT"}).status_code == 200
    at(monkeypatch, "2026-05-05T13:00:00+00:00")
    for items in ([{"id": "water", "count": 6}], [CRATES]):
        refused = amend(shop, delivery["id"], {"items": items})
        assert (refused.status_code, refused.data["type"]) == (400, "invalid-transition"), items


def test_the_date_and_time_the_supplier_accepted_asked_for_again_is_no_change(shop):
    """decisions §16: an amendment that changes nothing is 200 with the delivery, nothing recorded (an audit found a
    response's time dropped, and the same date and time taken for a move that undid the ACCEPT)."""
    same = {"date": WEDNESDAY, "time": "10:00"}
    delivery = place(shop, [CRATES], scheduled=same)
    assert respond(shop, delivery["id"], {"type": "ACCEPT", "scheduled": same}).status_code == 200
    accepted = shop.get(f"/deliveries/{delivery['id']}").headers["ETag"]
    again = amend(shop, delivery["id"], {"items": [CRATES], "scheduled": same})
    assert (again.status_code, again.data["status"]) == (200, "ACCEPTED") and "amendments" not in again.data
    assert shop.get(f"/deliveries/{delivery['id']}").headers["ETag"] == accepted
    moved = amend(shop, delivery["id"], {"items": [CRATES], "scheduled": {"date": WEDNESDAY, "time": "12:00"}})
    (record,) = moved.data["amendments"]
    assert record["scheduled"] == {"from": same, "to": {"date": WEDNESDAY, "time": "12:00"}}


# --- a line whose message alone changes keeps its price (decisions §16) ---


def test_a_message_only_change_keeps_the_lines_price_and_a_count_change_takes_the_new_one(shop):
    delivery = place(shop, [CRATES])
    assert delivery["request"]["items"][0]["price"] == 150
    put_product(shop, "beer", {**BEER, "price": 170})
    noted = amend(shop, delivery["id"], {"items": [{**CRATES, "message": "cold ones"}]})
    assert noted.status_code == 200, noted.data
    (item,) = noted.data["request"]["items"]
    assert (item["price"], item["message"], item["count"]) == (150, "cold ones", 2)
    assert noted.data["amendments"][0]["items"] == [
        {
            "id": "beer-crate",
            "bundle": {"id": "crate", "type": "CT", "size": 24},
            "action": "CHANGED",
            "count_before": 2,
            "count": 2,
        }
    ]
    unnoted = amend(shop, delivery["id"], {"items": [CRATES]})
    assert unnoted.data["request"]["items"][0]["price"] == 150 and "message" not in unnoted.data["request"]["items"][0]
    recounted = amend(shop, delivery["id"], {"items": [{**CRATES, "count": 3, "message": "cold ones"}]})
    assert recounted.data["request"]["items"][0]["price"] == 170


def test_a_message_only_change_is_still_checked_as_an_orders_message(shop):
    put_settings()  # comments off
    delivery = place(shop, [CRATES])
    refused = amend(shop, delivery["id"], {"items": [{**CRATES, "message": "cold ones"}]})
    assert refused.status_code == 400 and problem_paths(refused) == ["items[0].message"]
