"""Standing orders, round 2 (decisions §17 as it changed): a date placed once per customer and id whatever was
deleted and written again, placing moments that follow rule changes within a minute, UNDELIVERABLE dates, the
supplier's pause, resume and end, and the PUT that no date of the next 92 days could ever go on."""

import datetime as dt

from chalicelib.service import clock
from chalicelib.store import keys, table
from tests.conftest import problem_paths

from .deliveries_helpers import BEER, CUSTOMER_TOKEN, WINE, put_customer, put_product, put_settings, shop  # noqa: F401
from .standing_support import BASE, occurrences, put_standing, run_placer

TUESDAYS = {"2": {"lead_days": 1, "cutoff": "14:00"}}  # each Tuesday's cutoff: Monday 14:00 (UTC)


def at(moment: str) -> None:
    clock.current().set(dt.datetime.fromisoformat(moment))


def statuses(api, query="?to=2026-05-31", standing_id="weekly", token=CUSTOMER_TOKEN):
    response = occurrences(api, standing_id, query, token=token)
    assert response.status_code == 200, response.data
    return {o["date"]: o["status"] for o in response.data["occurrences"]}


def deliveries(api) -> list[dict]:
    return api.get("/customer/deliveries", token=CUSTOMER_TOKEN).json_body["deliveries"]


# --- a date placed at most once per customer and id (decisions §17) ---


def test_a_standing_order_deleted_and_written_again_never_places_a_placed_date_again(shop):
    put_standing(shop)
    assert run_placer()["placed"] == 1  # Tuesday 2026-05-05, placed at once
    assert shop.delete(f"{BASE}/weekly", token=CUSTOMER_TOKEN).status_code == 204
    assert put_standing(shop, items=[{"id": "beer", "count": 5}]).status_code == 200  # as bars' apps edit
    assert run_placer()["placed"] == 0
    assert [d["id"] for d in deliveries(shop)] == [1]
    first = occurrences(shop).json_body["occurrences"][0]
    assert first == {
        "date": "2026-05-05",
        "status": "PLACED",
        "place_at": "2026-05-03T23:59:00+00:00",
        "delivery_ids": [1],
    }
    at("2026-05-06T23:59:00+00:00")  # Friday's moment: the new standing order places it, with its own count
    assert run_placer()["placed"] == 1
    friday = shop.get("/customer/deliveries/2", token=CUSTOMER_TOKEN).json_body
    assert friday["request"]["items"][0]["count"] == 5 and friday["standing_order"]["date"] == "2026-05-08"


def test_the_supplier_deleting_and_the_bar_writing_again_places_nothing_twice(shop):
    put_standing(shop)
    run_placer()
    assert shop.delete("/customers/c1/standing-orders/weekly").status_code == 204
    put_standing(shop)
    run_placer()
    assert [d["id"] for d in deliveries(shop)] == [1]
    assert statuses(shop, "?to=2026-05-05") == {"2026-05-05": "PLACED"}


# --- placing moments follow the delivery rules as they stand, within a minute (decisions §17) ---


def _weekly_tuesdays(api) -> None:
    """Written Monday 2026-05-04 09:30 UTC; Tuesday 05-05 is placed at once, 05-12's moment is Saturday 14:00."""
    put_settings(delivery_days=TUESDAYS)
    put_standing(api, weekdays=[2])
    assert run_placer()["placed"] == 1
    at("2026-05-07T10:00:00+00:00")  # Thursday: the standing order's next look is Friday 10:00
    assert run_placer()["placed"] == 0


def test_a_cutoff_brought_forward_is_acted_on_within_a_minute(shop):
    """Christmas-style: 12 May's orders close on Friday 12:00; the new placing moment (Wednesday) has passed and
    the cutoff has not, so the date is placed at once, not at the moment computed before (Saturday)."""
    _weekly_tuesdays(shop)
    early = {"2026-05-12": {"lead_days": 4, "cutoff": "12:00"}}
    assert shop.patch("/account/settings/deliveries", {"delivery_date_overrides": early}).status_code == 200
    clock.current().advance(30)
    assert run_placer()["placed"] == 1
    assert statuses(shop, "?from=2026-05-12&to=2026-05-12") == {"2026-05-12": "PLACED"}
    assert occurrences(shop, query="?from=2026-05-12&to=2026-05-12").json_body["occurrences"][0]["place_at"] == (
        "2026-05-06T12:00:00+00:00"
    )


