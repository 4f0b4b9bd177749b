"""`make bench` (also alone: `python bench/standing_orders.py`): the cost of one placing pass of standing orders
(decisions §17) on DynamoDB Local, with a fake clock.

1,000 accounts, each with a customer, a product and 10 standing orders (10,000 in all). One standing order of
each account counts Wednesday 2026-06-10, whose placing moment is Monday 23:59 UTC; the other nine count Thursday
(Tuesday 23:59). Two passes of the job that `make run` and the one-minute schedule run
(jobs/standing_order_turns.py `place_due`) are measured with the service's own client:

- at Monday 12:00, when nothing is due: it should read the queue's partitions and nothing else;
- at Monday 23:59:30, when 1,000 dates are due (one per account): each is placed as an order, recorded, and its
  standing order put back in the queue.

Standing orders and customers are seeded straight into the table in the store's own item form (the write path is
measured by the API benchmarks); products through the catalogue use case. Prints a table and writes
bench/standing_orders.json.
"""

import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.update(
    AWS_DEFAULT_REGION="us-east-1",
    AWS_ACCESS_KEY_ID="local",
    AWS_SECRET_ACCESS_KEY="local",
    TABLE_NAME="bench-standing-orders",
)

from bench.harness import attach  # noqa: E402

RESULTS = Path(__file__).with_name("standing_orders.json")
ACCOUNTS = int(os.environ.get("BENCH_STANDING_ACCOUNTS", "1000"))
PER_ACCOUNT = 10
IDLE = dt.datetime(2026, 6, 8, 12, 0, tzinfo=dt.timezone.utc)
DUE = dt.datetime(2026, 6, 8, 23, 59, 30, tzinfo=dt.timezone.utc)
ADDRESS = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}


def standing(standing_id: str, weekday: int) -> dict:
    return {
        "id": standing_id,
        "customer_id": "bar",
        "name": None,
        "items": [{"id": "keg", "count": 2}],
        "weekdays": [weekday],
        "every_weeks": 1,
        "starts_on": "2026-06-08",
        "ends_on": None,
        "place_days_ahead": 2,
        "paused": False,
        "type": "DELIVERY",
        "empties": None,
        "message": None,
        "cost_center": None,
        "company": None,
        "address": ADDRESS,
        "user": {"name": "Bar", "email": "bar@example.com"},
        "created": "2026-06-08T08:00:00.000Z",
        "updated": "2026-06-08T08:00:00.000Z",
    }


def seed() -> None:
    from chalicelib.service import catalogue
    from chalicelib.store import keys, table
    from chalicelib.store import standing_orders as store

    table.reset_client()
    table.create_table()
    items = []
    for n in range(ACCOUNTS):
        account = f"a{n:04d}"
        catalogue.put_category(account, "drinks", {"name": "Drinks"})
        catalogue.put_product(
            account, "keg", {"status": "ACTIVE", "category": "drinks", "name": "Keg", "price": 8900}, None
        )
        items.append({**keys.customer_key(account, "bar"), "data": {"id": "bar", "name": "Bar", "address": ADDRESS}})
        for s in range(PER_ACCOUNT):
            wednesday = s == 0
            due = "2026-06-08T23:59:00.000Z" if wednesday else "2026-06-09T23:59:00.000Z"
            stored = store.Stored(standing(f"so{s}", 3 if wednesday else 4), f"b{s}", "2026-06-08", [], 1, due)
            items.append(store._item(account, "bar", f"so{s}", stored))
        items.append({**keys.standing_count_key(account, "bar"), "standing_orders": PER_ACCOUNT})
    _write(items)


def _write(items: list[dict]) -> None:
    from chalicelib.store import table

    for start in range(0, len(items), 25):
        chunk = [{"PutRequest": {"Item": table.to_item(item)}} for item in items[start : start + 25]]
        pending = {table.name(): chunk}
        while pending:
            pending = table.client().batch_write_item(RequestItems=pending).get("UnprocessedItems") or None


def measure(meter, moment: dt.datetime) -> dict:
    from chalicelib.jobs import standing_order_turns
    from chalicelib.service import clock

    clock.current().set(moment)
    meter.reset()
    started = time.perf_counter()
    summary = standing_order_turns.place_due(moment + dt.timedelta(hours=1))
    wall = time.perf_counter() - started
    operations: dict[str, int] = {}
    for name in meter.operations:
        operations[name] = operations.get(name, 0) + 1
    return {
        "summary": summary,
        "requests": meter.requests,
        "capacity": round(meter.capacity, 1),
        "operations": operations,
        "wall_seconds": round(wall, 1),
    }


def simulate() -> dict:
    from chalicelib.service import clock
    from chalicelib.store import table

    clock.use(clock.FakeClock(IDLE))
    started = time.perf_counter()
    seed()
    seeded = time.perf_counter() - started
    meter = attach(table.client())
    idle = measure(meter, IDLE)
    due = measure(meter, DUE)
    placed = due["summary"]["placed"]
    return {
        "accounts": ACCOUNTS,
        "standing_orders": ACCOUNTS * PER_ACCOUNT,
        "seed_seconds": round(seeded, 1),
        "nothing_due": idle,
        "due": due,
        "per_placed_date": {
            "requests": round(due["requests"] / placed, 2) if placed else None,
            "capacity": round(due["capacity"] / placed, 2) if placed else None,
        },
    }


def main() -> int:
    from chalicelib.localdev import dynamodb_local

    server = dynamodb_local.start()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
    try:
        result = simulate()
    finally:
        server.stop()
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    idle, due = result["nothing_due"], result["due"]
    rows = [
        ("standing orders (accounts x 10)", result["standing_orders"]),
        ("nothing due: requests / capacity", f"{idle['requests']} / {idle['capacity']}"),
        ("nothing due: operations", idle["operations"]),
        ("1,000 due: dates placed / failed", f"{due['summary']['placed']} / {due['summary']['failed']}"),
        ("1,000 due: requests / capacity", f"{due['requests']} / {due['capacity']}"),
        (
            "1,000 due: per placed date (requests / capacity)",
            f"{result['per_placed_date']['requests']} / {result['per_placed_date']['capacity']}",
        ),
        ("1,000 due: operations", due["operations"]),
        ("1,000 due: wall seconds (DynamoDB Local)", due["wall_seconds"]),
    ]
    for label, value in rows:
        print(f"{label:<52} {value}")
    return 0 if due["summary"]["placed"] == ACCOUNTS and idle["summary"]["due"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
