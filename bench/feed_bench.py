"""The change feed's cost (issue 18, docs/feed.md): a section of `make bench`, also runnable on its own
(`python bench/feed_bench.py`, which starts its own DynamoDB Local).

- every write of the main table with the feed: its requests against the target "today + 1" (a write marks its
  change on its own item: no request of its own for the feed);
- a feed page of 1000 entries, numbered from the table's stream (make run's feeder handing it to the numbering's
  handler): requests, capacity and milliseconds, without and with include=data;
(One account's write rate against many accounts', over HTTP with several API processes: bench/feed_rate.py.)
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Requests of each write before the feed (bench/seed.py's targets); the feed may add one (decisions §13).
BEFORE_FEED = {
    "POST /products": 1,
    "PUT /products/:id": 1,
    "PATCH /products/:id": 2,
    "POST /deliveries/:id/responses": 2,
    "POST /customer/deliveries (order)": 3,
}
PAGE_RUNS = int(os.environ.get("BENCH_FEED_PAGE_RUNS", "20"))


def write_rows(rows: list[dict]) -> list[dict]:
    """The main table's write rows, judged against "requests before the feed + 1"."""
    return [
        {
            "endpoint": r["endpoint"],
            "requests": r["requests"],
            "capacity": r["capacity"],
            "target": BEFORE_FEED[r["endpoint"]] + 1,
            "ok": r["requests"] <= BEFORE_FEED[r["endpoint"]] + 1,
        }
        for r in rows
        if r["endpoint"] in BEFORE_FEED
    ]


def feed_page(call, meter, token: str) -> dict:
    """GET /changes?limit=1000 on an account whose feed holds 1000+ entries: a GetItem of the head and a Query of the
    entries, as before the sequencer; a read numbers nothing (the stream does)."""
    from bench import harness

    for n in range(1001):
        status, _ = call("PUT", f"/categories/feed{n:04d}", {"name": f"Feed {n}"}, token=token)
        assert status == 200, status
    harness.drain(harness.numbering_feeder())
    figures = {}
    for name, query in (("page of 1000", "limit=1000"), ("page of 1000, include=data", "limit=1000&include=data")):
        meter.reset()
        status, _ = call("GET", f"/changes?after=0&{query}", token=token)
        assert status == 200, status
        figures[name] = {
            "requests": meter.requests,
            "operations": sorted(set(meter.operations)),
            "capacity": round(meter.capacity, 2),
            **harness.timings(lambda: call("GET", f"/changes?after=0&{query}", token=token), PAGE_RUNS),
        }
    return figures


def figures(call, meter, token: str, rows: list[dict]) -> dict:
    return {"writes": write_rows(rows), "feed_page": feed_page(call, meter, token)}


def print_section(found: dict) -> None:
    print()
    print("Change feed (docs/feed.md)")
    print(f"{'write':44} {'req':>4} {'target':>6} {'RCU/WCU':>8}")
    for r in found["writes"]:
        print(f"{r['endpoint']:44} {r['requests']:>4} {r['target']:>6} {r['capacity']:>8}{'' if r['ok'] else '  OVER'}")
    for name, page in found["feed_page"].items():
        print(
            f"GET /changes, {name:30} {page['requests']:>4} req{'' if 'data' in name else ' (target 2)':11} "
            f"{page['capacity']:>8} RCU "
            f"{page['median_ms']:>8} ms median {page['p95_ms']:>8} ms p95"
        )


def main() -> int:
    """On its own: a fresh DynamoDB Local, the seeded world of bench/seed.py, the main writes measured once."""
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        TABLE_NAME="bench-feed",
        SIGNING_SECRET="bench-secret",
        POWERTOOLS_LOG_LEVEL="WARNING",
    )
    from chalicelib.localdev import dynamodb_local

    server = dynamodb_local.start()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
    try:
        from app import app
        from bench import harness, seed
        from chalicelib.store import table

        table.create_table()
        meter = harness.attach(table.client())
        token = "bench-supplier-token"
        call = harness.LambdaCaller(app, token)
        world = seed.build(call, token)
        rows = []
        for name, method, path, body, target, *as_customer in world.operations:
            if method == "GET":
                continue
            customer = as_customer[0] if as_customer else None
            call("GET", "/categories?limit=1", token=customer)
            meter.reset()
            status, _ = call(method, path, body, token=customer)
            rows.append(
                {"endpoint": name, "status": status, "requests": meter.requests, "capacity": round(meter.capacity, 2)}
            )
        print_section(figures(call, meter, token, rows))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
