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
    catalogue.put_product(
        "race", "beer", {"status": "ACTIVE", "category": "drinks", "name": "Pale Ale", "price": 150}, None
    )
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
            [
                lambda body=body: raw_request(base_url, "POST", f"{path}/responses", "race-supplier", body)
                for body in bodies
            ]
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
            answer = requests.get(
                f"{base_url}/imports/products/{import_id}", headers={"Authorization": f"token {token}"}, timeout=60
            )
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
        between = [
            r["id"]
            for r in flooding
            if finished["submitted_at"] <= r.get("finished_at", "~") <= finished["finished_at"]
        ]
        assert len(between) <= 1, between
        assert sum(r["status"] == "RUNNING" for r in flooding) >= 1  # the flood was still queued: a real test
    finally:
        table.reset_client()
        code = runner.stop()
    assert code == 0, runner.output()


# --- CONCURRENCY: several API processes on the one port, like Lambda instances behind API Gateway (decisions §1) ---

API_MODULE = b"chalicelib.localdev.api_server"


def api_processes_of(runner_pid: int) -> set[int]:
    """The API processes the runner started: its children running api_server."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if parent == runner_pid and API_MODULE in (entry / "cmdline").read_bytes():
                    pids.add(int(entry.name))
            except (OSError, ValueError, IndexError):
                pass
    return pids


def still_running(pids: set[int]) -> set[int]:
    """Those of the API processes that still run (a zombie has no command line; a reused pid runs something else)."""
    running = set()
    for pid in pids:
        try:
            if API_MODULE in Path(f"/proc/{pid}/cmdline").read_bytes():
                running.add(pid)
        except OSError:
            pass
    return running


def wait_until_gone(pids: set[int], data_dir: Path, seconds: float = 30) -> None:
    """A bound on the wait for the API processes and DynamoDB Local (found by its data directory) to end."""
    deadline = time.monotonic() + seconds
    while (still_running(pids) or processes_mentioning(str(data_dir))) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert still_running(pids) == set() and processes_mentioning(str(data_dir)) == []


def instances_answering(base_url: str, rounds: int = 20, width: int = 12) -> tuple[set[str], list]:
    """Which processes answer bursts of concurrent requests (X-Local-Instance, enabled for tests only), burst after
    burst until three distinct ones were seen or `rounds` ran out; and every answer that was not a 200."""
    seen: set[str] = set()
    failures: list = []
    for _ in range(rounds):
        results = all_at_once(
            [lambda: requests.get(f"{base_url}/products", headers={**auth(), "Connection": "close"}, timeout=60)]
            * width
        )
        for result in results:
            if isinstance(result, Exception) or result.status_code != 200:
                failures.append(result)
            else:
                seen.add(result.headers["X-Local-Instance"])
        if len(seen) >= 3:
            break
    return seen, failures


@pytest.mark.skipif(
    not dynamodb_local.java_available() or dynamodb_local.find_jar() is None,
    reason="needs java 17+ and DynamoDB Local (npm ci)",
)
def test_three_instances_share_the_port_one_killed_is_replaced_and_a_kill_9_of_the_runner_leaves_nothing(tmp_path):
    env = runner_env(LOCAL_DATA_DIR=str(tmp_path), CONCURRENCY="3", LOCAL_INSTANCE_HEADER="1")
    runner, base_url = start(env)
    try:
        assert "Starting the API on port " + env["PORT"] + ": 3 instances (CONCURRENCY) ..." in runner.output()
        assert "3 API processes" in runner.wait_for("Instances:")
        instances = api_processes_of(runner.process.pid)
        assert len(instances) == 3
        assert requests.put(f"{base_url}/categories/kept", json={"name": "Kept"}, headers=auth(), timeout=10).ok
        # Concurrent requests are answered by every one of the three processes, and by no other.
        seen, failures = instances_answering(base_url)
        assert failures == []
        assert seen == {str(pid) for pid in instances}

        # One API process killed: make run goes on, a new one serves in its place (issue 34).
        victim = min(instances)
        os.kill(victim, signal.SIGKILL)
        replaced = runner.wait_for(f"warning: API process {victim} exited with code -9; started ")
        instances = instances - {victim} | {int(replaced.split("started ", 1)[1].split()[0])}
        # The new one answers once it has imported the app (a second or more on a busy machine): bursts until it
        # does, bounded. Twenty bursts of the other two took 0.2 s and it was not listening yet.
        seen, failures = instances_answering(base_url, rounds=500)
        assert failures == [] and runner.process.poll() is None
        assert seen == {str(pid) for pid in instances}  # the new one among them
        assert requests.get(f"{base_url}/categories/kept", headers=auth(), timeout=10).ok

        # The runner killed: its API processes and DynamoDB Local end too, and the port is free again.
        runner.process.kill()
        runner.process.wait(timeout=30)
        wait_until_gone(instances, tmp_path)
    finally:
        runner.stop()

    # Started afresh on the same port and data; then every process of it killed at once.
    runner, _ = start(env)
    try:
        assert "Table local-run-test found." in runner.output()
        instances = api_processes_of(runner.process.pid)
        java = processes_mentioning(str(tmp_path))
        assert (len(instances), len(java)) == (3, 1)
        for pid in [runner.process.pid, *instances, *java]:
            os.kill(pid, signal.SIGKILL)
        runner.process.wait(timeout=30)
        wait_until_gone(instances, tmp_path)
    finally:
        runner.stop()

    # And once more: it starts cleanly, the data is there, and SIGTERM stops every process and DynamoDB Local.
    runner, _ = start(env)
    try:
        again = requests.get(f"{base_url}/categories/kept", headers=auth(), timeout=10)
        assert (again.status_code, again.json()) == (200, {"id": "kept", "name": "Kept"})
        instances = api_processes_of(runner.process.pid)
        assert len(instances) == 3
    finally:
        code = runner.stop()
    assert code == 0, runner.output()
    assert still_running(instances) == set()
    assert processes_mentioning(str(tmp_path)) == []


def test_concurrency_1_serves_with_one_process(tmp_path):
    # Without java (the in-memory store starts at once): what is tested here is the API processes.
    env = runner_env(
        PATH=str(Path(sys.executable).parent), LOCAL_DATA_DIR=str(tmp_path), CONCURRENCY="1", LOCAL_INSTANCE_HEADER="1"
    )
    runner, base_url = start(env)
    try:
        assert "1 instance (CONCURRENCY)" in runner.output()
        assert "1 API process," in runner.wait_for("Instances:")
        instances = api_processes_of(runner.process.pid)
        assert len(instances) == 1
        seen, failures = instances_answering(base_url, rounds=1)
        assert (seen, failures) == ({str(pid) for pid in instances}, [])
    finally:
        code = runner.stop()
    assert code == 0, runner.output()
    assert still_running(instances) == set()


def test_answers_carry_no_instance_header_unless_a_test_asks(runner_table):
    status, headers, _ = raw_request(runner_table, "GET", "/products", "no-such-token")
    assert status == 401 and "X-Local-Instance" not in headers


@pytest.mark.parametrize("value", ["0", "65", "four", "2.5", "-3"])
def test_a_bad_concurrency_is_refused_before_anything_starts(value):
    finished = subprocess.run(
        [sys.executable, "-m", "chalicelib.localdev.run"],
        cwd=REPO_ROOT,
        env=runner_env(CONCURRENCY=value),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 2
    assert finished.stderr == f"error: CONCURRENCY must be a whole number from 1 to 64 (API processes), not {value!r}\n"
    assert finished.stdout == ""
