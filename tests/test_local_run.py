"""`make run` end to end: the runner serves the API, keeps data across a restart and stops cleanly."""
import http.client
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from chalicelib.localdev import dynamodb_local

REPO_ROOT = Path(__file__).resolve().parents[1]
TOKEN = "local-run-test-token"
START_TIMEOUT_SECONDS = 120


class Runner:
    """`python -m chalicelib.localdev.run` in the background, its output read line by line."""

    def __init__(self, env: dict):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "chalicelib.localdev.run"],
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            self.lines.append(line)
            if text in line:
                return line
        self.stop()
        pytest.fail(f"runner never printed {text!r}; output:\n{self.output()}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise

    def output(self) -> str:
        return "".join(self.lines)


def free_port() -> int:
    """A free port below the usual ephemeral range, which outgoing connections may take at any moment."""
    for _ in range(100):
        port = random.randint(20000, 32000)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port found")


def processes_mentioning(text: str) -> list[int]:
    """Pids whose command line contains text (used with a unique temporary path)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def runner_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
    # TABLE_NAME reaches the API process too: its token check finds the account only in that table.
    env.update(SUPPLIER_TOKEN=TOKEN, PORT=str(free_port()), TABLE_NAME="local-run-test", **extra)
    return env


def start(env: dict) -> tuple[Runner, str]:
    runner = Runner(env)
    line = runner.wait_for("Base URL:")
    return runner, line.split("Base URL:", 1)[1].strip()


def auth() -> dict:
    return {"Authorization": f"token {TOKEN}"}


@pytest.mark.skipif(
    not dynamodb_local.java_available() or dynamodb_local.find_jar() is None,
    reason="needs java 17+ and DynamoDB Local (npm ci)",
)
def test_the_runner_serves_keeps_data_across_a_restart_and_stops_java_on_sigterm(tmp_path):
    env = runner_env(LOCAL_DATA_DIR=str(tmp_path))
    runner, base_url = start(env)
    try:
        assert base_url == f"http://127.0.0.1:{env['PORT']}"
        assert "Table local-run-test created." in runner.output()
        assert TOKEN in runner.wait_for("Supplier token:")
        assert len(processes_mentioning(str(tmp_path))) == 1  # DynamoDB Local, with its data in tmp_path

        assert requests.get(f"{base_url}/products", headers=auth(), timeout=10).status_code == 200
        assert requests.get(f"{base_url}/products", timeout=10).status_code == 401
        created = requests.put(f"{base_url}/categories/kept", json={"name": "Kept"}, headers=auth(), timeout=10)
        assert created.status_code == 200
    finally:
        code = runner.stop()
    assert code == 0, runner.output()
    assert processes_mentioning(str(tmp_path)) == []

    runner, base_url = start(env)
    try:
        assert "Table local-run-test found." in runner.output()
        again = requests.get(f"{base_url}/categories/kept", headers=auth(), timeout=10)
        assert (again.status_code, again.json()) == (200, {"id": "kept", "name": "Kept"})
    finally:
        assert runner.stop() == 0, runner.output()
    assert processes_mentioning(str(tmp_path)) == []


def test_without_java_the_runner_serves_from_memory_and_says_so(tmp_path):
    # A PATH without java; the runner and chalice are found through the interpreter's own directory.
    env = runner_env(PATH=str(Path(sys.executable).parent), LOCAL_DATA_DIR=str(tmp_path))
    runner, base_url = start(env)
    try:
        assert "NOTHING WILL BE PERSISTED" in runner.output()
        assert requests.get(f"{base_url}/products", headers=auth(), timeout=10).status_code == 200
        # Methods chalice local's own server does not know reach the app too (it answered a 501 HTML page).
        trace = requests.request("TRACE", f"{base_url}/products", headers=auth(), timeout=10)
        assert (trace.status_code, trace.headers["Content-Type"]) == (405, "application/problem+json")
        assert trace.headers["Allow"] == "GET, HEAD, OPTIONS, POST"
        # A HEAD answer carries no body, so the next request on the kept-alive connection reads its own status.
        connection = http.client.HTTPConnection(*base_url.removeprefix("http://").split(":"), timeout=10)
        for path in ("/products", "/no/such/path"):
            connection.request("HEAD", path, headers=auth())
            head = connection.getresponse()
            assert head.read() == b"" and head.getheader("X-Request-Id")
            connection.request("GET", path, headers=auth())
            same = connection.getresponse()
            assert (head.status, head.getheader("Content-Length")) == (same.status, str(len(same.read())))
            connection.request("GET", "/products", headers=auth())
            get = connection.getresponse()
            assert (get.status, get.read().startswith(b'{"products"')) == (200, True)
        connection.close()
    finally:
        code = runner.stop()
    assert code == 0, runner.output()
    assert not (tmp_path / "dynamodb").exists()


# --- bursts against one running `make run` (decisions §1, §8) ---

BURST = 100
RACE_RUNS, RACE_WIDTH = 20, 20
USER = {"name": "Olli Orderer", "email": "olli@example.com"}
ADDRESS = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One runner for the burst tests (DynamoDB Local when java is there, else the in-memory store); yields
    (base URL, DynamoDB endpoint). The test process writes to the same table through the endpoint."""
    env = runner_env(LOCAL_DATA_DIR=str(tmp_path_factory.mktemp("burst")))
    runner, base_url = start(env)
    endpoint = runner.wait_for("DynamoDB:").split("DynamoDB:", 1)[1].split()[0]
    try:
        yield base_url, endpoint, env["TABLE_NAME"]
    finally:
        code = runner.stop()
    assert code == 0, runner.output()


@pytest.fixture
def runner_table(served, monkeypatch):
    from chalicelib.store import table

    base_url, endpoint, table_name = served
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
    monkeypatch.setenv("TABLE_NAME", table_name)
    table.reset_client()
    yield base_url
    table.reset_client()


def raw_request(base_url: str, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict, dict]:
    """One request on a connection of its own: (status, headers, JSON body)."""
    import http.client
    import json
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        headers = {"Authorization": f"token {token}", "Connection": "close"}
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body), "application/json"
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), json.loads(response.read() or b"null")
    finally:
        connection.close()


