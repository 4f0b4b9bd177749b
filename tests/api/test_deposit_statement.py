"""The statement of a customer's deposit balances (decisions §15): GET /customers/:id/deposits/movements and
GET /customer/deposits/movements."""

from chalicelib.service import clock
from tests.api.deliveries_helpers import (  # noqa: F401
    CUSTOMER,
    CUSTOMER_TOKEN,
    OTHER_CUSTOMER_TOKEN,
    place,
    respond,
    shop,
)
from tests.api.test_deposit_deliveries import BOTTLE_E, CRATE, CRATE_E, PALLET, PALLET_E, drinks  # noqa: F401
from tests.conftest import problem_paths

STATEMENT = f"/customers/{CUSTOMER}/deposits/movements"


def adjust(api, deposit_id, count, message="m"):
    response = api.post(f"/customers/{CUSTOMER}/deposits", {"id": deposit_id, "count": count, "message": message})
    assert response.status_code == 200, response.data
    return response.data


def statement(api, query="", token=None):
    response = (
        api.get(f"{STATEMENT}{query}")
        if token is None
        else api.get(f"/customer/deposits/movements{query}", token=token)
    )
    assert response.status_code == 200, response.data
    return response.data


def all_movements(api, query=""):
    movements, cursor = [], None
    while True:
        separator = "&" if query else "?"
        page = statement(api, query + (f"{separator}cursor={cursor}" if cursor else ""))
        movements += page["movements"]
        cursor = page.get("cursor")
        if cursor is None:
            return movements


def test_an_adjustment_is_a_movement_with_its_message_and_the_price_then(drinks):
    assert statement(drinks) == {"movements": []}
    adjust(drinks, "crate", 5, "opening balance")
    drinks.put("/deposits/crate", {"name": "Crate II", "price": 200})
    # (the fake clock stands still: newest first comes from the records' own sort keys)
    adjust(drinks, "crate", -2, "two crates broken")
    page = statement(drinks)
    assert page == {
        "movements": [
            {
                "at": "2026-05-04T09:30:00.000Z",
                "id": "crate",
                "name": "Crate II",
                "price": 200,
                "count": -2,
                "message": "two crates broken",
            },
            {
                "at": "2026-05-04T09:30:00.000Z",
                "id": "crate",
                "name": "Crate",
                "price": 150,
                "count": 5,
                "message": "opening balance",
            },
        ]
    }
    assert list(page["movements"][0]) == ["at", "id", "name", "price", "count", "message"]
    assert statement(drinks, token=CUSTOMER_TOKEN) == page


def test_a_receive_is_one_movement_per_type_it_moved_valued_as_the_delivery(drinks):
    delivery = place(
        drinks,
        [{"id": "lager", "count": 1, "bundle": PALLET}],
        empties=[{"id": "crate", "count": 10}, {"id": "pallet", "count": 1}],
    )
    respond(drinks, delivery["id"], {"type": "ACCEPT"})
    drinks.put("/deposits/bottle", {"name": "Bottle", "price": 10})  # after the order: the delivery keeps 8
    assert drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN).status_code == 200
    movements = statement(drinks)["movements"]
    at = "2026-05-04T09:30:00.000Z"
    assert movements == [  # the pallet went out and came back: it moved nothing
        {"at": at, **BOTTLE_E, "count": 800, "delivery_id": delivery["id"]},
        {"at": at, **CRATE_E, "count": 30, "delivery_id": delivery["id"]},
    ]
    assert list(movements[0]) == ["at", "id", "name", "price", "count", "delivery_id"]
    assert "message" not in movements[0] and PALLET_E["id"] not in [m["id"] for m in movements]


def test_a_receive_without_the_suppliers_accept_credits_nothing_and_records_nothing(drinks):
    delivery = place(drinks, [], type="RETURN", empties=[{"id": "crate", "count": 3}])
    assert drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN).status_code == 200
    assert statement(drinks) == {"movements": []}