def test_a_cutoff_brought_into_the_past_leaves_the_date_missed_never_placed_late(shop):
    _weekly_tuesdays(shop)
    shut = {"2026-05-12": {"lead_days": 7, "cutoff": "12:00"}}  # its cutoff: Tuesday 05-05, gone by
    shop.patch("/account/settings/deliveries", {"delivery_date_overrides": shut})
    assert run_placer()["placed"] == 0
    assert statuses(shop, "?from=2026-05-12&to=2026-05-12") == {"2026-05-12": "MISSED"}


def test_a_customers_rule_change_is_acted_on_within_a_minute(shop):
    _weekly_tuesdays(shop)
    response = shop.patch("/customers/c1", {"delivery_days": {"2": {"lead_days": 4, "cutoff": "12:00"}}})
    assert response.status_code == 200, response.data
    clock.current().advance(59)
    assert run_placer()["placed"] == 1
    assert [d["request"]["scheduled"] for d in deliveries(shop)][0] == {"date": "2026-05-12"}


def test_a_products_rule_change_is_acted_on_within_a_minute(shop):
    _weekly_tuesdays(shop)
    put_product(shop, "beer", {**BEER, "delivery_days": {"2": {"lead_days": 4, "cutoff": "12:00"}}})
    clock.current().advance(59)
    assert run_placer()["placed"] == 1


def test_a_product_back_in_stock_with_a_stricter_cutoff_is_acted_on_within_a_minute(shop):
    put_product(shop, "wine", {**WINE, "delivery_days": {"2": {"lead_days": 4, "cutoff": "12:00"}}})
    put_settings(delivery_days=TUESDAYS)
    put_standing(shop, weekdays=[2], items=[{"id": "beer", "count": 1}, {"id": "wine", "count": 1}])
    run_placer()  # 05-05, the wine left out (out of stock)
    at("2026-05-07T10:00:00+00:00")
    run_placer()
    put_product(shop, "wine", {**WINE, "status": "ACTIVE", "delivery_days": {"2": {"lead_days": 4, "cutoff": "12:00"}}})
    clock.current().advance(59)
    assert run_placer()["placed"] == 1
    (latest, _) = deliveries(shop)
    assert [
        i["id"]
        for i in shop.get(f"/customer/deliveries/{latest['id']}", token=CUSTOMER_TOKEN).json_body["request"]["items"]
    ] == ["beer", "wine"]


def test_a_product_deleted_and_made_again_with_a_stricter_cutoff_is_acted_on_within_a_minute(shop):
    """An audit found the moment missed: a product made anew was taken to name no line, but a line still names it."""
    juice = {"status": "ACTIVE", "category": "drinks", "name": "Juice", "price": 200}
    put_product(shop, "juice", juice)
    put_standing(shop, items=[{"id": "beer", "count": 1}, {"id": "juice", "count": 2}], starts_on="2026-05-06")
    assert shop.delete("/products/juice").status_code == 204
    at("2026-05-04T09:31:00+00:00")
    put_product(
        shop, "juice", {**juice, "delivery_date_overrides": {"2026-05-08": {"lead_days": 4, "cutoff": "12:00"}}}
    )
    clock.current().advance(59)
    assert run_placer()["placed"] == 1
    assert statuses(shop, "?from=2026-05-08&to=2026-05-08") == {"2026-05-08": "PLACED"}


