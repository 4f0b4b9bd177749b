"""The feed's cost per change, all in (issues 34 and 43): a section of `make bench`, also on its own
(`python bench/feed_cost.py`, which starts its own DynamoDB Local); writes bench/feed_cost.json.

Per write kind, capacity from DynamoDB Local's ReturnConsumedCapacity (TOTAL, indexes included): the write itself
(its feed mark included), then its change through the feed as deployed: the table's stream read by make run's feeder
(localdev/stream.StreamFeeder) and handed to the forwarder (jobs/handlers.forward_changes), which sends it to the feed
queue (moto's SQS in this process: localdev/queue.py) and asks nothing of DynamoDB (measured: 0); then make run's
queue poller hands the queue to the numbering (jobs/handlers.number_changes), metered on the store's client. k is
how many changes of the account one hand-over numbers together (one stream batch of k writes: one message): 1 (a
quiet account: the head's read, the selection's read and the head's move for one change), 10 and 100. Also:
`GET /changes?after=latest` with nothing new after 150 writes, and one more PATCH of a product with 1 and with 40
of its changes not yet numbered (the stream not drained in between: flat or not).

Every figure is given as DynamoDB Local reports it and with each transaction recounted item by item as AWS bills it
(Local reports one item's capacity for a whole TransactWriteItems: bench/capacity.py), and the numbering's recounted
units split by where they go (PARTS). "Before the sequencer" and "Design 1" (pending entries numbered by reads and a
sweep) were measured on those trees by the harness of that time, both ways (BEFORE_SEQUENCER, DESIGN_1 below): this
tree's numbering does not run on theirs.
"""

import json
import math
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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
BATCHES = {1: 5, 10: 2, 100: 1}  # k -> hand-overs measured
WAYS = {
    "reported": "as DynamoDB Local reports them (how every earlier figure was measured)",
    "recounted": "transactions recounted item by item (Local reports one item's capacity for a whole transaction)",
}
# The same figures measured on the earlier trees by the harness of that time (a write, then the GET /changes that
# numbered it inline, minus that read with nothing pending: `git show 1ea7393:bench/feed_cost.py <tree>`, with this
# harness.py and capacity.py copied into the tree), 2026-11-28, DynamoDB Local 3.3.1: per kind (write, numbering,
# all in); the reads; a PATCH with 1 and 40 changes unnumbered. They reproduce the committed ones (bench/README.md:
# product PUT 10, customer PATCH 4 before; 19-30.3 in design 1).
BEFORE_SEQUENCER = {  # main at 160ad28, before the sequencer merge f88db00: entries written by the write
    "reported": {
        "PUT /products/:id (new)": (9.0, 0.0, 9.0),
        "PUT /products/:id (changed)": (10.0, 0.0, 10.0),
        "PATCH /products/:id": (10.0, 0.0, 10.0),
        "PUT /categories/:id": (3.0, 0.0, 3.0),
        "PATCH /customers/:id": (4.0, 0.0, 4.0),
        "POST /customer/deliveries (order)": (18.3, 0.0, 18.3),
        "GET /changes, nothing new after 150 writes": 1.0,
        "PATCH of a product with 1 / 40 changes unnumbered": (10.0, 10.0),
    },
    "recounted": {
        "PUT /products/:id (new)": (13.0, 0.0, 13.0),
        "PUT /products/:id (changed)": (14.0, 0.0, 14.0),
        "PATCH /products/:id": (14.0, 0.0, 14.0),
        "PUT /categories/:id": (7.0, 0.0, 7.0),
        "PATCH /customers/:id": (8.0, 0.0, 8.0),
        "POST /customer/deliveries (order)": (29.1, 0.0, 29.1),
        "GET /changes, nothing new after 150 writes": 1.0,
        "PATCH of a product with 1 / 40 changes unnumbered": (14.0, 14.0),
    },
}
DESIGN_1 = {  # main at 1ea7393: pending entries, numbered by reads and a sweep
    "reported": {
        "PUT /products/:id (new)": (12.0, 7.0, 19.0),
        "PUT /products/:id (changed)": (13.0, 7.0, 20.0),
        "PATCH /products/:id": (13.0, 7.0, 20.0),
        "PUT /categories/:id": (6.0, 7.0, 13.0),
        "PATCH /customers/:id": (7.0, 7.0, 14.0),
        "POST /customer/deliveries (order)": (17.3, 13.0, 30.3),
        "GET /changes, nothing new after 150 writes": 1.0,
        "PATCH of a product with 1 / 40 changes unnumbered": (13.0, 21.0),
    },
    "recounted": {
        "PUT /products/:id (new)": (12.0, 9.0, 21.0),
        "PUT /products/:id (changed)": (13.0, 9.0, 22.0),
        "PATCH /products/:id": (13.0, 9.0, 22.0),
        "PUT /categories/:id": (6.0, 9.0, 15.0),
        "PATCH /customers/:id": (7.0, 9.0, 16.0),
        "POST /customer/deliveries (order)": (24.1, 15.0, 39.1),
        "GET /changes, nothing new after 150 writes": 1.0,
        "PATCH of a product with 1 / 40 changes unnumbered": (13.0, 21.0),
    },
}


