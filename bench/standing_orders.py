"""`make bench` (also alone: `python bench/standing_orders.py`): placing standing orders (decisions §17) on
DynamoDB Local, with a fake clock.

Many accounts: 1,000 accounts, each with a customer, a product and 10 standing orders (10,000 in all). One standing
order of each account counts Wednesday 2026-06-10, whose placing moment is Monday 23:59 UTC; the other nine count
Thursday (Tuesday 23:59). Two passes of the job (jobs/standing_order_turns.py `place_due`) are measured with the
service's own client:

- at Monday 12:00, when nothing is due: it should read the queue's partitions and nothing else;
- at Monday 23:59:30, when 1,000 dates are due (one per account): each is placed as an order, recorded, and its
  standing order put back in the queue.

One account, 300 bars: a wholesaler whose 300 bars (customers) each have a standing order for Wednesday, all with
the placing moment Monday 23:59. One invocation of the AWS schedule (jobs/handlers.py `every_minute`: the phases of
PHASES side by side within the 30 s timeout; here the standing-order phase alone, through the same `run_phases`)
starts at that moment, with the clock moving as time does from there. It must place all 300 within its window (21
s), so that even a moment that came just after the previous invocation's window (at most 39 s before this one)
is placed within the minute: the worst case is 39 s plus the time to place them.

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
BARS = int(os.environ.get("BENCH_STANDING_BARS", "300"))
WHOLESALER = "wholesaler"
MOMENT = dt.datetime(2026, 6, 8, 23, 59, tzinfo=dt.timezone.utc)  # every Wednesday order's placing moment
# The longest a moment can wait for an invocation to see it: the schedule's period less one invocation's window
# (jobs/budget.py: the 30 s timeout less the longest turn and the margin).
UNSEEN_SECONDS = 60 - 21
IDLE = dt.datetime(2026, 6, 8, 12, 0, tzinfo=dt.timezone.utc)
DUE = dt.datetime(2026, 6, 8, 23, 59, 30, tzinfo=dt.timezone.utc)
ADDRESS = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}


def standing(standing_id: str, weekday: int, customer_id: str = "bar") -> dict:
    return {
        "id": standing_id,
        "customer_id": customer_id,
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
            stored = store.Stored(standing(f"so{s}", 3 if wednesday else 4), "2026-06-08", [], 1, due)
            items.append(store._item(account, "bar", f"so{s}", stored))
        items.append({**keys.standing_count_key(account, "bar"), "standing_orders": PER_ACCOUNT})
    _write(items)


def seed_bars() -> None:
    """One account whose BARS bars share one placing moment (their standing orders queued at it), in a table of its
    own: nothing else is due there."""
    from chalicelib.service import catalogue
    from chalicelib.store import keys, table
    from chalicelib.store import standing_orders as store

    os.environ["TABLE_NAME"] = "bench-standing-bars"
    table.reset_client()
    table.create_table()
    catalogue.put_category(WHOLESALER, "drinks", {"name": "Drinks"})
    keg = {"status": "ACTIVE", "category": "drinks", "name": "Keg", "price": 8900}
    catalogue.put_product(WHOLESALER, "keg", keg, None)
    items = []
    for n in range(BARS):
        bar = f"bar{n:03d}"
        items.append({**keys.customer_key(WHOLESALER, bar), "data": {"id": bar, "name": bar, "address": ADDRESS}})
        stored = store.Stored(standing("weekly", 3, bar), "2026-06-08", [], 1, "2026-06-08T23:59:00.000Z")
        items.append(store._item(WHOLESALER, bar, "weekly", stored))
        items.append({**keys.standing_count_key(WHOLESALER, bar), "standing_orders": 1})
    _write(items)


class Running(object):
    """The clock from a chosen moment on, moving as real time does: deadlines of the schedule's invocation hold."""

    def __init__(self, start: dt.datetime):
        self.start, self.started = start, time.perf_counter()

    def now(self) -> dt.datetime:
        return self.start + dt.timedelta(seconds=time.perf_counter() - self.started)

    def wait(self, seconds, stop) -> bool:
        return stop.wait(seconds)


