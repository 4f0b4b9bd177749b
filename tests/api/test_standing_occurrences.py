"""Occurrences of standing orders (decisions §17): the counted dates, their status and placing moment, skips,
and placing each date as the customer would, with a fake clock."""

import datetime as dt

from chalicelib.domain.delivery import Delivery, DeliveryList, SupplierDelivery, SupplierDeliveryList
from chalicelib.domain.standing_orders import OccurrenceList
from chalicelib.service import clock
from tests.conftest import problem_paths

from .deliveries_helpers import CUSTOMER_TOKEN, assert_shape, put_settings, shop  # noqa: F401
from .standing_support import BASE, occurrences, put_standing, run_placer

TUE_FRI = [
    "2026-05-05",
    "2026-05-08",
    "2026-05-12",
    "2026-05-15",
    "2026-05-19",
    "2026-05-22",
    "2026-05-26",
    "2026-05-29",
]


def statuses(api, query="?to=2026-05-15", standing_id="weekly"):
    response = occurrences(api, standing_id, query)
    assert response.status_code == 200, response.data
    return {o["date"]: o["status"] for o in response.data["occurrences"]}


def at(moment: str) -> None:
    clock.current().set(dt.datetime.fromisoformat(moment))


def test_the_occurrences_of_the_next_four_weeks(shop):
    put_standing(shop)
    response = occurrences(shop)
    assert response.status_code == 200
    assert_shape(OccurrenceList, response)
    listed = response.data["occurrences"]
    assert [o["date"] for o in listed] == TUE_FRI
    assert listed[0] == {"date": "2026-05-05", "status": "PLANNED", "place_at": "2026-05-03T23:59:00+00:00"}
    assert listed[1]["place_at"] == "2026-05-06T23:59:00+00:00"


def test_place_at_has_the_accounts_offset(shop):
    put_settings(
        timezone="Europe/Helsinki",
        delivery_days={"2": {"lead_days": 1, "cutoff": "14:00"}, "5": {"lead_days": 1, "cutoff": "14:00"}},
    )
    put_standing(shop, place_days_ahead=3)
    (first, second) = occurrences(shop, query="?to=2026-05-08").json_body["occurrences"]
    assert first == {"date": "2026-05-05", "status": "PLANNED", "place_at": "2026-05-01T14:00:00+03:00"}
    assert second["place_at"] == "2026-05-04T14:00:00+03:00"


def test_the_range_is_at_most_92_days_and_names_the_parameter(shop):
    put_standing(shop)
    assert occurrences(shop, query="?from=2026-05-04&to=2026-08-04").status_code == 200
    refused = occurrences(shop, query="?from=2026-05-04&to=2026-08-05")
    assert refused.status_code == 400
    assert problem_paths(refused) == ["to"]
    assert problem_paths(occurrences(shop, query="?from=tomorrow")) == ["from"]
    assert occurrences(shop, "nope").status_code == 404


def test_dates_before_the_first_write_do_not_count(shop):
    put_standing(shop, starts_on="2026-04-01")
    assert list(statuses(shop, "?from=2026-04-01&to=2026-05-08")) == ["2026-05-05", "2026-05-08"]


def test_every_n_weeks_and_ends_on(shop):
    put_standing(shop, every_weeks=2, ends_on="2026-05-26")
    assert list(statuses(shop, "?to=2026-06-30")) == ["2026-05-05", "2026-05-08", "2026-05-19", "2026-05-22"]


def test_a_due_date_is_placed_as_the_customer_would_with_the_standing_order_on_the_delivery(shop):
    put_standing(shop)
    assert run_placer()["placed"] == 1  # 2026-05-05's moment has passed, its cutoff has not: at once
    first = occurrences(shop).json_body["occurrences"][0]
    assert first == {
        "date": "2026-05-05",
        "status": "PLACED",
        "place_at": "2026-05-03T23:59:00+00:00",
        "delivery_ids": [1],
    }
    read = shop.get("/customer/deliveries/1", token=CUSTOMER_TOKEN)
    assert_shape(Delivery, read)
    delivery = read.json_body
    assert delivery["request"]["scheduled"] == {"date": "2026-05-05"}
    assert delivery["request"]["items"][0]["count"] == 3
    assert list(delivery)[-1] == "standing_order"
    assert delivery["standing_order"] == {"id": "weekly", "date": "2026-05-05"}
    assert_shape(SupplierDelivery, shop.get("/deliveries/1"))
    assert_shape(SupplierDeliveryList, shop.get("/deliveries"))
    assert_shape(DeliveryList, shop.get("/customer/deliveries", token=CUSTOMER_TOKEN))
    assert shop.get("/deliveries").json_body["deliveries"][0]["standing_order"] == {
        "id": "weekly",
        "date": "2026-05-05",
    }
    supplier = shop.get("/deliveries/1").json_body
    assert list(supplier)[-2:] == ["integration", "standing_order"]
    for page in ("/deliveries", "/deliveries?integration=PENDING", "/deliveries?status=REQUESTED"):
        assert list(shop.get(page).json_body["deliveries"][0])[-2:] == ["integration", "standing_order"], page
    assert run_placer()["placed"] == 0  # nothing else is due yet
    at("2026-05-06T23:58:59+00:00")
    assert run_placer()["placed"] == 0
    at("2026-05-06T23:59:00+00:00")
    assert run_placer()["placed"] == 1
    assert statuses(shop)["2026-05-08"] == "PLACED"
    # The placed delivery is an ordinary one: the customer cancels it.
    assert shop.post("/customer/deliveries/2/cancel", token=CUSTOMER_TOKEN).status_code == 200


