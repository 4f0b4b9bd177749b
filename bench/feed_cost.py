"""The feed's cost per change, all in (issue 34): a section of `make bench`, also on its own
(`python bench/feed_cost.py [tree]`, which starts its own DynamoDB Local; `tree`: another checkout to measure,
e.g. an export of the commit before issue 34, for the "before" column).

Per write kind, capacity from DynamoDB Local's ReturnConsumedCapacity (TOTAL, indexes included): the write
itself, then the `GET /changes?after=latest` that numbers it minus that read with nothing pending (the
numbering, its events and clean-up). Also: the read with nothing pending after a burst of writes, and the cost
of one more PATCH of a product with 1 and with 40 of its changes waiting unnumbered (flat or not).
"""

import json
import os
import sys
from pathlib import Path

TREE = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TREE))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

USER = {"name": "Bench User", "email": "bench@example.com"}
ADDRESS = {"address1": "Main St 1", "zip": "00100", "city": "Helsinki", "country": "FI"}
PRODUCT = {
    "status": "ACTIVE",
    "category": "beer",
    "name": "Lager",
    "price": 150,
    "vessel": {"size": 0.33, "unit": "l", "type": "BO"},
    "bundles": [{"id": "crate", "type": "CT", "size": 24}],
}
KINDS = [  # (name, method, path, body, as customer)
    ("PUT /products/:id (new)", "PUT", "/products/n{n}", PRODUCT, False),
    ("PUT /products/:id (changed)", "PUT", "/products/p1", {**PRODUCT, "name": "Lager {n}"}, False),
    ("PATCH /products/:id", "PATCH", "/products/p1", {"price": "{price}"}, False),
    ("PUT /categories/:id", "PUT", "/categories/c{n}", {"name": "Cat {n}"}, False),
    ("PATCH /customers/:id", "PATCH", "/customers/c1", {"price_group": "g{n}"}, False),
    (
        "POST /customer/deliveries (order)",
        "POST",
        "/customer/deliveries",
        {"items": [{"id": "p2", "count": 2}], "user": USER},
        True,
    ),
]
RUNS = 5


def _filled(value, n: int):
    if isinstance(value, dict):
        return {k: _filled(v, n) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, n) for v in value]
    if value == "{price}":
        return 100 + n
    return value.replace("{n}", str(n)) if isinstance(value, str) else value


def measure(call, meter, token: str, customer: str) -> dict:
    def spent(method, path, body=None, who=None) -> float:
        meter.reset()
        status, _ = call(method, path, body, token=who or token)
        assert status in (200, 201), (method, path, status)
        return meter.capacity

    def numbering_read() -> float:
        return spent("GET", "/changes?after=latest")

    numbering_read()
    idle = numbering_read()
    kinds = {}
    for name, method, path, body, as_customer in KINDS:
        writes, reads = [], []
        for n in range(RUNS):
            writes.append(spent(method, _filled(path, n), _filled(body, n), customer if as_customer else None))
            reads.append(numbering_read() - idle)
        write, read = sum(writes) / RUNS, sum(reads) / RUNS
        kinds[name] = {"write": round(write, 2), "numbering": round(read, 2), "all_in": round(write + read, 2)}
    for n in range(150):
        call("PUT", f"/categories/burst{n}", {"name": f"Burst {n}"}, token=token)
    numbering_read()
    after_burst = numbering_read()
    waiting = {}
    for n in range(1, 41):
        cost = spent("PATCH", "/products/p1", {"price": 1000 + n})
        if n in (1, 40):
            waiting[n] = round(cost, 2)
    numbering_read()
    return {
        "kinds": kinds,
        "read_nothing_pending": round(idle, 2),
        "read_nothing_pending_after_150_writes": round(after_burst, 2),
        "patch_with_waiting_changes": waiting,
    }


def main() -> int:
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        TABLE_NAME="bench-feed-cost",
        SIGNING_SECRET="bench-secret-bench-secret-bench-secret",
        POWERTOOLS_LOG_LEVEL="WARNING",
    )
    from chalicelib.localdev import dynamodb_local

    server = dynamodb_local.start()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
    try:
        from app import app
        from bench import harness
        from chalicelib.service import accounts
        from chalicelib.store import table, tokens

        table.create_table()
        token = "bench-supplier-token"
        accounts.create_account("costs", "Bench supplier", token)
        call = harness.LambdaCaller(app, token)
        call("PUT", "/categories/beer", {"name": "Beer"})
        for pid in ("p1", "p2"):
            assert call("PUT", f"/products/{pid}", PRODUCT)[0] == 200
        call("PUT", "/customers/c1", {"name": "Bar One", "company": "Bar One Oy", "contact": USER, "address": ADDRESS})
        _, customer = tokens.create("costs", "customer", "c1")
        meter = harness.attach(table.client())
        found = measure(call, meter, token, customer)
    finally:
        server.stop()
    print(json.dumps(found, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
