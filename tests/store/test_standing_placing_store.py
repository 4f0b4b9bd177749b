"""Placing standing orders with turns at once, on DynamoDB Local (decisions §17): many bars of one account sharing a
placing moment are placed in one run by concurrent turns, each date once, whatever runs beside it. On that engine
only: moto's in-process transactions are not safe at once."""

import threading

import pytest

from chalicelib.jobs import standing_order_turns
from chalicelib.service import catalogue, clock, delivery_reads, standing_orders
from chalicelib.store import keys, table
from chalicelib.store import standing_orders as store
from tests.conftest import clock_at

from .conftest import ACCOUNT, NOW

pytestmark = pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)
BARS = 40
ADDRESS = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}
WEEKLY = {
    "items": [{"id": "keg", "count": 2}],
    "weekdays": [2, 5],
    "starts_on": "2026-05-04",
    "user": {"name": "Bar", "email": "bar@example.com"},
}


@pytest.fixture
def bars(engine, monkeypatch):
    clock_at(monkeypatch, NOW)  # Monday: Tuesday's moment has passed, its cutoff has not
    monkeypatch.setenv("STANDING_ORDER_WORKERS", "8")
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"})
    catalogue.put_product(
        ACCOUNT, "keg", {"status": "ACTIVE", "category": "drinks", "name": "Keg", "price": 8900}, None
    )
    names = []
    for n in range(BARS):
        bar = f"bar{n:02d}"
        item = {**keys.customer_key(ACCOUNT, bar), "data": {"id": bar, "name": bar, "address": ADDRESS}}
        table.client().put_item(TableName=table.name(), Item=table.to_item(item))
        standing_orders.put_standing_order(ACCOUNT, bar, "weekly", WEEKLY)
        names.append(bar)
    return names


def placed(bars: list[str]) -> dict[str, list[int]]:
    found = {}
    for bar in bars:
        (first,) = standing_orders.occurrences(ACCOUNT, bar, "weekly", "2026-05-05", "2026-05-05")["occurrences"]
        found[bar] = first.get("delivery_ids", [])
    return found


def test_one_run_places_every_bar_sharing_a_moment_with_turns_at_once(bars):
    summary = standing_order_turns.place_due(clock.after(60))
    assert (summary["placed"], summary["failed"], summary["crashed"], summary["left"]) == (BARS, 0, 0, 0)
    ids = [delivery_id for found in placed(bars).values() for delivery_id in found]
    assert sorted(ids) == list(range(1, BARS + 1))  # each bar's date placed once, ids unique
    assert delivery_reads.integration_overview(ACCOUNT)["pending"] == BARS  # counted exactly, whatever ran at once
    assert standing_order_turns.place_due(clock.after(60))["placed"] == 0
    assert store.due(clock.now(), 1000) == []


def test_two_runs_at_once_place_each_date_once(bars):
    results = []
    start = threading.Barrier(2)

    def run():
        start.wait()
        results.append(standing_order_turns.place_due(clock.after(60)))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    clock.current().advance(10)  # a date another run held is looked at again a few seconds later
    standing_order_turns.place_due(clock.after(60))
    ids = [delivery_id for found in placed(bars).values() for delivery_id in found]
    assert len(ids) == BARS and len(set(ids)) == BARS
    assert delivery_reads.integration_overview(ACCOUNT)["pending"] == BARS
