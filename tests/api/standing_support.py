"""Builders shared by the standing-order tests (decisions §17)."""

from .deliveries_helpers import CUSTOMER_TOKEN, USER

BASE = "/customer/standing-orders"


def standing(**fields) -> dict:
    """A Tuesday-and-Friday standing order of 3 beers from Monday 2026-05-04 on."""
    return {
        "items": [{"id": "beer", "count": 3}],
        "weekdays": [2, 5],
        "starts_on": "2026-05-04",
        "user": USER,
        **fields,
    }


def put_standing(api, standing_id="weekly", token=CUSTOMER_TOKEN, **fields):
    return api.put(f"{BASE}/{standing_id}", body=standing(**fields), token=token)


def occurrences(api, standing_id="weekly", query="", token=CUSTOMER_TOKEN):
    return api.get(f"{BASE}/{standing_id}/occurrences{query}", token=token)


def run_placer():
    """One run of the placing job, as the schedule or the `make run` loop makes it."""
    from chalicelib.jobs import standing_order_turns
    from chalicelib.service import clock

    return standing_order_turns.place_due(clock.after(60))
