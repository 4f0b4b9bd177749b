"""`make run` as the issue-34 benchmarks drive it: started on a free port with its own data, measured from /proc.

Only one at a time: each benchmark starts its own and stops it (SIGTERM) before the next.
"""

import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Another tree's `make run` (a `git archive` of an older commit with node_modules linked in), for before/after.
TREE = Path(os.environ.get("BENCH_TREE") or ROOT)
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalRun:
    """`python -m chalicelib.localdev.run` (what `make run` starts) on a free port, in a data directory of its own."""

    def __init__(self, token: str = "bench-issue34-token", **env):
        self.port = free_port()
        self.data = tempfile.TemporaryDirectory(prefix="bench-run-")
        self.token = token
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")},
            "PORT": str(self.port),
            "LOCAL_DATA_DIR": self.data.name,
            "SUPPLIER_TOKEN": token,
            "TABLE_NAME": "bench-issue34",
            **env,
        }
        self.lines: queue.Queue = queue.Queue()
        self.process: subprocess.Popen | None = None
        self.endpoint = ""

    def __enter__(self) -> "LocalRun":
        self.process = subprocess.Popen(
            [sys.executable, "-m", "chalicelib.localdev.run"],
            cwd=TREE,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        self.endpoint = self.wait_for("DynamoDB:").split("DynamoDB:", 1)[1].split()[0]
        self.wait_for("Press Ctrl-C")
        return self

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, text: str, seconds: float = 180) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            if text in line:
                return line
        raise RuntimeError(f"make run never printed {text!r}")

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.data.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def use_table(self) -> None:
        """Point this process's store at make run's table (to set accounts up directly)."""
        from chalicelib.store import table

        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = self.endpoint
        os.environ["TABLE_NAME"] = self.env["TABLE_NAME"]
        os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
        os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
        table.reset_client()

    def processes(self) -> set[int]:
        """Every process it started: its descendants, whatever session they run in (java, the API processes)."""
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                children.setdefault(parent, []).append(int(entry.name))
        found, todo = set(), [self.process.pid]
        while todo:
            pid = todo.pop()
            found.add(pid)
            todo.extend(children.get(pid, []))
        return found


def cpu_ticks(pids: set[int]) -> dict[int, int]:
    """utime + stime of each process still there (its threads included)."""
    ticks = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks[pid] = int(fields[11]) + int(fields[12])
    return ticks


def command_of(pid: int) -> str:
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    text = b" ".join(words).decode(errors="replace")
    if "java" in words[0].decode(errors="replace"):
        return "java (DynamoDB Local)"
    if "api_server" in text:
        return "API process"
    return "make run (runner, stream, loops)"


def cpu_share(run: LocalRun, seconds: float) -> dict:
    """Percent of one core each kind of process used over `seconds` (and all of them together)."""
    pids = run.processes()
    before, start = cpu_ticks(pids), time.monotonic()
    time.sleep(seconds)
    after, elapsed = cpu_ticks(pids), time.monotonic() - start
    shares: dict[str, float] = {}
    for pid, ticks in after.items():
        kind = command_of(pid)
        shares[kind] = shares.get(kind, 0.0) + (ticks - before.get(pid, ticks)) / TICKS / elapsed * 100
    return {"total": round(sum(shares.values()), 1), **{k: round(v, 1) for k, v in sorted(shares.items())}}
