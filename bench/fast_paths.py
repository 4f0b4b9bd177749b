"""Issue 20's figures: cold start, GET /products/:id and the list pages against what DynamoDB itself costs.

    python bench/fast_paths.py            # this tree beside the pre-change main (BENCH_BASELINE, a commit), one run
    make bench                            # the same, after bench/run.py's request and capacity table

Each code version runs in its own worker process (`fast_paths.py worker <root> <table>`): it seeds its own table
through its own code (the stored form differs between versions) on one shared DynamoDB Local, then measures
through the Lambda entry point with API Gateway events:

- GET /products/:id ÷ a bare boto3 GetItem of the same item (median), the two interleaved call by call;
- each list page (50 items): the app's time ÷ its DynamoDB time (medians). DynamoDB time is what a counting proxy
  would see: from botocore's `before-send` to its `before-parse` (the request on the wire and the response read),
  without botocore's own parsing, which is the app's work.

Cold starts of the floor (imports boto3 + chalice, one GetItem), the baseline and this tree alternate, so a noisy
shared machine moves all three alike; each figure is a ratio taken within this one run.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = os.environ.get("BENCH_BASELINE", "cdf2123")  # main before issue 20
RUNS = int(os.environ.get("BENCH_RUNS", "200"))
COLD_RUNS = int(os.environ.get("BENCH_COLD_RUNS", "9"))
TOKEN = "bench-supplier-token"
ACCOUNT = "bench0300"
PAGE_PRODUCTS = 60  # more than a page of 50, so the page is full and has a cursor
ORDERS = 300

# figure -> (label, target, how it compares)
TARGETS = {
    "cold_start_ratio": ("cold start ÷ floor (median)", 1.15),
    "get_product_ratio": ("GET /products/:id ÷ bare GetItem (median)", 1.10),
    "products_page_ratio": ("GET /products page of 50: app ÷ DynamoDB", 2.0),
    "deliveries_page_ratio": ("GET /deliveries page of 50: app ÷ DynamoDB", 2.0),
    "status_page_ratio": ("GET /deliveries?status=REQUESTED page of 50: app ÷ DynamoDB", 2.0),
    "peak_mb": ("peak memory of a cold start (MB)", 120),
}
PAGES = {"products_page": "/products", "deliveries_page": "/deliveries", "status_page": "/deliveries?status=REQUESTED"}


# ---- in the worker: one code version, imported from its root ----


def _seed(call) -> None:
    from bench import seed
    from chalicelib.service import accounts

    accounts.create_account(ACCOUNT, "Bench supplier", TOKEN)
    seed._catalogue(call)
    # Written out, not seed.py's loop: this seed also runs against the baseline tree's bench/seed.py.
    for n in range(11, PAGE_PRODUCTS + 1):
        product = {
            "id": f"p{n:04d}",
            "status": "ACTIVE",
            "category": "beer",
            "name": f"Lager {n}",
            "vessel": {"size": 0.33, "unit": "l", "type": "BO"},
            "bundles": [{"id": "crate", "type": "CT", "size": 24}, {"type": "PX", "size": 40}],
            "price": 150 + n,
            "pricing": {
                "strategy": "INCREMENTAL",
                "price_points": [{"from": 1, "price": 160}, {"from": 6, "price": 150}],
            },
        }
        status, _ = call("PUT", f"/products/{product['id']}", product)
        assert status == 200, status
    seed._orders(ACCOUNT, ORDERS)


class _WireClock:
    """Sums the time DynamoDB requests spend on the wire: before-send to before-parse."""

    def __init__(self, client):
        self.total = 0.0
        self._started = None
        client.meta.events.register("before-send.dynamodb.*", self._send)
        client.meta.events.register("before-parse.dynamodb.*", self._parse)

    def _send(self, **_):
        self._started = time.perf_counter()

    def _parse(self, **_):
        if self._started is not None:
            self.total += time.perf_counter() - self._started
            self._started = None


def worker(root: str, table_name: str) -> dict:
    os.environ["TABLE_NAME"] = table_name
    sys.path.insert(0, root)
    from app import app
    from bench import harness
    from chalicelib.store import table

    table.create_table()
    call = harness.LambdaCaller(app, TOKEN)
    _seed(call)
    client = table.client()
    wire = _WireClock(client)

    from chalice.local import LambdaEventConverter, RouteMatcher

    converter = LambdaEventConverter(RouteMatcher(list(app.routes)))
    events = {}

    def app_call(path):
        """The app alone: the API Gateway event is built once per path, as Lambda receives it ready-made."""
        if path not in events:
            headers = {"authorization": f"token {TOKEN}"}
            events[path] = converter.create_lambda_event("GET", path, headers, None)
        response = app(events[path], None)
        assert response["statusCode"] == 200, (path, response["statusCode"], response.get("body", "")[:300])
        return response

    key = {"PK": {"S": f"A#{ACCOUNT}"}, "SK": {"S": "PRODUCT#p0001"}}
    figures = {}
    app_ms, bare_ms = [], []
    for _ in range(20):
        app_call("/products/p0001"), client.get_item(TableName=table_name, Key=key)
    for _ in range(RUNS):
        started = time.perf_counter()
        app_call("/products/p0001")
        app_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        client.get_item(TableName=table_name, Key=key)
        bare_ms.append((time.perf_counter() - started) * 1000)
    figures["get_product"] = {"app_ms": statistics.median(app_ms), "ddb_ms": statistics.median(bare_ms)}
    for name, path in PAGES.items():
        body = json.loads(app_call(path)["body"])
        assert len(next(iter(body.values()))) == 50 and "cursor" in body, (path, len(body))
        app_ms, ddb_ms = [], []
        for _ in range(10):
            app_call(path)
        for _ in range(RUNS):
            wire.total = 0.0
            started = time.perf_counter()
            app_call(path)
            app_ms.append((time.perf_counter() - started) * 1000)
            ddb_ms.append(wire.total * 1000)
        figures[name] = {"app_ms": statistics.median(app_ms), "ddb_ms": statistics.median(ddb_ms)}
    for name, figure in figures.items():
        figure["ratio"] = round(figure["app_ms"] / figure["ddb_ms"], 2)
        figure["app_ms"], figure["ddb_ms"] = round(figure["app_ms"], 3), round(figure["ddb_ms"], 3)
    return figures


# ---- in the parent ----


def _worker(root: Path, table_name: str) -> dict:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "worker", str(root), table_name],
        cwd=root,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"bench worker for {root} failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cold_start(root: Path, kind: str, table_name: str) -> dict:
    env = dict(os.environ, BENCH_STARTED=repr(time.time()), BENCH_TOKEN=TOKEN, TABLE_NAME=table_name)
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "coldstart.py"), kind],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _compile(root: Path) -> None:
    """Bytecode for the tree, as a second start or a package built with it has (deploy_template.py): with
    PYTHONDONTWRITEBYTECODE set, as on these machines, a cold start would otherwise compile every module it loads."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "app.py", "chalicelib"],
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def _baseline_tree(directory: str) -> Path:
    tree = Path(directory) / "baseline"
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), BASELINE], cwd=ROOT, check=True)
    for shared in (".venv", "node_modules"):
        if (ROOT / shared).exists() and not (tree / shared).exists():
            (tree / shared).symlink_to((ROOT / shared).resolve())
    return tree