def test_a_rule_change_committed_while_the_standing_order_is_being_placed_is_acted_on_within_a_minute(
    shop, monkeypatch
):
    """An audit found it missed: the look again left alone a standing order that was due, whose turn then queued
    its next moment from the rules it had read before the change."""
    from chalicelib.service import standing_placing
    from chalicelib.store import standing_orders

    put_standing(shop)  # Tuesdays and Fridays: Tuesday 05-05 is due at once, Friday 05-08 on Wednesday
    read_context, changed = standing_placing._context, []

    def context_then_a_rule_change(item, stored):
        context = read_context(item, stored)
        if not changed:  # the supplier's change commits after this turn read the rules, and its look again runs
            early = {"2026-05-08": {"lead_days": 4, "cutoff": "12:00"}}  # Friday's moment: gone by, cutoff at noon
            changed.append(shop.patch("/account/settings/deliveries", {"delivery_date_overrides": early}))
            (recheck,) = [due for due in standing_orders.due(clock.now(), 100) if due.recheck]
            standing_placing.recheck(recheck)
        return context

    monkeypatch.setattr(standing_placing, "_context", context_then_a_rule_change)
    assert run_placer()["placed"] == 1 and changed[0].status_code == 200  # 05-05, with the rules read before
    monkeypatch.setattr(standing_placing, "_context", read_context)
    clock.current().advance(59)
    assert run_placer()["placed"] == 1
    assert statuses(shop, "?from=2026-05-05&to=2026-05-08") == {"2026-05-05": "PLACED", "2026-05-08": "PLACED"}


def test_an_imported_rule_change_of_status_is_acted_on_within_a_minute(shop):
    from chalicelib.jobs import import_turns

    put_product(shop, "wine", {**WINE, "delivery_days": {"2": {"lead_days": 4, "cutoff": "12:00"}}})
    put_settings(delivery_days=TUESDAYS)
    put_standing(shop, weekdays=[2], items=[{"id": "beer", "count": 1}, {"id": "wine", "count": 1}])
    run_placer()
    at("2026-05-07T10:00:00+00:00")
    run_placer()
    csv = "Item ID;Item name;Category ID;Price;Status\nwine;Red Wine;drinks;9,00;ACTIVE\n"
    response = shop.request(
        "POST", "/imports/products", raw=csv.encode(), headers={"Content-Type": "text/csv; charset=utf-8"}
    )
    assert response.status_code == 202, response.data
    import_turns.advance_imports(clock.after(60))
    clock.current().advance(59)
    assert run_placer()["placed"] == 1


def test_a_change_that_cannot_bring_a_moment_forward_queues_no_look_again(shop):
    put_standing(shop)
    recheck = table.to_item(keys.standing_recheck_key("acme"))
    shop.patch("/account/settings/deliveries", {"allow_delivery_comments": False, "allow_product_comments": False})
    put_product(shop, "beer", {**BEER, "price": 999})
    shop.patch("/customers/c1", {"price_group": "gold"})
    assert "Item" not in table.client().get_item(TableName=table.name(), Key=recheck)
    shop.patch("/account/settings/deliveries", {"dates_with_no_delivery": ["2026-12-25"]})
    assert "Item" in table.client().get_item(TableName=table.name(), Key=recheck)
    run_placer()
    assert "Item" not in table.client().get_item(TableName=table.name(), Key=recheck)  # done


# --- UNDELIVERABLE (decisions §17) ---


