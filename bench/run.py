"""`make bench`: DynamoDB requests, capacity, latency, cold start and memory of the service, in one table.

Runs against Amazon DynamoDB Local (in memory) through the Lambda entry point, and writes
bench/results.json. Ratios are measured in the same run, so a noisy shared machine moves both sides alike.
"""

import datetime as dt
import json
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.update(
    AWS_ACCESS_KEY_ID="bench",
    AWS_SECRET_ACCESS_KEY="bench",
    AWS_DEFAULT_REGION="us-east-1",
    TABLE_NAME="bench",
    SIGNING_SECRET="bench-secret",
    POWERTOOLS_LOG_LEVEL="WARNING",
)

from bench import fast_paths, harness, seed  # noqa: E402

LATENCY_RUNS = int(os.environ.get("BENCH_RUNS", "200"))
TOKEN = "bench-supplier-token"
TARGETS = {"status_page_spread": 0.10}  # issue 20's figures and targets: bench/fast_paths.py
FAILED_PER_ACCOUNT = 20  # of 300 and of 3000 deliveries: the integration worklist figure


def integration_pages(call, meter, placed: dict) -> dict:
    """decisions §14: the first page of GET /deliveries?integration=FAILED with 20 of 300 and 20 of 3000 deliveries
    FAILED (and of PENDING, whose pages are full in both), one Query of the state's index partition each, so the
    capacities are equal; and the requests of PUT /deliveries/:id/integration and GET /account/integration."""
    import random

    from chalicelib.service import deliveries

    failed = {"status": "FAILED", "message": "unknown article in the ERP"}
    result = {}
    for name, account, token, count in (
        ("small", seed.SMALL, TOKEN, 300),
        ("large", seed.LARGE, TOKEN + "-large", 3000),
    ):
        assert len(placed[account]) == count
        chosen = random.Random(19).sample(sorted(placed[account]), FAILED_PER_ACCOUNT)
        for delivery_id in chosen[1:]:
            deliveries.set_integration(account, str(delivery_id), failed)
        call("GET", "/account/integration", token=token)  # warm the token cache: count the request only
        figures = {}
        for label, method, path, body in (
            ("put", "PUT", f"/deliveries/{chosen[0]}/integration", failed),
            ("failed_page", "GET", "/deliveries?integration=FAILED", None),
            ("pending_page", "GET", "/deliveries?integration=PENDING", None),
            ("overview", "GET", "/account/integration", None),
        ):
            meter.reset()
            status, _ = call(method, path, body, token=token)
            assert status == 200, (path, status)
            figures[label] = {"requests": meter.requests, "capacity": round(meter.capacity, 2)}
        assert figures["failed_page"]["requests"] == figures["pending_page"]["requests"] == 1, figures
        result[name] = figures
    for page in ("failed_page", "pending_page"):
        small, large = result["small"][page]["capacity"], result["large"][page]["capacity"]
        result[f"{page}_spread"] = round(abs(small - large) / max(small, 1e-9), 3)
    return result


def main() -> int:
    from chalicelib.localdev import dynamodb_local

    server = dynamodb_local.start()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
    try:
        from app import app
        from chalicelib.store import table

        table.create_table()
        meter = harness.attach(table.client())
        call = harness.LambdaCaller(app, TOKEN)
        world = seed.build(call, TOKEN)

        rows = []
        for name, method, path, body, target, *as_customer in world.operations:
            token = as_customer[0] if as_customer else None
            call("GET", "/categories?limit=1", token=token)  # warm this token's cache entry: count the endpoint only
            meter.reset()
            status, _ = call(method, path, body, token=token)
            requests, capacity = meter.requests, meter.capacity
            row = {
                "endpoint": name,
                "status": status,
                "requests": requests,
                "target_requests": target,
                "capacity": round(capacity, 2),
            }
            if method == "GET":
                row.update(harness.timings(lambda: call(method, path, token=token), LATENCY_RUNS))
            rows.append(row)

        client = table.client()
        key = {"PK": {"S": f"A#{seed.SMALL}"}, "SK": {"S": "PRODUCT#p0001"}}
        floor = harness.timings(lambda: client.get_item(TableName=table.name(), Key=key), LATENCY_RUNS)
        product_row = next(r for r in rows if r["endpoint"] == "GET /products/:id")
        get_ratio = round(product_row["median_ms"] / floor["median_ms"], 2)

        status_pages = world.status_pages(meter)
        integration = integration_pages(call, meter, world.placed)
        fast = fast_paths.compare(server.endpoint)  # cold start, single read and list pages, beside the baseline
        from bench import feed_bench  # the change feed's section (docs/feed.md)

        feed_figures = feed_bench.figures(call, meter, TOKEN, rows)
    finally:
        server.stop()

    spread = abs(status_pages["small"] - status_pages["large"]) / max(status_pages["small"], 1e-9)
    results = {
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "endpoints": rows,
        "bare_get_item": floor,
        "get_product_ratio": get_ratio,
        "status_page_capacity": {**status_pages, "spread": round(spread, 3)},
        "integration_pages": integration,
        "fast_paths": fast,
        "targets": TARGETS,
        "change_feed": feed_figures,
    }
    (ROOT / "bench" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    print_table(results)
    feed_bench.print_section(feed_figures)
    return 0


def print_table(results: dict) -> None:
    print(f"{'endpoint':44} {'status':>6} {'req':>4} {'target':>6} {'RCU/WCU':>8} {'median ms':>10} {'p95 ms':>8}")
    for r in results["endpoints"]:
        print(
            f"{r['endpoint']:44} {r['status']:>6} {r['requests']:>4} {r['target_requests'] or '':>6} "
            f"{r['capacity']:>8} {r.get('median_ms', ''):>10} {r.get('p95_ms', ''):>8}"
        )
    floor = results["bare_get_item"]
    print(f"{'bare boto3 GetItem':44} {'':>6} {1:>4} {'':>6} {'':>8} {floor['median_ms']:>10} {floor['p95_ms']:>8}")
    pages = results["status_page_capacity"]
    print()
    print(
        f"GET /products/:id / bare GetItem (median)     {results['get_product_ratio']:>6}  (bench/fast_paths.py below)"
    )
    print(
        f"status=ACCEPTED first page capacity           {pages['small']} (20 of 300) vs {pages['large']} "
        f"(20 of 3000), spread {pages['spread']:.1%}  target <= 10%"
    )
    print_integration(results["integration_pages"])
    fast_paths.print_table(results["fast_paths"])


def print_integration(figures: dict) -> None:
    small, large = figures["small"], figures["large"]
    for page, label in (
        ("failed_page", "integration=FAILED first page capacity      "),
        ("pending_page", "integration=PENDING first page capacity     "),
    ):
        print(
            f"{label} {small[page]['capacity']} (of 300) vs {large[page]['capacity']} (of 3000), "
            f"{small[page]['requests']} request, spread {figures[page + '_spread']:.1%}  target 1 request, 0%"
        )
    print(
        f"PUT /deliveries/:id/integration               {small['put']['requests']} requests, "
        f"{small['put']['capacity']} capacity; GET /account/integration {small['overview']['requests']} requests"
    )


if __name__ == "__main__":
    sys.exit(main())
