"""Issue 34: from a write's answer to its feed entry and to its webhook attempt, against `make run` over HTTP with a
receiver on this machine: `python bench/lag.py`. Writes bench/issue34.json's "lag".

WRITES category creations, one every GAP seconds, the webhook selecting `category.created`; the table's stream
numbers each (make run's feeder, jobs/handlers.number_changes): its entry and its event in one transaction, so an
entry is readable no later than its webhook is attempted. Four ways:
- no reader: the webhook's lag (the entry's is at most that);
- a reader polling GET /changes 20 times a second (reads number nothing): the entry's lag and the webhook's;
- two CPU hogs (`python -c "while 1: pass"`) running, no reader: the webhook's lag (issue 34 point 3);
- PAUSED_WRITES single writes, each after PAUSE seconds of quiet (the stream feeder polls less often when idle).
Target: p99 <= 1 s on a quiet machine. BENCH_LAG_WRITES sets WRITES (a short run).
"""

import contextlib
import http.client
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import issue34_results  # noqa: E402
from bench.localrun import LocalRun  # noqa: E402

WRITES = int(os.environ.get("BENCH_LAG_WRITES", "60"))
GAP = 0.2
PAUSED_WRITES, PAUSE = 5, 11.0  # single writes after a pause longer than the stream feeder's QUIET_AFTER_SECONDS


class Receiver:
    """A webhook receiver on loopback: when each event first arrived, by the id of the resource it is about."""

    def __init__(self):
        self.arrived: dict[str, float] = {}
        arrived = self.arrived

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                about = body.get("id") or (body.get("data") or {}).get("id")  # a feed type's, or a legacy one's
                arrived.setdefault(f"{body.get('type')}:{about}", time.monotonic())
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, keys, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not all(key in self.arrived for key in keys):
            time.sleep(0.05)

    def close(self) -> None:
        self.server.shutdown()


class Api:
    def __init__(self, port: int, token: str):
        self.port, self.token, self.conn = port, token, None

    def call(self, method: str, path: str, body=None, raw: bytes | None = None) -> tuple[int, dict]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        kind = "text/csv" if raw is not None else "application/json"
        headers = {"Authorization": f"token {self.token}", "Content-Type": kind}
        self.conn.request(
            method, path, raw if raw is not None else json.dumps(body) if body is not None else None, headers
        )
        response = self.conn.getresponse()
        return response.status, json.loads(response.read() or b"null")


def quantiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    if not ordered:
        return {"n": 0}
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {
        "n": len(ordered),
        "p50_s": round(pick(0.5), 3),
        "p99_s": round(pick(0.99), 3),
        "max_s": round(ordered[-1], 3),
    }


class Reader(threading.Thread):
    """Polls GET /changes 20 times a second, as a reader of its own; when each entry was first seen."""

    def __init__(self, port: int, token: str):
        super().__init__(daemon=True)
        self.api, self.seen, self.stop = Api(port, token), {}, threading.Event()
        self.after = self.api.call("GET", "/changes?after=latest")[1]["last_sequence"]

    def run(self):
        while not self.stop.wait(0.05):
            status, page = self.api.call("GET", f"/changes?after={self.after}&limit=1000")
            if status == 200:
                for entry in page["changes"]:
                    self.seen.setdefault(f"{entry['type']}:{entry['id']}", time.monotonic())
                self.after = page["last_sequence"]


def one_round(run: LocalRun, receiver: Receiver, label: str, reader: bool, writes=WRITES, gap=GAP) -> dict:
    api = Api(run.port, run.token)
    watcher = Reader(run.port, run.token) if reader else None
    if watcher:
        watcher.start()
    answered: dict[str, float] = {}
    for n in range(writes):
        time.sleep(gap)
        key = f"category.created:{label}-{n}"
        status, _ = api.call("PUT", f"/categories/{label}-{n}", {"name": f"Lag {n}"})
        assert status == 200, status
        answered[key] = time.monotonic()
    receiver.wait_for(answered)
    figures = {"webhook": quantiles([receiver.arrived[k] - t for k, t in answered.items() if k in receiver.arrived])}
    figures["webhook"]["missing"] = sum(k not in receiver.arrived for k in answered)
    if watcher:
        time.sleep(1)
        watcher.stop.set()
        watcher.join()
        figures["entry"] = quantiles([watcher.seen[k] - t for k, t in answered.items() if k in watcher.seen])
    return figures


@contextlib.contextmanager
def cpu_hogs(count: int = 2):
    hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def measure() -> dict:
    receiver = Receiver()
    try:
        with LocalRun() as run:
            api = Api(run.port, run.token)
            status, _ = api.call(
                "PUT", "/account/settings/webhooks", {"url": receiver.url, "events": ["category.created"]}
            )
            assert status == 200, status
            time.sleep(5)
            results = {"writes": WRITES, "gap_s": GAP}
            results["no_reader"] = one_round(run, receiver, "quiet", reader=False)
            results["reader_20_per_s"] = one_round(run, receiver, "read", reader=True)
            with cpu_hogs():
                results["two_cpu_hogs"] = one_round(run, receiver, "hogs", reader=False)
            results["after_a_pause"] = one_round(run, receiver, "paused", False, PAUSED_WRITES, PAUSE)
            return results
    finally:
        receiver.close()


if __name__ == "__main__":
    figures = measure()
    print("write -> feed entry / webhook attempt lag:", json.dumps(figures))
    issue34_results.record("lag", figures)