def test_christmas_and_new_year_are_undeliverable_from_the_moment_the_rules_say_so(shop):
    at("2026-12-01T09:00:00+00:00")
    put_standing(shop, weekdays=[5], starts_on="2026-12-01")  # Fridays: 25 Dec and 1 Jan among them
    assert set(statuses(shop, "?from=2026-12-20&to=2027-01-08").values()) == {"PLANNED"}
    shop.patch("/account/settings/deliveries", {"dates_with_no_delivery": ["2026-12-25", "2027-01-01"]})
    listed = occurrences(shop, query="?from=2026-12-20&to=2027-01-08").json_body["occurrences"]
    assert [(o["date"], o["status"]) for o in listed] == [
        ("2026-12-25", "UNDELIVERABLE"),
        ("2027-01-01", "UNDELIVERABLE"),
        ("2027-01-08", "PLANNED"),
    ]
    assert listed[0]["errors"] == [
        {"path": "scheduled", "message": "is a date on which the supplier delivers none of it"}
    ]
    supplier = shop.get("/customers/c1/standing-orders/weekly/occurrences?from=2026-12-25&to=2026-12-25").json_body
    assert supplier["occurrences"][0]["status"] == "UNDELIVERABLE"
    at("2026-12-30T12:00:00+00:00")
    assert run_placer()["placed"] == 0  # 1 January's moment has come: nothing is placed, nothing moved
    assert deliveries(shop) == []
    assert statuses(shop, "?from=2026-12-25&to=2027-01-01") == {
        "2026-12-25": "UNDELIVERABLE",
        "2027-01-01": "UNDELIVERABLE",
    }


def test_a_weekday_never_delivered_is_undeliverable_and_a_put_of_only_such_days_is_refused_naming_weekdays(shop):
    put_settings(delivery_days=TUESDAYS)
    refused = put_standing(shop, weekdays=[3])  # Wednesdays: never delivered
    assert refused.status_code == 400
    assert problem_paths(refused) == ["weekdays"]
    assert refused.data["errors"][0]["message"] == (
        "the supplier delivers none of it on any of its dates in the next 92 days"
    )
    assert shop.get(f"{BASE}/weekly", token=CUSTOMER_TOKEN).status_code == 404
    written = put_standing(shop, weekdays=[2, 3])
    assert written.status_code == 200
    assert statuses(shop, "?to=2026-05-13") == {
        "2026-05-05": "PLANNED",
        "2026-05-06": "UNDELIVERABLE",
        "2026-05-12": "PLANNED",
        "2026-05-13": "UNDELIVERABLE",
    }


def test_a_shape_problem_hides_none_of_the_items_catalogue_problems(shop):
    """decisions §3: every problem at once, as for an order (an audit found an unknown product hidden behind a
    weekday of 9)."""
    refused = put_standing(shop, weekdays=[9], items=[{"id": "nope", "count": 1}, {"id": "beer", "count": 1.5}])
    assert (refused.status_code, problem_paths(refused)) == (400, ["weekdays[0]", "items[0].id", "items[1].count"])
    repeated = put_standing(shop, weekdays=[2, 2], items=[{"id": "nope", "count": 1}])
    assert problem_paths(repeated) == ["weekdays", "items[0].id"]


def test_the_next_92_days_count_from_today_for_an_order_that_starts_within_them(shop):
    """decisions §17: every counted date in the next 92 days undeliverable → 400 naming weekdays, also when the
    standing order starts later within them (an audit found the window counted from starts_on)."""
    fridays = ["2026-07-03", "2026-07-10", "2026-07-17", "2026-07-24", "2026-07-31"]  # today 2026-05-04: up to 08-03
    put_settings(dates_with_no_delivery=fridays)
    refused = put_standing(shop, weekdays=[5], starts_on="2026-07-03")
    assert (refused.status_code, problem_paths(refused)) == (400, ["weekdays"])
    assert put_standing(shop, weekdays=[5], starts_on="2026-06-26").status_code == 200  # 26 June is delivered
    later = put_standing(shop, "later", weekdays=[5], starts_on="2026-09-04")  # beyond them: its own first 92 days
    assert later.status_code == 200


def test_a_line_with_a_no_delivery_date_of_its_own_is_left_out_and_the_rest_placed(shop):
    put_product(shop, "beer", {**BEER, "dates_with_no_delivery": ["2026-05-05"]})
    put_standing(shop, items=[{"id": "beer", "count": 1}, {"id": "water", "count": 2}])
    assert run_placer()["placed"] == 1
    first = occurrences(shop).json_body["occurrences"][0]
    assert first["left_out"] == [{"id": "beer", "reason": "NOT_DELIVERABLE"}] and first["status"] == "PLACED"
    assert [
        i["id"] for i in shop.get("/customer/deliveries/1", token=CUSTOMER_TOKEN).json_body["request"]["items"]
    ] == ["water"]