def all_at_once(calls: list) -> list:
    """Run each call in its own thread, released together; their results in order (an exception is a result)."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(i, call):
        barrier.wait()
        try:
            results[i] = call()
        except Exception as error:  # noqa: BLE001 - reported by the caller's assertion
            results[i] = error

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return results


def test_a_hundred_connections_at_once_each_get_their_own_answer(runner_table):
    from chalicelib.service import accounts, catalogue

    base_url = runner_table
    for i in range(BURST):
        accounts.create_account(f"burst-{i}", None, f"burst-token-{i}")
        catalogue.put_category(f"burst-{i}", f"only-{i}", {"name": f"Category of {i}"})

    results = all_at_once(
        [lambda i=i: raw_request(base_url, "GET", "/categories", f"burst-token-{i}") for i in range(BURST)]
    )

    errors = [result for result in results if isinstance(result, Exception)]
    assert errors == []  # none refused, reset or timed out
    for i, (status, _, body) in enumerate(results):
        assert (status, body) == (200, {"categories": [{"id": f"only-{i}", "name": f"Category of {i}"}]})


def test_twenty_concurrent_responses_are_all_appended_twenty_runs_in_a_row(runner_table):
    from chalicelib.service import accounts, catalogue, customers

    base_url = runner_table
    accounts.create_account("race", None, "race-supplier")
    catalogue.put_category("race", "drinks", {"name": "Drinks"})
    catalogue.put_product("race", "beer", {"status": "ACTIVE", "category": "drinks", "name": "Pale Ale", "price": 150}, None)
    customers.put_customer("race", "c1", {"name": "Bar", "address": ADDRESS})
    status, _, token = raw_request(base_url, "POST", "/customers/c1/tokens", "race-supplier")
    assert status == 200
    customer_token = token["token"]

    for run in range(RACE_RUNS):
        order = {"items": [{"id": "beer", "count": 1}], "user": USER}
        status, _, placed = raw_request(base_url, "POST", "/customer/deliveries", customer_token, order)
        assert status == 200
        path = f"/deliveries/{placed['deliveries'][0]['id']}"
        assert raw_request(base_url, "POST", f"{path}/responses", "race-supplier", {"type": "ACCEPT"})[0] == 200

        bodies = [{"type": "UPDATE" if i % 2 else "ACCEPT", "reference": f"r{run}-{i}"} for i in range(RACE_WIDTH)]
        results = all_at_once(
            [lambda body=body: raw_request(base_url, "POST", f"{path}/responses", "race-supplier", body) for body in bodies]
        )
        assert [r if isinstance(r, Exception) else r[0] for r in results] == [200] * RACE_WIDTH, f"run {run}"
        _, _, delivery = raw_request(base_url, "GET", path, "race-supplier")
        references = sorted(r.get("reference") for r in delivery["responses"][1:])
        assert (delivery["status"], references) == ("ACCEPTED", sorted(b["reference"] for b in bodies)), f"run {run}"


# --- background work takes turns per account under `make run` (decisions §10, issue 16 finding 6) ---


@pytest.mark.skipif(
    not dynamodb_local.java_available() or dynamodb_local.find_jar() is None,
    reason="needs java 17+ and DynamoDB Local (npm ci)",
)
def test_25_queued_imports_of_one_account_do_not_hold_up_another_accounts_small_import(tmp_path, monkeypatch):
    from chalicelib.service import accounts
    from chalicelib.store import table

    env = runner_env(LOCAL_DATA_DIR=str(tmp_path))
    runner, base_url = start(env)
    try:
        endpoint = runner.wait_for("DynamoDB:").split("DynamoDB:", 1)[1].split()[0]
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
        monkeypatch.setenv("TABLE_NAME", env["TABLE_NAME"])
        table.reset_client()
        accounts.create_account("flood", None, "flood-token")
        accounts.create_account("small", None, "small-token")

        def upload(token: str, rows: int, prefix: str) -> str:
            text = "Item ID;Item name;Category name;Price\n" + "".join(
                f"{prefix}{n:05d};Product {n};Drinks;1,50\n" for n in range(rows)
            )
            response = requests.post(
                f"{base_url}/imports/products",
                data=text.encode(),
                headers={"Authorization": f"token {token}", "Content-Type": "text/csv"},
                timeout=60,
            )
            assert response.status_code == 202, response.text
            return response.json()["id"]

        def report(token: str, import_id: str) -> dict:
            answer = requests.get(f"{base_url}/imports/products/{import_id}", headers={"Authorization": f"token {token}"}, timeout=60)
            return answer.json()

        flood = [upload("flood-token", 2000, f"f{n:02d}-") for n in range(25)]  # each longer than a slice
        small = upload("small-token", 2, "s-")
        for _ in range(600):  # a bound on the wait, not a timing assertion
            finished = report("small-token", small)
            if finished["status"] != "RUNNING":
                break
            time.sleep(0.2)
        assert finished["status"] == "DONE" and finished["created"] == 2, finished
        # Between the small import's submission and its end the flooding account had one turn: at most the
        # import it was working on when the small one was queued could finish in between (with one queue read
        # in order, all of the flood still running would have gone first).
        flooding = [report("flood-token", i) for i in flood]
        between = [r["id"] for r in flooding if finished["submitted_at"] <= r.get("finished_at", "~") <= finished["finished_at"]]
        assert len(between) <= 1, between
        assert sum(r["status"] == "RUNNING" for r in flooding) >= 1  # the flood was still queued: a real test
    finally:
        table.reset_client()
        code = runner.stop()
    assert code == 0, runner.output()
