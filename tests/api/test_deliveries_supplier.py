"""GET /deliveries and GET /deliveries/:id (interface; decisions §4, §8)."""

import pytest

from chalicelib.domain.delivery import SupplierDelivery as Delivery
from chalicelib.domain.delivery import SupplierDeliveryList as DeliveryList
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem

from .deliveries_helpers import assert_shape, place, respond, shop  # noqa: F401


@pytest.fixture
def five(shop):
    """Deliveries 1-5; 2 and 4 accepted, 5 rejected."""
    for _ in range(5):
        place(shop, [{"id": "beer", "count": 1}])
    for delivery_id in (2, 4, 5):
        assert respond(shop, delivery_id, {"type": "ACCEPT"}).status_code == 200
    assert respond(shop, 5, {"type": "REJECT"}).status_code == 200
    return shop


def ids(response):
    return [d["id"] for d in response.data["deliveries"]]


def test_list_is_newest_first_without_items(five):
    response = five.get("/deliveries")
    assert response.status_code == 200
    assert_shape(DeliveryList, response)
    assert ids(response) == [5, 4, 3, 2, 1]
    assert "cursor" not in response.data
    for summary in response.data["deliveries"]:
        full = five.get(f"/deliveries/{summary['id']}").data
        assert "items" not in summary["request"]
        assert summary == {**full, "request": {k: v for k, v in full["request"].items() if k != "items"}}


@pytest.mark.parametrize(
    "status, expected",
    [("REQUESTED", [3, 1]), ("ACCEPTED", [4, 2]), ("REJECTED", [5]), ("CANCELLED", []), ("DELIVERED", [])],
)
def test_status_filter(five, status, expected):
    response = five.get(f"/deliveries?status={status}")
    assert response.status_code == 200
    assert ids(response) == expected
    assert {d["status"] for d in response.data["deliveries"]} <= {status}


def test_a_status_change_moves_the_delivery_between_status_lists(five):
    respond(five, 3, {"type": "ACCEPT"})
    assert ids(five.get("/deliveries?status=REQUESTED")) == [1]
    assert ids(five.get("/deliveries?status=ACCEPTED")) == [4, 3, 2]


@pytest.mark.parametrize("query", ["status=accepted", "status=", "status=PENDING"])
def test_an_unknown_status_is_refused(five, query):
    response = five.get(f"/deliveries?{query}")
    assert response.status_code == 400
    assert problem_paths(response) == ["status"]


def test_pages_follow_the_cursor_and_never_repeat(five):
    first = five.get("/deliveries?limit=2")
    assert ids(first) == [5, 4]
    place(five, [{"id": "beer", "count": 1}])  # added while paging
    second = five.get(f"/deliveries?limit=2&cursor={first.data['cursor']}")
    assert ids(second) == [3, 2]
    third = five.get(f"/deliveries?limit=2&cursor={second.data['cursor']}")
    assert ids(third) == [1]
    assert "cursor" not in third.data


def test_status_pages(five):
    for _ in range(3):
        place(five, [{"id": "beer", "count": 1}])  # 6, 7, 8 REQUESTED
    first = five.get("/deliveries?status=REQUESTED&limit=2")
    assert ids(first) == [8, 7]
    second = five.get(f"/deliveries?status=REQUESTED&limit=2&cursor={first.data['cursor']}")
    assert ids(second) == [6, 3]


def test_a_cursor_belongs_to_its_filter_and_account(five):
    cursor = five.get("/deliveries?status=REQUESTED&limit=1").data["cursor"]
    for path, token in (
        (f"/deliveries?cursor={cursor}", ...),
        (f"/deliveries?status=ACCEPTED&cursor={cursor}", ...),
        (f"/deliveries?status=REQUESTED&cursor={cursor}", OTHER_TOKEN),
        ("/deliveries?cursor=nonsense", ...),
    ):
        response = five.get(path, token=token)
        assert response.status_code == 400
        assert problem_paths(response) == ["cursor"]


def test_limit_is_checked(five):
    assert problem_paths(five.get("/deliveries?limit=0")) == ["limit"]
    assert problem_paths(five.get("/deliveries?limit=101")) == ["limit"]


def test_get_one_delivery_in_full(five):
    response = five.get("/deliveries/2")
    assert response.status_code == 200
    assert_shape(Delivery, response)
    assert response.data["id"] == 2
    assert response.data["status"] == "ACCEPTED"
    assert [i["id"] for i in response.data["request"]["items"]] == ["beer"]
    assert [r["type"] for r in response.data["responses"]] == ["ACCEPT"]
    assert "cancelled" not in response.data


@pytest.mark.parametrize("delivery_id", ["6", "0", "-1", "01", "abc", "1.5", "9999999999999"])
def test_unknown_delivery_is_404(five, delivery_id):
    response = five.get(f"/deliveries/{delivery_id}")
    assert_problem(response, 404, "not-found")


def test_other_accounts_see_nothing(five):
    assert five.get("/deliveries/1", token=OTHER_TOKEN).status_code == 404
    assert five.get("/deliveries", token=OTHER_TOKEN).data == {"deliveries": []}


# --- contention (decisions §8: a 409 only for contention that lasts longer than 5 seconds) ---


def _losing_races(monkeypatch, fake_clock, lost: int, seconds_per_race: float = 0.0):
    """The store answers Stale (another change won) to the first `lost` writes, each race taking
    `seconds_per_race` of the one clock; the service's pauses between attempts are skipped."""
    from chalicelib.service import contention
    from chalicelib.service import write_units as store
    from chalicelib.store import outcomes

    real, calls = store.commit, []

    def change(*args, **kw):
        calls.append(1)
        if len(calls) > lost:
            return real(*args, **kw)
        fake_clock.advance(seconds_per_race)
        return outcomes.Stale()

    monkeypatch.setattr(store, "commit", change)
    monkeypatch.setattr(contention, "back_off", lambda attempt: None)
    return calls


def test_a_response_that_loses_many_races_within_5_seconds_still_gets_in(shop, monkeypatch, fake_clock):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    _losing_races(
        monkeypatch, fake_clock, 60, seconds_per_race=0.08
    )  # more writers than MAX_ATTEMPTS, all within a moment
    response = respond(shop, delivery["id"], {"type": "ACCEPT", "reference": "late"})
    assert (response.status_code, response.data["status"], [r["reference"] for r in response.data["responses"]]) == (
        200,
        "ACCEPTED",
        ["late"],
    )


def test_a_response_contended_for_more_than_5_seconds_is_409_and_writes_nothing(shop, monkeypatch, fake_clock):
    delivery = place(shop, [{"id": "beer", "count": 1}])
    calls = _losing_races(monkeypatch, fake_clock, 10_000, seconds_per_race=1.0)
    response = respond(shop, delivery["id"], {"type": "ACCEPT", "reference": "never"})
    assert (response.status_code, response.data["type"]) == (409, "conflict")
    assert len(calls) >= 30  # at least MAX_ATTEMPTS, and until the timer showed 5 s gone
    assert shop.get(f"/deliveries/{delivery['id']}").data["responses"] == []