def _filled(value, n: int):
    if isinstance(value, dict):
        return {k: _filled(v, n) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, n) for v in value]
    if value == "{price}":
        return 100 + n
    return value.replace("{n}", str(n)) if isinstance(value, str) else value


# Where the numbering's units go: per hand-over (the head's read, the webhook selection's read, the head's move) and
# per change (the record's item that makes a hand-over again harmless, the entry, the webhook event).
PARTS = ("head read", "selection read", "head write", "record item", "entry", "event", "other")


def part_of(operation: str, key: dict) -> str:
    """The part a metered call (or a recounted transaction's item) counts to, by the item's key (store/keys.py)."""
    pk, sk = (key.get(name, {}).get("S", "") for name in ("PK", "SK"))
    if sk == "FEED#HEAD":
        return "head read" if operation == "GetItem" else "head write"
    if sk == "SETTINGS#WEBHOOKS" and operation == "GetItem":
        return "selection read"
    for suffix, part in (("#FEEDREC", "record item"), ("#FEED", "entry"), ("#EVENT", "event")):
        if pk.endswith(suffix):
            return part
    return "other"


class Bench:
    """Each figure twice: as DynamoDB Local reports it, and with its transactions recounted (bench/capacity.py)."""

    def __init__(self, call, meter, pipeline, account: str, token: str, customer: str):
        self.call, self.meter, self.pipeline = call, meter, pipeline
        self.account, self.token, self.customer = account, token, customer
        self.n = 0
        self.forwarding_requests = 0  # DynamoDB requests of the forwarder (none expected)
        self.images: list[dict] = []  # the marked items as the stream handed them over (their new images)
        forward = pipeline.feeder.handler

        def keep_images(event: dict) -> dict:
            found = (record["dynamodb"].get("NewImage") or {} for record in event["Records"])
            self.images += [image for image in found if "feed_mark" in image]
            return forward(event)

        pipeline.feeder.handler = keep_images

    def _spent(self) -> dict:
        return {"reported": self.meter.reported, "recounted": self.meter.capacity}

    def spent(self, method, path, body=None, who=None) -> dict:
        self.meter.reset()
        status, _ = self.call(method, path, body, token=who or self.token)
        assert status in (200, 201), (method, path, status)
        return self._spent()

    def drain(self) -> int:
        from bench import harness

        return harness.drain(self.pipeline)

    def sequence(self) -> int:
        from chalicelib.store import feed

        return feed.read_head(self.account).sequence

    def numbered(self) -> tuple[dict, dict, int, int]:
        """The stream read once and forwarded (metered: nothing), then the feed queue handed to the numbering,
        metered: capacity, its parts, requests, changes numbered."""
        before = self.sequence()
        self.meter.reset()
        records = self.pipeline.feeder.poll_once()
        assert records, "the stream handed nothing over"
        self.forwarding_requests += self.meter.requests
        self.meter.reset()
        self.pipeline.poller.drain()
        spent, parts, requests = self._spent(), dict(self.meter.parts), self.meter.requests
        return spent, parts, requests, self.sequence() - before

    def mark(self) -> dict:
        """What the mark adds to the items the writes since the last call marked: its bytes, and the KB the item
        is billed by (a write costs per KB of the item on the table and each index it is in) with and without it."""
        from bench import capacity

        images, self.images = self.images, []
        with_mark = [capacity.item_size(image) for image in images]
        without = [capacity.item_size({n: v for n, v in image.items() if n != "feed_mark"}) for image in images]
        return {
            "mark_bytes": round(statistics.mean(w - o for w, o in zip(with_mark, without))),
            "item_bytes": round(statistics.mean(with_mark)),
            "item_kb_with_mark": max(math.ceil(size / 1024) for size in with_mark),
            "item_kb_without_mark": max(math.ceil(size / 1024) for size in without),
        }

    def kind(self, method: str, path: str, body, as_customer: bool) -> dict:
        writes, by_k = [], {}
        self.drain()
        self.images = []
        for k, batches in BATCHES.items():
            spent, parts, requests, changes = [], {}, 0, 0
            for _ in range(batches):
                self.drain()
                for _ in range(k):
                    self.n += 1
                    who = self.customer if as_customer else None
                    writes.append(self.spent(method, _filled(path, self.n), _filled(body, self.n), who))
                numbering, found, asked, made = self.numbered()
                spent.append(numbering)
                for name, units in found.items():
                    parts[name] = parts.get(name, 0.0) + units
                requests, changes = requests + asked, changes + made
            assert changes == k * batches, (path, k, changes)  # one change per write, each numbered once
            by_k[k] = ({way: sum(s[way] for s in spent) / changes for way in WAYS}, requests / batches, parts, changes)
        write = {way: sum(w[way] for w in writes) / len(writes) for way in WAYS}
        mark = self.mark()
        return {
            way: {
                "write": round(write[way], 2),
                "mark": mark,
                **{
                    f"k={k}": {
                        "numbering": round(numbering[way], 2),
                        "all_in": round(write[way] + numbering[way], 2),
                        "numbering_requests_per_hand_over": round(requests, 1),
                        **(
                            {"numbering_parts_per_change": {n: round(u / changes, 3) for n, u in sorted(parts.items())}}
                            if way == "recounted"
                            else {}
                        ),
                    }
                    for k, (numbering, requests, parts, changes) in by_k.items()
                },
            }
            for way in WAYS
        }

    def read_after_burst(self) -> dict:
        for n in range(150):
            self.call("PUT", f"/categories/burst{n}", {"name": f"Burst {n}"}, token=self.token)
        self.drain()
        self.spent("GET", "/changes?after=latest")
        return self.spent("GET", "/changes?after=latest")

    def patch_with_waiting(self) -> dict:
        self.drain()
        waiting = {}
        for n in range(1, 41):
            cost = self.spent("PATCH", "/products/p1", {"price": 1000 + n})
            if n in (1, 40):
                waiting[n] = cost
        before = self.sequence()
        self.drain()
        assert self.sequence() - before == 40, "every PATCH is one change"
        return waiting


