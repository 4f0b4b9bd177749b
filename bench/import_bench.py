"""`make bench-import`: a 10,000-row catalogue through POST /imports/products, against one PUT per product.

Generates a realistic file (200 categories by name, bundles, descriptions, labels, decimal-comma prices, `;` as
spreadsheets in German and French locales write it, a few percent invalid rows), imports it into Amazon DynamoDB
Local (in memory) through the Lambda entry point and the same job loop `make run` uses, then imports it again
(every row unchanged), then writes the same catalogue with one PUT /products/:id per row into a fresh account.
Prints rows per second and DynamoDB requests and capacity per row, and writes bench/import.json.
Also times the upload's answer (the 202, not the import) for a file at the limits: 5 MiB, 20,000 rows, each
with a new category name (issue 24.7: planning them must stay linear).
"""

import datetime as dt
import json
import os
import platform
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.update(
    AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1",
    TABLE_NAME="bench-import", SIGNING_SECRET="bench-secret", POWERTOOLS_LOG_LEVEL="WARNING",
)  # fmt: skip

from bench import harness  # noqa: E402

ROWS = int(os.environ.get("BENCH_IMPORT_ROWS", "10000"))
CATEGORIES = 200
INVALID_SHARE = 0.03
TARGETS = {"seconds": 60.0, "requests_per_row": 0.2, "upload_answer_seconds": 2.0}
TOKEN, PUT_TOKEN, UPLOAD_TOKEN = "bench-import-token", "bench-put-token", "bench-upload-token"
HEADER = [
    "Category name", "Item ID", "Item name", "Order by", "Vessel size", "Vessel unit", "Vessel type", "Bundle size",
    "Bundle type", "Bundle GTIN", "Price", "Price per", "Minimum order count", "Status", "GTIN", "Labels",
    "Description", "Manufacturer", "Country", "Allergens", "Storage advice", "ERP internal cost",
]  # fmt: skip
WORDS = "fresh organic crisp dark light smooth bold classic craft premium local alpine citrus dry sweet".split()
LABELS = ["vegan", "organic", "gluten free", "regional", "fair trade", "lactose free"]


def _cell(value: str) -> str:
    return f'"{value}"' if any(c in value for c in ';"\n') else value


def generate(rows: int, seed: int = 13) -> tuple[str, int]:
    """The file's text and how many of its rows are invalid."""
    rng = random.Random(seed)
    categories = [
        f"{rng.choice(WORDS).title()} {kind} {n}"
        for n, kind in enumerate(
            rng.choice(["Beer", "Wine", "Spirits", "Juice", "Water", "Snacks"]) for _ in range(CATEGORIES)
        )
    ]
    lines, invalid = [";".join(HEADER)], 0
    for n in range(rows):
        size, unit = rng.choice([("0,33", "l"), ("0,5", "l"), ("0,75", "l"), ("1", "l"), ("250", "g"), ("1", "kg")])
        bundle = rng.choice([("24", "CT"), ("20", "CR"), ("6", "CA"), ("12", "BX"), ("", "")])
        price = f"{rng.randint(50, 5000) / 100:.2f}".replace(".", ",")
        name = f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {n}"
        description = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))) + ".\nServe chilled."
        row = [
            rng.choice(categories), f"item-{n:05d}", name, "", size, unit, rng.choice(["BO", "CA", "BG", "JR"]),
            bundle[0], bundle[1], f"0{rng.randint(10**11, 10**12 - 1)}" if bundle[0] else "", price, "",
            str(rng.choice([1, 1, 2, 6])), rng.choice(["ACTIVE", "ACTIVE", "ACTIVE", "OUT_OF_STOCK", ""]),
            f"{rng.randint(10**12, 10**13 - 1)}", ", ".join(rng.sample(LABELS, rng.randint(0, 3))), description,
            f"{rng.choice(WORDS).title()} Brewing", rng.choice(["DE", "FR", "AT", "CH"]),
            rng.choice(["", "gluten", "nuts, soy"]), rng.choice(["", "Keep cool and dry"]), "0,42",
        ]  # fmt: skip
        if rng.random() < INVALID_SHARE:
            invalid += 1
            broken = rng.choice(["price", "size", "status", "name"])
            column = {"price": 10, "size": 4, "status": 13, "name": 2}[broken]
            row[column] = {"price": "12.50 EUR", "size": "-1", "status": "SOLD OUT", "name": "X"}[broken]
        lines.append(";".join(_cell(v) for v in row))
    return "\n".join(lines) + "\n", invalid


