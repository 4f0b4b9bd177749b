"""FAILED dates of standing orders (decisions §17): a failed date is not placed, so a replacement (PUT again) applies
to it, and the customer may skip it."""

import datetime as dt

from chalicelib.service import clock

from .deliveries_helpers import CUSTOMER_TOKEN, WINE, shop  # noqa: F401
from .standing_support import BASE, occurrences, put_standing, run_placer

FAILED_ON_TUESDAY = {
    "date": "2026-05-05",
    "status": "FAILED",
    "place_at": "2026-05-03T23:59:00+00:00",
    "left_out": [{"id": "wine", "reason": "OUT_OF_STOCK"}],
    "errors": [{"path": "items", "message": "none of its lines can go on this date"}],
}


def tuesday(api) -> dict:
    return occurrences(api, query="?to=2026-05-05").json_body["occurrences"][0]


def own_deliveries(api) -> list[int]:
    return [d["id"] for d in api.get("/customer/deliveries", token=CUSTOMER_TOKEN).json_body["deliveries"]]


def fail_tuesday(api) -> None:
    """Its only line out of stock: Tuesday's placing moment has passed (its cutoff has not), so it fails at once."""
    assert put_standing(api, items=[{"id": "wine", "count": 1}]).status_code == 200
    assert run_placer()["failed"] == 1
    assert tuesday(api) == FAILED_ON_TUESDAY


def test_a_replacement_before_the_cutoff_places_a_failed_date_once(shop):
    fail_tuesday(shop)
    assert put_standing(shop, items=[{"id": "beer", "count": 1}]).status_code == 200
    assert tuesday(shop) == {"date": "2026-05-05", "status": "PLANNED", "place_at": "2026-05-03T23:59:00+00:00"}
    assert run_placer()["placed"] == 1
    assert tuesday(shop) == {
        "date": "2026-05-05",
        "status": "PLACED",
        "place_at": "2026-05-03T23:59:00+00:00",
        "delivery_ids": [1],
    }
    assert put_standing(shop, items=[{"id": "beer", "count": 2}]).status_code == 200  # placed stays placed
    clock.current().advance(10)
    assert run_placer()["placed"] == 0
    assert tuesday(shop)["delivery_ids"] == [1]
    assert own_deliveries(shop) == [1]


def test_a_replacement_that_fails_again_fails_the_date_again(shop):
    fail_tuesday(shop)
    assert put_standing(shop, items=[{"id": "wine", "count": 2}]).status_code == 200
    assert run_placer()["failed"] == 1
    assert tuesday(shop) == FAILED_ON_TUESDAY
    assert own_deliveries(shop) == []


def test_a_failed_date_whose_cutoff_passed_stays_failed_after_a_replacement(shop):
    fail_tuesday(shop)
    clock.current().set(dt.datetime(2026, 5, 6, 0, 30, tzinfo=dt.timezone.utc))  # Tuesday's cutoff was 23:59 on it
    assert put_standing(shop, items=[{"id": "beer", "count": 1}]).status_code == 200
    run_placer()
    assert occurrences(shop, query="?from=2026-05-05&to=2026-05-05").json_body["occurrences"] == [FAILED_ON_TUESDAY]
    assert own_deliveries(shop) == []


def test_restocking_alone_does_not_place_a_failed_date(shop):
    fail_tuesday(shop)
    assert shop.put("/products/wine", body={**WINE, "status": "ACTIVE"}).status_code == 200
    clock.current().advance(10)
    assert run_placer()["placed"] == 0
    assert tuesday(shop) == FAILED_ON_TUESDAY


def test_a_failed_date_can_be_skipped_and_the_skip_taken_back(shop):
    fail_tuesday(shop)
    skipped = shop.put(f"{BASE}/weekly/occurrences/2026-05-05", body={"skip": True}, token=CUSTOMER_TOKEN)
    assert (skipped.status_code, skipped.json_body) == (
        200,
        {"date": "2026-05-05", "status": "SKIPPED", "place_at": "2026-05-03T23:59:00+00:00"},
    )
    assert tuesday(shop) == skipped.json_body
    taken_back = shop.put(f"{BASE}/weekly/occurrences/2026-05-05", body={"skip": False}, token=CUSTOMER_TOKEN)
    assert (taken_back.status_code, taken_back.json_body) == (200, FAILED_ON_TUESDAY)
    assert tuesday(shop) == FAILED_ON_TUESDAY


def test_a_skipped_failed_date_stays_skipped_after_a_replacement(shop):
    fail_tuesday(shop)
    assert (
        shop.put(f"{BASE}/weekly/occurrences/2026-05-05", body={"skip": True}, token=CUSTOMER_TOKEN).status_code == 200
    )
    assert put_standing(shop, items=[{"id": "beer", "count": 1}]).status_code == 200
    assert run_placer()["placed"] == 0
    assert tuesday(shop)["status"] == "SKIPPED"
    assert own_deliveries(shop) == []


def test_a_placed_date_still_cannot_be_skipped(shop):
    put_standing(shop)
    assert run_placer()["placed"] == 1
    refused = shop.put(f"{BASE}/weekly/occurrences/2026-05-05", body={"skip": True}, token=CUSTOMER_TOKEN)
    assert refused.status_code == 400
    assert refused.json_body["type"].endswith("invalid-transition")
    assert refused.json_body["detail"] == "2026-05-05 was placed; amend or cancel its delivery instead"


def test_a_failed_date_the_rules_then_deliver_nothing_on_lists_as_undeliverable(shop):
    """decisions §17: UNDELIVERABLE from the moment the rules say so, in every listing; only placed dates stay as
    they are. An audit found it still listed FAILED."""
    fail_tuesday(shop)
    assert shop.patch("/account/settings/deliveries", {"dates_with_no_delivery": ["2026-05-05"]}).status_code == 200
    undeliverable = {
        "date": "2026-05-05",
        "status": "UNDELIVERABLE",
        "place_at": "2026-05-03T23:59:00+00:00",
        "errors": [{"path": "scheduled", "message": "is a date on which the supplier delivers none of it"}],
    }
    assert {**tuesday(shop), "place_at": undeliverable["place_at"]} == undeliverable
    assert shop.patch("/account/settings/deliveries", {"dates_with_no_delivery": None}).status_code == 200
    assert tuesday(shop) == FAILED_ON_TUESDAY


def test_occurrences_from_the_calendars_last_days_end_at_its_end(shop):
    """The default `to` is `from` + 27 days, never past 9999-12-31 (an audit found a 500)."""
    assert put_standing(shop).status_code == 200
    listed = occurrences(shop, query="?from=9999-12-30")
    assert listed.status_code == 200
    assert all(o["date"] >= "9999-12-30" for o in listed.json_body["occurrences"])
    assert occurrences(shop, query="?from=9999-12-31&to=9999-12-31").status_code == 200
    assert occurrences(shop, query="?from=10000-01-01").status_code == 400