def test_a_deleted_product_is_left_out_as_deleted(shop):
    put_standing(shop, items=[{"id": "beer", "count": 1}, {"id": "cheese", "count": 1}])
    assert shop.delete("/products/cheese").status_code == 204
    run_placer()
    assert occurrences(shop).json_body["occurrences"][0]["left_out"] == [{"id": "cheese", "reason": "DELETED"}]


# --- the supplier pauses, resumes and ends a bar's standing orders (decisions §17) ---


def test_the_supplier_pauses_and_resumes_a_bars_standing_order(shop):
    put_standing(shop)
    paused = shop.patch("/customers/c1/standing-orders/weekly", {"paused": True})
    assert paused.status_code == 200
    assert paused.data["paused"] is True and paused.data["updated"] == "2026-05-04T09:30:00.000Z"
    assert shop.get(f"{BASE}/weekly", token=CUSTOMER_TOKEN).data == paused.data
    assert run_placer()["placed"] == 0
    assert set(statuses(shop, "?to=2026-05-08").values()) == {"PAUSED"}
    clock.current().advance(60)
    again = shop.patch("/customers/c1/standing-orders/weekly", {"paused": True})
    assert again.data == paused.data  # the same again changes nothing
    resumed = shop.patch("/customers/c1/standing-orders/weekly", {"paused": False})
    assert resumed.status_code == 200 and resumed.data["paused"] is False
    assert run_placer()["placed"] == 1  # Tuesday's moment passed while paused, its cutoff has not
    entries = [
        e["type"] for e in shop.get("/changes?after=0&limit=1000").json_body["changes"] if "standing" in e["type"]
    ]
    assert entries == ["standing-order.created", "standing-order.updated", "standing-order.updated"]


def test_the_suppliers_pause_refusals(shop):
    put_standing(shop)
    for body, path in (({"paused": "yes"}, "paused"), ({}, "paused"), ({"paused": True, "name": "x"}, "name")):
        refused = shop.patch("/customers/c1/standing-orders/weekly", body)
        assert refused.status_code == 400 and problem_paths(refused) == [path], body
    assert shop.patch("/customers/c1/standing-orders/nope", {"paused": True}).status_code == 404
    assert shop.patch("/customers/nobody/standing-orders/weekly", {"paused": True}).status_code == 404
    assert shop.patch("/customers/c2/standing-orders/weekly", {"paused": True}).status_code == 404
    customer = shop.patch("/customers/c1/standing-orders/weekly", {"paused": True}, token=CUSTOMER_TOKEN)
    assert customer.status_code == 403


def test_the_supplier_ends_a_bars_standing_order_and_its_deliveries_stay(shop):
    put_standing(shop)
    run_placer()
    assert shop.delete("/customers/c1/standing-orders/weekly").status_code == 204
    assert shop.get(f"{BASE}/weekly", token=CUSTOMER_TOKEN).status_code == 404
    assert shop.delete("/customers/c1/standing-orders/weekly").status_code == 404
    assert shop.delete("/customers/nobody/standing-orders/weekly").status_code == 404
    assert [d["id"] for d in deliveries(shop)] == [1]
    at("2026-05-06T23:59:00+00:00")
    assert run_placer()["placed"] == 0
    assert shop.delete(f"{BASE}/weekly", token=CUSTOMER_TOKEN).status_code == 404
    assert shop.delete("/customers/c1/standing-orders/weekly", token=CUSTOMER_TOKEN).status_code == 403


def test_another_customers_standing_order_is_not_the_suppliers_to_reach_under_this_customer(shop):
    put_customer("c3", company="Bar Three")
    put_standing(shop)
    assert shop.delete("/customers/c3/standing-orders/weekly").status_code == 404
    assert shop.get(f"{BASE}/weekly", token=CUSTOMER_TOKEN).status_code == 200
