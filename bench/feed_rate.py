"""One account's write rate against the same writers spread over many accounts (issue 25, docs/feed.md): a section
of `make bench`, also runnable alone (`python bench/feed_rate.py`, which starts its own DynamoDB Local).

The API runs as `make run` runs it: API_PROCESSES processes on one port (chalicelib/localdev/run.py), with the
background loops and the table's stream feeder (which numbers the feed: localdev/stream.py) in this process.
Writers are threads sending PUT /categories/:id over HTTP, each its own category, WRITES_EACH writes; after one
warm-up run (not counted), with 20 and with 50 of them, on one account and then on as many accounts as writers.
Counted: writes per second, answers that are not 200, and the feed's lag at the one-account load: from a write's
answer to its entry being readable by a reader polling GET /changes 20 times a second (p50, p99); the reader, which
numbers nothing (the stream does), runs beside both loads. Each run starts once the stream's numbering has
caught up with the writes before it.
Targets: one account >= 0.8 of the many-accounts rate, 0 refused, lag p99 <= 2 s.
"""

import http.client
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

API_PROCESSES = int(os.environ.get("BENCH_API_PROCESSES", "4"))
WRITES_EACH = int(os.environ.get("BENCH_RATE_WRITES", "20"))
WRITER_COUNTS = (20, 50)
TOKEN = "bench-rate-token-{n:03d}"
SETTLE_SECONDS = 60  # at most, for the stream's numbering to catch up with the writes before a run
WRITTEN: dict[int, int] = {}  # per account: the writes answered 200 so far (one change each)


def account_name(n: int) -> str:
    return f"rate-{n:03d}"


class Connection:
    """One keep-alive HTTP connection of a writer or the reader."""

    def __init__(self, port: int, token: str):
        self.port, self.token, self.conn = port, token, None

    def request(self, method: str, path: str, body=None) -> tuple[int, bytes]:
        for attempt in range(3):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                payload = json.dumps(body).encode() if body is not None else None
                headers = {"Authorization": f"token {self.token}", "Content-Type": "application/json"}
                self.conn.request(method, path, payload, headers)
                response = self.conn.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, OSError):
                self.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def run_writers(port: int, writers: int, accounts: int, lag: bool, label: str) -> dict:
    """`writers` threads, writer n on account n % accounts, each making WRITES_EACH writes of its own category."""
    answered: dict[tuple[str, str, int], float] = {}  # (account, category, k) -> when its answer came
    seen: dict[tuple[str, str, int], float] = {}
    refused: list[int] = []
    written: list[int] = []
    barrier = threading.Barrier(writers + 1)
    done = threading.Event()

    def writer(n: int):
        account = n % accounts
        connection = Connection(port, TOKEN.format(n=account))
        category = f"{label}-w{n}"
        barrier.wait()
        for k in range(WRITES_EACH):
            status, _ = connection.request("PUT", f"/categories/{category}", {"name": f"W{n} {k}"})
            if status == 200:
                answered[(TOKEN.format(n=account), category, k)] = time.perf_counter()
                written.append(account)
            else:
                refused.append(status)

    def reader():
        # A reader of account 0 as its own Lambda instance would be (in this process, beside the API processes the
        # writers keep busy): GET /changes through the service, a GetItem of the head and a Query of the entries.
        from chalicelib.service import changes

        after = changes.read_changes(account_name(0), None, 1, False)["last_sequence"]
        counts: dict[str, int] = {}
        idle = 0
        while True:
            page = changes.read_changes(account_name(0), after, 1000, False)
            now = time.perf_counter()
            for entry in page["changes"]:
                k = counts.get(entry["id"], 0)
                counts[entry["id"]] = k + 1
                seen[(TOKEN.format(n=0), entry["id"], k)] = now
            after = page["last_sequence"]
            idle = 0 if page["changes"] else idle + 1
            # Done when every answered write was seen (or nothing new came for 10 s: counted as unseen).
            if done.is_set() and not page["changes"] and (not lag or len(seen) >= len(answered) or idle > 200):
                break
            time.sleep(0.05)  # a reader polling 20 times a second

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    watcher = threading.Thread(target=reader)  # in both runs, so both carry the same load
    for thread in threads + ([watcher] if watcher else []):
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    for account in written:
        WRITTEN[account] = WRITTEN.get(account, 0) + 1
    done.set()
    if watcher:
        watcher.join()
    result = {
        "writers": writers,
        "accounts": accounts,
        "writes": len(answered),
        "refused": len(refused),
        "seconds": round(seconds, 2),
        "per_second": round(len(answered) / seconds, 1),
    }
    if lag:
        lags = sorted(max(0.0, seen[key] - at) for key, at in answered.items() if key in seen)
        result["lag_p50_s"] = round(statistics.median(lags), 3) if lags else None
        result["lag_p99_s"] = round(lags[max(0, int(len(lags) * 0.99) - 1)], 3) if lags else None
        result["unseen"] = len(answered) - len(lags)
    return result