def schedule_invocation(meter) -> dict:
    """One invocation of the one-minute schedule at the shared moment, through `run_phases` as in AWS."""
    from chalicelib.jobs import budget, handlers
    from chalicelib.service import clock

    assert UNSEEN_SECONDS == 60 - handlers.STANDING_ORDERS.window(budget.LAMBDA_TIMEOUT_SECONDS)
    clock.use(Running(MOMENT))
    meter.reset()
    started, cpu_started = time.perf_counter(), time.process_time()
    results = budget.run_phases([handlers.STANDING_ORDERS], budget.LAMBDA_TIMEOUT_SECONDS)
    invocation, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    summary = results["standing-orders"]
    placed = summary["placed"]
    placed_by = _last_placed_after(MOMENT)
    operations: dict[str, int] = {}
    for name in meter.operations:
        operations[name] = operations.get(name, 0) + 1
    return {
        "bars": BARS,
        "summary": summary,
        "placed_within_seconds": placed_by,
        "invocation_seconds": round(invocation, 1),
        # The invocation's own CPU (this process's, threads together; DynamoDB Local's is not in it): what a Lambda's
        # share of a core must cover, whatever the machine's load.
        "cpu_seconds": round(cpu, 1),
        "cpu_ms_per_placed_date": round(cpu * 1000 / placed, 1) if placed else None,
        "worst_case_seconds": round(UNSEEN_SECONDS + placed_by, 1) if placed_by is not None else None,
        "requests": meter.requests,
        "capacity": round(meter.capacity, 1),
        "per_placed_date": {
            "requests": round(meter.requests / placed, 2) if placed else None,
            "capacity": round(meter.capacity / placed, 2) if placed else None,
        },
        "operations": operations,
    }


def _last_placed_after(moment: dt.datetime) -> float | None:
    """Seconds from the moment to the last of the wholesaler's deliveries placed (their request timestamps)."""
    from chalicelib.store import delivery_lists

    stamps, cursor = [], None
    while True:
        page = delivery_lists.list_page(WHOLESALER, 100, cursor, None)
        stamps += [json.loads(text)["request"]["timestamp"] for text in page.items]
        cursor = page.cursor
        if cursor is None:
            break
    if len(stamps) < BARS:
        return None
    last = max(dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")) for stamp in stamps)
    return round((last - moment).total_seconds(), 1)


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


def one_account() -> dict:
    """The 300 bars, on a DynamoDB Local of their own (its speed falls as a table and its stream grow)."""
    from chalicelib.store import table

    seed_bars()
    return schedule_invocation(attach(table.client()))


def on_a_fresh_store(run) -> dict:
    from chalicelib.localdev import dynamodb_local

    server = dynamodb_local.start()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
    try:
        return run()
    finally:
        server.stop()


def main() -> int:
    result = on_a_fresh_store(simulate)
    result["one_account"] = on_a_fresh_store(one_account)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    idle, due, bars = result["nothing_due"], result["due"], result["one_account"]
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
        (
            f"one account, {BARS} bars: placed / failed / busy / crashed / left",
            " / ".join(str(bars["summary"][name]) for name in ("placed", "failed", "busy", "crashed", "left")),
        ),
        (f"one account, {BARS} bars: the invocation (s)", bars["invocation_seconds"]),
        (
            f"one account, {BARS} bars: its CPU (s) / per placed date (ms)",
            f"{bars['cpu_seconds']} / {bars['cpu_ms_per_placed_date']}",
        ),
        (f"one account, {BARS} bars: all placed within (s)", bars["placed_within_seconds"]),
        (f"one account, {BARS} bars: worst case, {UNSEEN_SECONDS} s unseen + that", bars["worst_case_seconds"]),
        (
            f"one account, {BARS} bars: per placed date (req / cap)",
            f"{bars['per_placed_date']['requests']} / {bars['per_placed_date']['capacity']}",
        ),
    ]
    for label, value in rows:
        print(f"{label:<64} {value}")
    in_time = bars["worst_case_seconds"] is not None and bars["worst_case_seconds"] <= 60
    return 0 if due["summary"]["placed"] == ACCOUNTS and idle["summary"]["due"] == 0 and in_time else 1


if __name__ == "__main__":
    sys.exit(main())