def compare(endpoint: str) -> dict:
    """Both versions' figures, measured in this one run against the DynamoDB Local at `endpoint`."""
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = endpoint
    stamp = str(int(time.time()))
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as directory:
        baseline_root = _baseline_tree(directory)
        try:
            versions = {"baseline": (baseline_root, f"fast-base-{stamp}"), "change": (ROOT, f"fast-new-{stamp}")}
            results = {name: _worker(root, table_name) for name, (root, table_name) in versions.items()}
            for root, _ in versions.values():
                _compile(root)
            colds = {"floor": [], "baseline": [], "change": []}
            for _ in range(COLD_RUNS):
                colds["floor"].append(_cold_start(ROOT, "floor", versions["change"][1]))
                for name, (root, table_name) in versions.items():
                    colds[name].append(_cold_start(root, "app", table_name))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline_root)], cwd=ROOT, check=False)
    floor_ms = statistics.median(r["ms"] for r in colds["floor"])
    floor_cpu = statistics.median(r["cpu_ms"] for r in colds["floor"])
    for name in versions:
        app_ms = statistics.median(r["ms"] for r in colds[name])
        app_cpu = statistics.median(r["cpu_ms"] for r in colds[name])
        results[name]["cold_start"] = {
            "app_ms": app_ms,
            "floor_ms": floor_ms,
            "ratio": round(app_ms / floor_ms, 2),
            "app_cpu_ms": app_cpu,
            "floor_cpu_ms": floor_cpu,
            "cpu_ratio": round(app_cpu / floor_cpu, 2),
            "peak_mb": max(r["peak_mb"] for r in colds[name]),
        }
    results["floor_peak_mb"] = max(r["peak_mb"] for r in colds["floor"])
    results["baseline_commit"] = BASELINE
    return results