def test_an_order_without_a_standing_order_has_no_such_field(shop):
    response = shop.post(
        "/customer/deliveries",
        body={"items": [{"id": "beer", "count": 1}], "user": {"name": "A", "email": "a@example.com"}},
        token=CUSTOMER_TOKEN,
    )
    assert "standing_order" not in response.json_body["deliveries"][0]


def test_an_out_of_stock_line_is_left_out_and_never_placed_as_a_second_delivery(shop):
    """decisions §17: one delivery per date; before, the wine went as an extra "as soon as possible" delivery."""
    put_standing(shop, items=[{"id": "beer", "count": 1}, {"id": "wine", "count": 2}])
    assert run_placer()["placed"] == 1
    first = occurrences(shop).json_body["occurrences"][0]
    assert first == {
        "date": "2026-05-05",
        "status": "PLACED",
        "place_at": "2026-05-03T23:59:00+00:00",
        "delivery_ids": [1],
        "left_out": [{"id": "wine", "reason": "OUT_OF_STOCK"}],
    }
    (delivery,) = shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).json_body["deliveries"]
    assert delivery["request"]["scheduled"] == {"date": "2026-05-05"}
    assert [
        i["id"] for i in shop.get("/customer/deliveries/1", token=CUSTOMER_TOKEN).json_body["request"]["items"]
    ] == ["beer"]


def test_a_date_whose_cutoff_passed_unplaced_is_missed(shop):
    put_standing(shop)
    at("2026-05-06T00:00:00+00:00")
    assert statuses(shop, "?from=2026-05-05&to=2026-05-08") == {"2026-05-05": "MISSED", "2026-05-08": "PLANNED"}
    assert run_placer()["placed"] == 0  # the missed date is not placed late


def test_a_paused_standing_order_places_nothing(shop):
    put_standing(shop, paused=True)
    assert set(statuses(shop).values()) == {"PAUSED"}
    assert run_placer()["due"] == 0
    put_standing(shop, paused=False)
    assert run_placer()["placed"] == 1


def test_skip_a_date_and_take_it_back(shop):
    put_standing(shop)
    path = f"{BASE}/weekly/occurrences/2026-05-12"
    skipped = shop.put(path, body={"skip": True}, token=CUSTOMER_TOKEN)
    assert skipped.status_code == 200
    assert skipped.json_body == {"date": "2026-05-12", "status": "SKIPPED", "place_at": "2026-05-10T23:59:00+00:00"}
    at("2026-05-11T00:00:00+00:00")
    run_placer()
    assert statuses(shop, "?from=2026-05-12&to=2026-05-15") == {"2026-05-12": "SKIPPED", "2026-05-15": "PLANNED"}
    back = shop.put(path, body={"skip": False}, token=CUSTOMER_TOKEN)
    assert back.json_body["status"] == "PLANNED"
    assert run_placer()["placed"] == 1  # its moment has passed and its cutoff has not: placed at once
    assert statuses(shop, "?from=2026-05-12&to=2026-05-12") == {"2026-05-12": "PLACED"}


def test_skip_refusals(shop):
    put_standing(shop)
    run_placer()
    placed = shop.put(f"{BASE}/weekly/occurrences/2026-05-05", body={"skip": True}, token=CUSTOMER_TOKEN)
    assert placed.status_code == 400
    assert placed.json_body["type"].endswith("invalid-transition")
    assert placed.json_body["detail"] == "2026-05-05 was placed; amend or cancel its delivery instead"
    for day in ("2026-05-13", "2026-05-01", "someday"):  # not a Tuesday or Friday; before starts_on; not a date
        assert (
            shop.put(f"{BASE}/weekly/occurrences/{day}", body={"skip": True}, token=CUSTOMER_TOKEN).status_code == 404
        )
    assert shop.put(f"{BASE}/nope/occurrences/2026-05-12", body={"skip": True}, token=CUSTOMER_TOKEN).status_code == 404
    bad = shop.put(f"{BASE}/weekly/occurrences/2026-05-12", body={"skip": "yes"}, token=CUSTOMER_TOKEN)
    assert bad.status_code == 400
    assert problem_paths(bad) == ["skip"]


