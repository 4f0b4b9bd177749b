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
            connection.request("GET", "/products", headers=auth())
            get = connection.getresponse()
            assert (get.status, get.read().startswith(b'{"products"')) == (200, True)
        connection.close()
    finally:
        code = runner.stop()
    assert code == 0, runner.output()
    assert not (tmp_path / "dynamodb").exists()