def settle() -> float:
    """Wait until the stream's numbering has caught up with every write so far (each run starts from a quiet
    stream, as the lag of one run would otherwise carry the backlog of the one before); the seconds waited."""
    from chalicelib.store import feed

    began = time.perf_counter()
    while time.perf_counter() - began < SETTLE_SECONDS:
        if all(feed.read_head(account_name(n)).sequence >= count for n, count in WRITTEN.items()):
            break
        time.sleep(0.1)
    return round(time.perf_counter() - began, 2)


def figures(port: int) -> list[dict]:
    # Warm up first (DynamoDB Local's JIT, the API processes' first requests): the first measured run would
    # otherwise pay for it, and it is a one-account run.
    run_writers(port, max(WRITER_COUNTS), max(WRITER_COUNTS), False, "warm")
    rows = []
    for writers in WRITER_COUNTS:
        waited = settle()
        one = run_writers(port, writers, 1, True, f"one{writers}")
        one["settled_after_s"] = waited
        settle()
        many = run_writers(port, writers, writers, False, f"many{writers}")
        ratio = round(one["per_second"] / many["per_second"], 2) if many["per_second"] else None
        ok = (
            ratio is not None
            and ratio >= 0.8
            and one["refused"] == 0
            and many["refused"] == 0
            and (one["lag_p99_s"] or 0) <= 2.0
        )
        rows.append({"writers": writers, "one_account": one, "many_accounts": many, "ratio": ratio, "ok": ok})
    return rows


def print_section(rows: list[dict]) -> None:
    print()
    print(f"One account's writes against many accounts' ({API_PROCESSES} API processes, DynamoDB Local; docs/feed.md)")
    print(
        f"{'writers':>7} {'1 account w/s':>14} {'N accounts w/s':>15} {'ratio':>6} {'refused':>8} "
        f"{'lag p50':>8} {'lag p99':>8}"
    )
    for row in rows:
        one, many = row["one_account"], row["many_accounts"]
        print(
            f"{row['writers']:>7} {one['per_second']:>14} {many['per_second']:>15} {row['ratio']:>6} "
            f"{one['refused'] + many['refused']:>8} {one['lag_p50_s']:>7}s {one['lag_p99_s']:>7}s"
            f"{'' if row['ok'] else '  MISSED (target: ratio >= 0.8, 0 refused, lag p99 <= 2 s)'}"
        )


def start(endpoint: str, stoppers: list) -> int:
    """Accounts with tokens, then API_PROCESSES API processes on a free port and the background loops here."""
    from chalicelib.localdev import run
    from chalicelib.service import accounts
    from chalicelib.store import table

    run.use_local_endpoint(endpoint)
    table.reset_client()
    table.create_table()
    for n in range(max(WRITER_COUNTS)):
        accounts.create_account(account_name(n), f"Rate {n}", TOKEN.format(n=n))
    listener = run.bind(0)
    port = listener.getsockname()[1]
    quiet = os.open(os.devnull, os.O_WRONLY)  # chalice local logs a line per request on stderr
    saved = os.dup(2)
    os.dup2(quiet, 2)
    try:
        run.start_api(listener, API_PROCESSES, stoppers)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(quiet)
    listener.close()
    stop = threading.Event()
    run.start_background_loops(stop, stoppers)
    stoppers.append(stop.set)
    return port


def main() -> int:
    os.environ.update(TABLE_NAME="bench-rate", SIGNING_SECRET="bench-secret", POWERTOOLS_LOG_LEVEL="WARNING")
    import logging

    logging.disable(logging.INFO)
    from chalicelib.localdev import dynamodb_local

    server = dynamodb_local.start()
    stoppers: list = [server.stop]
    try:
        port = start(server.endpoint, stoppers)
        rows = figures(port)
        print_section(rows)
        (ROOT / "bench" / "feed_rate.json").write_text(json.dumps(rows, indent=2) + "\n")
        return 0 if all(row["ok"] for row in rows) else 1
    finally:
        for stop in reversed(stoppers):
            stop()


if __name__ == "__main__":
    raise SystemExit(main())
