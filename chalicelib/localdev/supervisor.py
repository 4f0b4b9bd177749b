"""`make run`'s API processes: CONCURRENCY of them on one inherited listening socket, each replaced when it dies.

As a Lambda instance that crashes is replaced while the others go on serving, an API process that exits (a kill
-9, a crash) is replaced by a new one on the same socket, which the runner keeps open for that; the others never
stop serving, and DynamoDB Local and the background work go on. The runner itself killed still takes every API
process with it (PR_SET_PDEATHSIG, set by the thread that starts the process: the runner's main thread, which
lives as long as the runner). API processes run at a lower scheduling priority (API_NICE) than the runner, whose
threads do the background work, so under CPU load events are not starved by requests (issue 34).
"""

import functools
import os
import select
import socket
import subprocess
import sys
import threading
import time
from typing import Callable

from . import dynamodb_local

API_NICE = 5  # added to the API processes' niceness: the runner's background work goes first on a busy machine
START_TIMEOUT_SECONDS = 60.0
QUICK_EXIT_SECONDS = 5.0  # a replacement that exits sooner than this is failing to start, not crashing now and then
MAX_QUICK_EXITS = 5  # in a row: then make run stops instead of starting processes forever


class StartupFailed(Exception):
    pass


def _in_child(parent: int, nice: int) -> None:
    """Before exec, in the API process: stop when the runner is gone, and yield the CPU to it."""
    dynamodb_local._die_with_parent(parent)
    if nice:
        os.nice(nice)


class ApiProcesses:
    """`count` processes running `command` on `listener` (a duplicate is kept, so a replacement can inherit it).

    Each is given the socket's descriptor in LISTEN_FD_VARIABLE; the first ones also a pipe in READY_FD_VARIABLE,
    to which each writes one byte once it can serve (api_server.py)."""

    def __init__(self, command: list[str], listener: socket.socket, count: int, cwd=None, nice: int = API_NICE):
        from .api_server import LISTEN_FD_VARIABLE, READY_FD_VARIABLE

        self.command, self.count, self.cwd, self.nice = command, count, cwd, nice
        self.listener = listener.dup()
        self.listen_variable, self.ready_variable = LISTEN_FD_VARIABLE, READY_FD_VARIABLE
        self.processes: list[subprocess.Popen] = []
        self.started: dict[int, float] = {}  # pid -> when it was started
        self.quick_exits = 0

    def _spawn(self, ready_write: int | None = None) -> subprocess.Popen:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", self.listen_variable: str(self.listener.fileno())}
        if ready_write is not None:
            env[self.ready_variable] = str(ready_write)
        process = subprocess.Popen(
            self.command,
            cwd=self.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            pass_fds=(self.listener.fileno(),) + ((ready_write,) if ready_write is not None else ()),
            start_new_session=True,  # Ctrl-C reaches only the runner, which stops the API itself
            preexec_fn=functools.partial(_in_child, os.getpid(), self.nice),
        )
        self.started[process.pid] = time.monotonic()
        return process

    def start(self, backlog: int) -> None:
        """Start them all; the socket listens once every one has loaded the app. StartupFailed says why not."""
        ready_read, ready_write = os.pipe()
        try:
            self.processes = [self._spawn(ready_write) for _ in range(self.count)]
        finally:
            os.close(ready_write)
        try:
            self._wait_until_ready(ready_read)
        finally:
            os.close(ready_read)
        try:
            self.listener.listen(backlog)
        except OSError as error:  # another runner bound the same port meanwhile and listens on it
            port = self.listener.getsockname()[1]
            raise StartupFailed(
                f"port {port} on 127.0.0.1 cannot be used ({error}); stop what uses it or set PORT"
            ) from error

    def _wait_until_ready(self, ready_read: int) -> None:
        ready, deadline = 0, time.monotonic() + START_TIMEOUT_SECONDS
        while ready < self.count:
            exited = [process for process in self.processes if process.poll() is not None]
            if exited:
                raise StartupFailed(
                    f"an API process (chalice local) exited with code {exited[0].returncode} before it served"
                )
            if time.monotonic() > deadline:
                raise StartupFailed(
                    f"{self.count - ready} of {self.count} API processes not ready within {START_TIMEOUT_SECONDS:.0f} s"
                )
            if select.select([ready_read], [], [], 0.2)[0]:
                byte_per_process = os.read(ready_read, self.count)
                ready += len(byte_per_process)
                if not byte_per_process:  # end of file: a process exited without its byte, poll() says which
                    time.sleep(0.05)

    def replace_exited(self, say: Callable[[str], None] = print) -> list[tuple[subprocess.Popen, subprocess.Popen]]:
        """Start a process in place of each one that exited; the (exited, new) pairs. The socket already listens,
        so a replacement serves as soon as it has loaded the app. StartupFailed once replacements keep exiting
        within QUICK_EXIT_SECONDS of their start."""
        replaced = []
        for slot, process in enumerate(self.processes):
            if process.poll() is None:
                continue
            lived = time.monotonic() - self.started.pop(process.pid, 0.0)
            self.quick_exits = self.quick_exits + 1 if lived < QUICK_EXIT_SECONDS else 0
            if self.quick_exits > MAX_QUICK_EXITS:
                raise StartupFailed(f"API processes keep exiting (the last with code {process.returncode}); stopping")
            self.processes[slot] = self._spawn()
            say(
                f"warning: API process {process.pid} exited with code {process.returncode}; "
                f"started {self.processes[slot].pid} in its place"
            )
            replaced.append((process, self.processes[slot]))
        return replaced

    def supervise(self, stop: threading.Event, interval: float = 0.5, say: Callable[[str], None] = print) -> None:
        """Replace exited processes until `stop` is set (make run: until Ctrl-C or SIGTERM interrupts it)."""
        while not stop.is_set():
            self.replace_exited(say)
            stop.wait(interval)

    def pids(self) -> set[int]:
        return {process.pid for process in self.processes}

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.listener.close()


def api_command(port: int) -> list[str]:
    """`chalice local`, with every HTTP method passed to the app (api_server.py says why)."""
    return [sys.executable, "-m", "chalicelib.localdev.api_server"] + [
        "local",
        "--stage",
        "local",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-autoreload",
    ]