def figures_of(version: dict) -> dict:
    return {
        "cold_start_ratio": version["cold_start"]["ratio"],
        "get_product_ratio": version["get_product"]["ratio"],
        "products_page_ratio": version["products_page"]["ratio"],
        "deliveries_page_ratio": version["deliveries_page"]["ratio"],
        "status_page_ratio": version["status_page"]["ratio"],
        "peak_mb": version["cold_start"]["peak_mb"],
    }


def print_table(results: dict) -> bool:
    """The issue's table, this tree beside the baseline; True when every target is met."""
    new, old = figures_of(results["change"]), figures_of(results["baseline"])
    print(f"\nIssue 20 figures (ratios within this run; baseline = {results['baseline_commit']})")
    print(f"{'figure':62} {'baseline':>9} {'change':>9} {'target':>8}  met")
    met_all = True
    for key, (label, target) in TARGETS.items():
        met = new[key] <= target
        met_all &= met
        print(f"{label:62} {old[key]:>9} {new[key]:>9} {'<= ' + str(target):>8}  {'yes' if met else 'NO'}")
    print(f"{'':62} {'ms app / DynamoDB (median)':>28}")
    for key in ("get_product", *PAGES):
        o, n = results["baseline"][key], results["change"][key]
        print(f"  {key:60} {o['app_ms']:>7}/{o['ddb_ms']:<7} {n['app_ms']:>7}/{n['ddb_ms']:<7}")
    c, b = results["change"]["cold_start"], results["baseline"]["cold_start"]
    print(
        f"  {'cold start ms (app / floor)':60} {b['app_ms']:>7}/{b['floor_ms']:<7} {c['app_ms']:>7}/{c['floor_ms']:<7}"
    )
    # CPU time is what waiting on a busy machine does not inflate: a cross-check of the wall-clock ratio.
    print(
        f"  {'cold start CPU ms (app / floor)':60} {b['app_cpu_ms']:>7}/{b['floor_cpu_ms']:<7} "
        f"{c['app_cpu_ms']:>7}/{c['floor_cpu_ms']:<7}  ratio {b['cpu_ratio']} / {c['cpu_ratio']}"
    )
    return met_all


def main() -> int:
    sys.path.insert(0, str(ROOT))
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        SIGNING_SECRET="bench-secret",
        POWERTOOLS_LOG_LEVEL="WARNING",
    )
    from chalicelib.localdev import dynamodb_local

    server = dynamodb_local.start()
    try:
        results = compare(server.endpoint)
    finally:
        server.stop()
    (ROOT / "bench" / "fast_paths.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0 if print_table(results) else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        print(json.dumps(worker(sys.argv[2], sys.argv[3])))
    else:
        sys.exit(main())