def test_a_replacement_keeps_placed_dates_and_the_skips_that_still_count(shop):
    put_standing(shop)
    run_placer()
    shop.put(f"{BASE}/weekly/occurrences/2026-05-12", body={"skip": True}, token=CUSTOMER_TOKEN)
    shop.put(f"{BASE}/weekly/occurrences/2026-05-15", body={"skip": True}, token=CUSTOMER_TOKEN)
    put_standing(shop, weekdays=[2], items=[{"id": "beer", "count": 5}])
    assert statuses(shop, "?to=2026-05-19") == {
        "2026-05-05": "PLACED",
        "2026-05-12": "SKIPPED",
        "2026-05-19": "PLANNED",
    }
    put_standing(shop, weekdays=[2, 5])
    assert statuses(shop, "?to=2026-05-15")["2026-05-15"] == "PLANNED"  # its skip went with the Friday


def test_a_date_with_no_delivery_is_undeliverable_from_the_start_and_never_placed_or_moved(shop):
    put_settings(dates_with_no_delivery=["2026-05-05"])
    put_standing(shop)
    first, second = occurrences(shop, query="?to=2026-05-08").json_body["occurrences"]
    assert first == {
        "date": "2026-05-05",
        "status": "UNDELIVERABLE",
        "place_at": "2026-05-03T23:59:00+00:00",
        "errors": [{"path": "scheduled", "message": "is a date on which the supplier delivers none of it"}],
    }
    assert second["status"] == "PLANNED"
    assert run_placer() == {"due": 0, "left": 0, "placed": 0, "failed": 0, "busy": 0, "crashed": 0}
    assert shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).json_body["deliveries"] == []
    at("2026-05-06T23:59:00+00:00")
    assert run_placer()["placed"] == 1  # the next date is not held up, and nothing moved to it
    assert [
        o["status"] for o in occurrences(shop, query="?from=2026-05-05&to=2026-05-08").json_body["occurrences"]
    ] == ["UNDELIVERABLE", "PLACED"]
    assert not [e for e in shop.get("/changes?after=0&limit=1000").json_body["changes"] if e["type"].endswith("failed")]


def test_an_item_that_became_inactive_is_left_out_with_its_reason(shop):
    put_standing(shop, items=[{"id": "cheese", "count": 1}, {"id": "beer", "count": 2}])
    shop.put("/products/cheese", body={"status": "INACTIVE", "category": "drinks", "name": "Cheddar", "order_by": "kg"})
    run_placer()
    first = occurrences(shop).json_body["occurrences"][0]
    assert first["status"] == "PLACED"
    assert first["left_out"] == [{"id": "cheese", "reason": "INACTIVE"}]
    assert "errors" not in first
    assert [
        i["id"] for i in shop.get("/customer/deliveries/1", token=CUSTOMER_TOKEN).json_body["request"]["items"]
    ] == ["beer"]


def test_every_line_left_out_fails_the_date(shop):
    put_standing(shop)
    shop.put("/products/beer", body={"status": "INACTIVE", "category": "drinks", "name": "Pale Ale"})
    assert run_placer()["failed"] == 1
    first = occurrences(shop).json_body["occurrences"][0]
    assert first["status"] == "FAILED"
    assert first["left_out"] == [{"id": "beer", "reason": "INACTIVE"}]
    assert first["errors"] == [{"path": "items", "message": "none of its lines can go on this date"}]
    skipped = shop.put(f"{BASE}/weekly/occurrences/2026-05-05", body={"skip": True}, token=CUSTOMER_TOKEN)
    assert (skipped.status_code, skipped.json_body["status"]) == (200, "SKIPPED")  # not placed: it may be skipped


def test_the_supplier_reads_occurrences(shop):
    put_standing(shop)
    assert shop.get("/customers/c1/standing-orders/weekly/occurrences?to=2026-05-05").json_body == {
        "occurrences": [{"date": "2026-05-05", "status": "PLANNED", "place_at": "2026-05-03T23:59:00+00:00"}]
    }
    assert shop.get("/customers/nobody/standing-orders/weekly/occurrences").status_code == 404
    assert shop.get("/customers/c2/standing-orders/weekly/occurrences").status_code == 404


def test_at_most_100_skipped_dates_still_to_come(shop):
    put_standing(shop, weekdays=[0, 1, 2, 3, 4, 5, 6])
    first = dt.date(2026, 5, 10)
    for n in range(100):
        day = (first + dt.timedelta(days=n)).isoformat()
        assert (
            shop.put(f"{BASE}/weekly/occurrences/{day}", body={"skip": True}, token=CUSTOMER_TOKEN).status_code == 200
        )
    beyond = shop.put(f"{BASE}/weekly/occurrences/2026-09-01", body={"skip": True}, token=CUSTOMER_TOKEN)
    assert beyond.status_code == 400
    assert problem_paths(beyond) == ["skip"]
    # Taking one back makes room; skips of dates gone by no longer count.
    assert (
        shop.put(f"{BASE}/weekly/occurrences/2026-05-10", body={"skip": False}, token=CUSTOMER_TOKEN).status_code == 200
    )
    assert (
        shop.put(f"{BASE}/weekly/occurrences/2026-09-01", body={"skip": True}, token=CUSTOMER_TOKEN).status_code == 200
    )
    at("2026-05-12T00:00:00+00:00")
    assert (
        shop.put(f"{BASE}/weekly/occurrences/2026-09-02", body={"skip": True}, token=CUSTOMER_TOKEN).status_code == 200
    )
