"""The claims worklist (decisions §18): GET /claims lists one status's claims (OPEN by default), optionally of one
customer, oldest first by when each entered the status, paged with full pages and a cursor bound to its filters;
GET /account/claims counts the OPEN ones and names the oldest."""

import pytest

from tests.conftest import OTHER_TOKEN, clock_at, problem_paths

from .claim_support import accepted, answer, claim, claimed, line, received, withdraw
from .deliveries_helpers import CUSTOMER_TOKEN, NOW, OTHER_CUSTOMER_TOKEN, place, shop  # noqa: F401


def entry(delivery_id, number, status="OPEN", opened="09:30", since=None, customer="c1") -> dict:
    return {
        "delivery_id": delivery_id,
        "customer_id": customer,
        "number": number,
        "status": status,
        "opened_at": f"2026-05-04T{opened}:00.000Z",
        "since": f"2026-05-04T{since or opened}:00.000Z",
    }


@pytest.fixture
def clock(monkeypatch):
    return clock_at(monkeypatch, NOW)


def test_the_worklist_lists_open_claims_oldest_first_and_answered_ones_by_their_answer(shop, clock):
    first = received(shop, body={"items": [line("beer", 1)]})  # 09:30
    clock.advance(60)
    second = received(shop)
    claimed(shop, second["id"], line("beer", 1))  # 09:31
    clock.advance(60)
    claimed(shop, first["id"], line("water", 1))  # 09:32
    assert shop.get("/claims").data == {
        "claims": [entry(first["id"], 1), entry(second["id"], 1, opened="09:31"), entry(first["id"], 2, opened="09:32")]
    }
    clock.advance(60)
    answer(shop, first["id"], 2, accepted("water", 1))  # 09:33
    clock.advance(60)
    answer(shop, first["id"], 1, accepted("beer", 1))  # 09:34
    clock.advance(60)
    withdraw(shop, second["id"], 1)  # 09:35
    assert shop.get("/claims?status=OPEN").data == {"claims": []}
    assert shop.get("/claims?status=ACCEPTED").data == {
        "claims": [
            entry(first["id"], 2, "ACCEPTED", opened="09:32", since="09:33"),
            entry(first["id"], 1, "ACCEPTED", since="09:34"),
        ]
    }
    assert shop.get("/claims?status=WITHDRAWN").data["claims"] == [
        entry(second["id"], 1, "WITHDRAWN", opened="09:31", since="09:35")
    ]
    assert shop.get("/claims?status=DECLINED").data == {"claims": []}
    assert shop.get("/claims?status=PARTIALLY_ACCEPTED").data == {"claims": []}


def test_the_worklist_of_one_customer(shop, clock):
    mine = received(shop, body={"items": [line("beer", 1)]})
    theirs = place(shop, [{"id": "beer", "count": 3}], token=OTHER_CUSTOMER_TOKEN)
    shop.post(f"/customer/deliveries/{theirs['id']}/receive", {}, token=OTHER_CUSTOMER_TOKEN)
    clock.advance(60)
    claimed(shop, theirs["id"], line("beer", 1), token=OTHER_CUSTOMER_TOKEN)
    assert [e["delivery_id"] for e in shop.get("/claims").data["claims"]] == [mine["id"], theirs["id"]]
    assert shop.get("/claims?customer_id=c2").data == {
        "claims": [entry(theirs["id"], 1, opened="09:31", customer="c2")]
    }
    assert shop.get("/claims?customer_id=c1&status=OPEN").data == {"claims": [entry(mine["id"], 1)]}
    assert shop.get("/claims?customer_id=nobody").data == {"claims": []}


def test_pages_are_full_and_a_cursor_is_bound_to_its_filters(shop, clock):
    opened = []
    for _ in range(5):
        delivery = received(shop, body={"items": [line("beer", 1)]})
        opened.append(delivery["id"])
        clock.advance(1)
    first = shop.get("/claims?limit=2").data
    assert [e["delivery_id"] for e in first["claims"]] == opened[:2] and first["cursor"]
    # A claim opened while paging is met at the end, never twice.
    late = received(shop, body={"items": [line("beer", 1)]})
    second = shop.get(f"/claims?limit=2&cursor={first['cursor']}").data
    assert [e["delivery_id"] for e in second["claims"]] == opened[2:4]
    third = shop.get(f"/claims?limit=2&cursor={second['cursor']}").data
    assert [e["delivery_id"] for e in third["claims"]] == [opened[4], late["id"]] and "cursor" not in third
    assert "cursor" not in shop.get("/claims?limit=6").data
    for query in ("status=ACCEPTED", "customer_id=c1", "status=OPEN&customer_id=c1"):
        response = shop.get(f"/claims?limit=2&{query}&cursor={first['cursor']}")
        assert (response.status_code, problem_paths(response)) == (400, ["cursor"]), query
    assert shop.get(f"/claims?limit=2&status=OPEN&cursor={first['cursor']}").status_code == 200  # OPEN: the default
    by_customer = shop.get("/claims?limit=2&customer_id=c1").data["cursor"]
    assert shop.get(f"/claims?limit=2&cursor={by_customer}").status_code == 400
    assert shop.get(f"/claims?cursor={first['cursor']}", token=OTHER_TOKEN).status_code == 400


@pytest.mark.parametrize(
    "query, paths",
    [
        ("status=open", ["status"]),
        ("status=PENDING", ["status"]),
        ("limit=0", ["limit"]),
        ("limit=101", ["limit"]),
        ("cursor=nope", ["cursor"]),
        ("customer_id=a%20b", ["customer_id"]),
        ("limit=x&status=x", ["limit", "status"]),
    ],
)
def test_wrong_parameters_are_named(shop, query, paths):
    response = shop.get(f"/claims?{query}")
    assert (response.status_code, problem_paths(response)) == (400, paths)


def test_customer_tokens_may_not_read_the_worklist(shop):
    assert shop.get("/claims", token=CUSTOMER_TOKEN).status_code == 403
    assert shop.get("/account/claims", token=CUSTOMER_TOKEN).status_code == 403


def test_the_overview_counts_open_claims_and_names_the_oldest(shop, clock):
    assert shop.get("/account/claims").data == {"open": 0, "oldest_open": None}
    first = received(shop, body={"items": [line("beer", 1)]})
    clock.advance(60)
    claimed(shop, first["id"], line("water", 1))
    assert shop.get("/account/claims").data == {
        "open": 2,
        "oldest_open": {"delivery_id": first["id"], "number": 1, "since": "2026-05-04T09:30:00.000Z"},
    }
    answer(shop, first["id"], 1, accepted("beer", 0, "NONE"), message="no")
    assert shop.get("/account/claims").data == {
        "open": 1,
        "oldest_open": {"delivery_id": first["id"], "number": 2, "since": "2026-05-04T09:31:00.000Z"},
    }
    withdraw(shop, first["id"], 2)
    assert shop.get("/account/claims").data == {"open": 0, "oldest_open": None}
    assert shop.get("/account/claims", token=OTHER_TOKEN).data == {"open": 0, "oldest_open": None}
    refused = claim(shop, first["id"], line("beer", 100))  # a refused claim counts nothing
    assert refused.status_code == 400 and shop.get("/account/claims").data["open"] == 0