def measure(bench: Bench) -> dict:
    bench.drain()
    bench.spent("GET", "/changes?after=latest")
    idle = bench.spent("GET", "/changes?after=latest")
    kinds = {name: bench.kind(method, path, body, customer) for name, method, path, body, customer in KINDS}
    burst, waiting = bench.read_after_burst(), bench.patch_with_waiting()
    return {
        way: {
            "kinds": {name: kind[way] for name, kind in kinds.items()},
            "read_nothing_new": round(idle[way], 2),
            "read_nothing_new_after_150_writes": round(burst[way], 2),
            "patch_with_waiting_changes": {n: round(cost[way], 2) for n, cost in waiting.items()},
        }
        for way in WAYS
    } | {
        "forwarding_dynamodb_requests": bench.forwarding_requests,
        "before_the_sequencer": BEFORE_SEQUENCER,
        "design_1": DESIGN_1,
    }


def print_table(found: dict) -> None:
    for way, title in WAYS.items():
        figures, before, design_1 = found[way], BEFORE_SEQUENCER[way], DESIGN_1[way]
        print()
        print(f"The feed's capacity units per change, all in (write + numbering), {title}")
        head = f"{'write kind':36} {'before seq.':>11} {'design 1':>9} {'write':>6}"
        head += "".join(f" {'k=' + str(k):>7} {'ratio':>5}" for k in BATCHES)
        print(head + f" {'target':>7}  over 1.2 × before")
        for name, kind in figures["kinds"].items():
            target = round(1.2 * before[name][2], 1)
            row = f"{name:36} {before[name][2]:>11} {design_1[name][2]:>9} {kind['write']:>6}"
            for k in BATCHES:
                all_in = kind[f"k={k}"]["all_in"]
                row += f" {all_in:>7} {round(all_in / before[name][2], 2):>5}"
            over = [f"k={k}" for k in BATCHES if kind[f"k={k}"]["all_in"] > target]
            print(row + f" {target:>7}  {', '.join(over) or '-'}")
        print(f"  numbering per change (k={' / '.join(str(k) for k in BATCHES)}):")
        for name, kind in figures["kinds"].items():
            print(f"    {name:36} " + " / ".join(str(kind[f"k={k}"]["numbering"]) for k in BATCHES))
        read = "GET /changes, nothing new after 150 writes"
        print(
            f"  {read}: {figures['read_nothing_new_after_150_writes']} (before {before[read]}, design 1 "
            f"{design_1[read]}, target <= 2)"
        )
        patch = "PATCH of a product with 1 / 40 changes unnumbered"
        waiting = figures["patch_with_waiting_changes"]
        print(
            f"  {patch}: {waiting[1]} / {waiting[40]} (before {' / '.join(map(str, before[patch]))}, design 1 "
            f"{' / '.join(map(str, design_1[patch]))}, target: flat)"
        )
    print()
    print("Where the numbering's units go, per change, transactions recounted as AWS bills them")
    print(f"{'write kind':36} {'k':>4} " + " ".join(f"{part:>14}" for part in PARTS[:-1]) + f" {'all':>6}")
    for name, kind in found["recounted"]["kinds"].items():
        for k in BATCHES:
            parts = kind[f"k={k}"]["numbering_parts_per_change"]
            print(
                f"{name:36} {k:>4} "
                + " ".join(f"{parts.get(part, 0):>14}" for part in PARTS[:-1])
                + f" {kind[f'k={k}']['numbering']:>6}"
            )
    print(f"  the forwarder's DynamoDB requests in all: {found['forwarding_dynamodb_requests']}")
    print()
    print("The write's mark (on the item the write writes anyway): bytes, and the KB the item is billed by")
    print(f"{'write kind':36} {'mark bytes':>10} {'item bytes':>10} {'KB with mark':>12} {'KB without':>10}")
    for name, kind in found["recounted"]["kinds"].items():
        mark = kind["mark"]
        print(
            f"{name:36} {mark['mark_bytes']:>10} {mark['item_bytes']:>10} {mark['item_kb_with_mark']:>12} "
            f"{mark['item_kb_without_mark']:>10}"
        )


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
        pipeline = harness.FeedPipeline("bench-feed-cost")
        meter = harness.attach(table.client(), recount_transactions=True, part_of=part_of)
        found = measure(Bench(call, meter, pipeline, "costs", token, customer))
    finally:
        server.stop()
    print_table(found)
    (ROOT / "bench" / "feed_cost.json").write_text(json.dumps(found, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