def test_newest_first_paged_through_a_receive_filtered_by_type(drinks):
    adjust(drinks, "keg", 2, "opening")
    clock.current().advance(60)
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN)
    clock.current().advance(60)
    adjust(drinks, "crate", -1, "correction")
    first = statement(drinks, "?limit=2")
    assert [(m["id"], m["count"]) for m in first["movements"]] == [("crate", -1), ("bottle", 20)]
    second = statement(drinks, f"?limit=2&cursor={first['cursor']}")
    assert [(m["id"], m["count"]) for m in second["movements"]] == [("crate", 1), ("keg", 2)]
    assert "cursor" not in second
    assert [m["at"] for m in first["movements"] + second["movements"]] == [
        "2026-05-04T09:32:00.000Z",
        "2026-05-04T09:31:00.000Z",
        "2026-05-04T09:31:00.000Z",
        "2026-05-04T09:30:00.000Z",
    ]
    # Added while paging: never shown twice, not shown behind the cursor.
    adjust(drinks, "crate", 7, "late")
    assert statement(drinks, f"?limit=2&cursor={first['cursor']}") == second
    crates = statement(drinks, "?deposit=crate")["movements"]
    assert [(m["count"], m.get("delivery_id")) for m in crates] == [(7, None), (-1, None), (1, delivery["id"])]
    assert statement(drinks, "?deposit=pallet") == {"movements": []}
    paged = statement(drinks, "?deposit=crate&limit=1")
    assert statement(drinks, f"?deposit=crate&limit=1&cursor={paged['cursor']}")["movements"] == crates[1:2]


def test_the_movements_add_up_to_the_balances(drinks):
    for count in (5, -3, 100_000):
        adjust(drinks, "crate", count)
    for _ in range(3):
        delivery = place(drinks, [{"id": "lager", "count": 2, "bundle": CRATE}], empties=[{"id": "crate", "count": 1}])
        respond(drinks, delivery["id"], {"type": "ACCEPT"})
        drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN)
    held = {b["id"]: b["balance"] for b in drinks.get(f"/customers/{CUSTOMER}/deposits").data["deposits"]}
    summed = {deposit_id: 0 for deposit_id in held}
    for movement in all_movements(drinks, "?limit=3"):
        summed[movement["id"]] += movement["count"]
    assert summed == held == {"bottle": 120, "crate": 5 - 3 + 100_000 + 3, "keg": 0, "pallet": 0}


def test_bad_queries_and_unknown_customers(drinks):
    response = drinks.get(f"{STATEMENT}?deposit=a%20b")
    assert response.status_code == 400 and problem_paths(response) == ["deposit"]
    response = drinks.get(f"{STATEMENT}?limit=0")
    assert response.status_code == 400 and problem_paths(response) == ["limit"]
    assert drinks.get("/customers/nobody/deposits/movements").status_code == 404
    adjust(drinks, "crate", 1)
    adjust(drinks, "crate", 2)
    cursor = statement(drinks, "?limit=1")["cursor"]
    response = drinks.get(f"{STATEMENT}?limit=1&deposit=crate&cursor={cursor}")  # another query's cursor
    assert response.status_code == 400 and problem_paths(response) == ["cursor"]
    response = drinks.get(f"{STATEMENT}?cursor=garbage")
    assert response.status_code == 400 and problem_paths(response) == ["cursor"]
    # The customer's own page of the same statement is another route: the supplier's cursor is not its (§4), and back.
    response = drinks.get(f"/customer/deposits/movements?limit=1&cursor={cursor}", token=CUSTOMER_TOKEN)
    assert response.status_code == 400 and problem_paths(response) == ["cursor"]
    own = statement(drinks, "?limit=1", token=CUSTOMER_TOKEN)["cursor"]
    response = drinks.get(f"{STATEMENT}?limit=1&cursor={own}")
    assert response.status_code == 400 and problem_paths(response) == ["cursor"]
    assert statement(drinks, f"?limit=1&cursor={own}", token=CUSTOMER_TOKEN)["movements"] == [
        statement(drinks, "?limit=2")["movements"][1]
    ]


def test_who_may_read_which_statement(drinks):
    adjust(drinks, "crate", 1)
    assert drinks.get(STATEMENT, token=CUSTOMER_TOKEN).status_code == 403
    assert drinks.get("/customer/deposits/movements").status_code == 403
    assert statement(drinks, token=OTHER_CUSTOMER_TOKEN) == {"movements": []}