def generate_new_categories() -> bytes:
    """IMPORT_ROWS rows, each in a category of its own name, padded to IMPORT_FILE_BYTES."""
    from chalicelib.domain.limits import IMPORT_FILE_BYTES, IMPORT_ROWS

    header = "Item ID;Item name;Category name;Price;Description\n"
    lines = [f"new-{n:05d};Product {n};Category {n:05d};1,20;" for n in range(IMPORT_ROWS)]
    pad = (IMPORT_FILE_BYTES - len(header) - sum(len(line) + 1 for line in lines)) // IMPORT_ROWS
    body = (header + "".join(f"{line}{'d' * pad}\n" for line in lines)).encode()
    assert len(body) <= IMPORT_FILE_BYTES, len(body)
    return body


def time_upload_answer(call, body: bytes) -> dict:
    """Seconds from the POST to its 202 (the rows are planned and queued; the import itself runs later)."""
    started = time.perf_counter()
    status, response = call("POST", "/imports/products", raw=body, content_type="text/csv; charset=utf-8")
    seconds = time.perf_counter() - started
    assert status == 202, response
    report = json.loads(response["body"])
    return {"rows": report["rows"], "bytes": len(body), "seconds": round(seconds, 2)}


def run_import(call, meter, body: bytes) -> dict:
    from chalicelib.jobs import import_turns
    from chalicelib.service import clock

    meter.reset()
    started = time.perf_counter()
    status, response = call("POST", "/imports/products", raw=body, content_type="text/csv; charset=utf-8")
    assert status == 202, response
    import_id = json.loads(response["body"])["id"]
    report = None
    while True:  # the loop of `make run` (jobs/import_turns.run_forever), without its idle wait
        import_turns.advance_imports(clock.after(import_turns.LOCAL_RUN_SECONDS))
        requests, capacity = meter.requests, meter.capacity
        _, answer = call("GET", f"/imports/products/{import_id}")
        meter.requests, meter.capacity = requests, capacity  # reading the report is not the import's work
        report = json.loads(answer["body"])
        if report["status"] != "RUNNING":
            break
    seconds = time.perf_counter() - started
    rows = report["rows"]
    return {
        "status": report["status"],
        "seconds": round(seconds, 2),
        "rows_per_second": round(rows / seconds, 1),
        "requests": meter.requests,
        "requests_per_row": round(meter.requests / rows, 4),
        "capacity": round(meter.capacity, 1),
        "capacity_per_row": round(meter.capacity / rows, 2),
        "counts": {k: report[k] for k in ("rows", "created", "updated", "unchanged", "invalid", "categories_created")},
        "operations": {name: meter.operations.count(name) for name in sorted(set(meter.operations))},
    }


def run_puts(call, meter, body: bytes) -> dict:
    """The same catalogue, one PUT /products/:id per valid row (categories made first, as a client would)."""
    from chalicelib.domain import catalogue_import as rules
    from chalicelib.domain import import_file

    parsed = import_file.parse(body)
    plan = rules.CategoryPlan.of({})
    settled = [plan.settle(record) for record in parsed.records]
    mapped = [row.mapped() for row in settled]
    for row, decided in zip(mapped, settled):
        if row.body is not None:
            row.body["category"] = decided.target.create_id
    for target in plan.targets.values():
        call("PUT", f"/categories/{target.create_id}", {"name": target.create_name}, token=PUT_TOKEN)
    meter.reset()
    started = time.perf_counter()
    written = 0
    for row in mapped:
        if row.body is None:
            continue
        product = {k: (float(v) if hasattr(v, "as_tuple") else v) for k, v in row.body.items()}
        product["vessel"] = {
            k: (float(v) if hasattr(v, "as_tuple") else v) for k, v in product.get("vessel", {}).items()
        } or None
        product = {k: v for k, v in product.items() if v is not None}
        product.pop("id")
        status, _ = call("PUT", f"/products/{row.product_id}", product, token=PUT_TOKEN)
        written += status == 200
    seconds = time.perf_counter() - started
    return {
        "seconds": round(seconds, 2),
        "rows_per_second": round(written / seconds, 1),
        "written": written,
        "requests": meter.requests,
        "requests_per_row": round(meter.requests / max(written, 1), 4),
        "capacity": round(meter.capacity, 1),
        "capacity_per_row": round(meter.capacity / max(written, 1), 2),
    }


