"""Issue 34: `make run`'s API processes (localdev/supervisor.py): one that dies is replaced on the same socket while
the others keep serving, each runs at a lower priority than the runner, and replacements that keep failing stop
make run instead of being started forever. A tiny fake API stands in for chalice local."""

import os
import signal
import socket
import subprocess
import sys

import pytest

from chalicelib.localdev import supervisor
from chalicelib.localdev.supervisor import ApiProcesses, StartupFailed

# The fake API: says it is ready, then answers every connection with its pid, on the socket it inherits.
FAKE_API = """
import os, socket, time
sock = socket.socket(fileno=int(os.environ["LOCAL_API_LISTEN_FD"]))
ready = os.environ.get("LOCAL_API_READY_FD")
if ready:
    os.write(int(ready), b".")
    os.close(int(ready))
while not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
    time.sleep(0.01)
while True:
    connection, _ = sock.accept()
    connection.sendall(str(os.getpid()).encode())
    connection.close()
"""
EXITING_API = "import sys; sys.exit(3)"


@pytest.fixture
def api():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    processes = ApiProcesses([sys.executable, "-c", FAKE_API], listener, 2)
    listener.close()  # the supervisor keeps its own duplicate, for the replacements
    processes.start(backlog=16)
    yield processes
    processes.stop()


def answer(api: ApiProcesses) -> int:
    """The pid of the process that answers one connection (bounded by a generous timeout)."""
    with socket.create_connection(api.listener.getsockname(), timeout=30) as connection:
        return int(connection.recv(32))


def kill(process: subprocess.Popen) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def test_an_api_process_killed_is_replaced_on_the_same_socket_while_the_other_serves(api):
    victim, survivor = api.processes
    assert answer(api) in api.pids()

    kill(victim)
    assert answer(api) == survivor.pid  # the other one goes on serving meanwhile
    said: list[str] = []
    ((gone, new),) = api.replace_exited(say=said.append)
    assert gone is victim and new.poll() is None and survivor.poll() is None
    assert said == [f"warning: API process {victim.pid} exited with code -9; started {new.pid} in its place"]

    kill(survivor)  # only the replacement is left: it serves on the socket it inherited
    assert answer(api) == new.pid
    assert [pair[0] for pair in api.replace_exited(say=said.append)] == [survivor]
    assert len(api.pids()) == 2 and all(process.poll() is None for process in api.processes)


def test_the_api_processes_run_at_a_lower_priority_than_the_runner(api):
    runner = os.getpriority(os.PRIO_PROCESS, 0)
    for pid in api.pids():
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, runner + supervisor.API_NICE)


def test_replacements_that_keep_exiting_at_once_stop_make_run(api):
    api.command = [sys.executable, "-c", EXITING_API]
    kill(api.processes[0])
    with pytest.raises(StartupFailed, match="API processes keep exiting"):
        for _ in range(supervisor.MAX_QUICK_EXITS + 1):
            api.replace_exited(say=lambda text: None)
            api.processes[0].wait(timeout=30)
    assert api.processes[1].poll() is None  # the healthy one served throughout