def main() -> int:
    from chalicelib.localdev import dynamodb_local

    text, invalid = generate(ROWS)
    body = text.encode()
    server = dynamodb_local.start()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
    try:
        from app import app
        from chalicelib.service import accounts
        from chalicelib.store import table

        table.create_table()
        accounts.create_account("bench", "Bench", TOKEN)
        accounts.create_account("bench-put", "Bench PUT", PUT_TOKEN)
        meter = harness.attach(table.client())
        call = harness.LambdaCaller(app, TOKEN)
        call("GET", "/imports/products?limit=1")  # warm the token cache and the route's imports
        first = run_import(call, meter, body)
        print(f"import: {first['seconds']} s", flush=True)
        again = run_import(call, meter, body)
        print(f"re-import: {again['seconds']} s", flush=True)
        puts = run_puts(call, meter, body)
        accounts.create_account("bench-upload", "Bench upload", UPLOAD_TOKEN)
        upload = time_upload_answer(harness.LambdaCaller(app, UPLOAD_TOKEN), generate_new_categories())
        print(f"upload answer: {upload['seconds']} s", flush=True)
    finally:
        server.stop()
    results = {
        "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "file": {"rows": ROWS, "bytes": len(body), "categories": CATEGORIES, "invalid_rows": invalid},
        "import": first,
        "reimport": again,
        "put_per_row": puts,
        "import_vs_put_speedup": round(puts["seconds"] / first["seconds"], 1),
        "upload_answer": upload,
        "targets": TARGETS,
    }
    (ROOT / "bench" / "import.json").write_text(json.dumps(results, indent=2) + "\n")
    print_table(results)
    met = all(r["seconds"] <= TARGETS["seconds"] and r["requests_per_row"] <= TARGETS["requests_per_row"]
              for r in (first, again)) and upload["seconds"] <= TARGETS["upload_answer_seconds"]  # fmt: skip
    return 0 if met else 1


def print_table(results: dict) -> None:
    file = results["file"]
    print(f"file: {file['rows']} rows, {file['bytes']} bytes, {file['categories']} categories, "
          f"{file['invalid_rows']} invalid rows")  # fmt: skip
    print(f"{'run':28} {'seconds':>8} {'rows/s':>8} {'requests':>9} {'req/row':>8} {'capacity':>9} {'cap/row':>8}")
    for name, key in (("import (new catalogue)", "import"), ("re-import (all unchanged)", "reimport"),
                      ("one PUT /products/:id per row", "put_per_row")):  # fmt: skip
        r = results[key]
        print(f"{name:28} {r['seconds']:>8} {r['rows_per_second']:>8} {r['requests']:>9} {r['requests_per_row']:>8} "
              f"{r['capacity']:>9} {r['capacity_per_row']:>8}")  # fmt: skip
    for key in ("import", "reimport"):
        print(f"{key} counts: {results[key]['counts']}; requests: {results[key]['operations']}")
    upload = results["upload_answer"]
    print(
        f"{'upload answer (202), new names':28} {upload['seconds']:>8}   ({upload['rows']} rows, "
        f"{upload['bytes']} bytes, a new category name each; target <= {TARGETS['upload_answer_seconds']:.0f} s)"
    )
    print(f"import is {results['import_vs_put_speedup']}x faster than one PUT per row; targets: <= "
          f"{TARGETS['seconds']:.0f} s and <= {TARGETS['requests_per_row']} requests per row")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
