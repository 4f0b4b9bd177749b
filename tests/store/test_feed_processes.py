"""Issues 34 and 43: writers in processes while make run's stream feeder (localdev/stream.py, keeping its place in a
checkpoints file) forwards their changes to its feed queue and its poller numbers them (localdev/queue.py, the queue
in the process's memory); the process is killed with SIGKILL mid-run again and again and started afresh on the same
file. The feed read whole then holds every committed change exactly once, with consecutive
sequences, and each category's changes in the order they were made. On DynamoDB Local: its real stream.
(tests/store/test_local_stream.py takes the feeder's restarts one at a time, in one process.)"""

import datetime as dt
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from chalicelib.store import feed
from tests.store.feed_worker import ACCOUNT

pytestmark = pytest.mark.pending_feed
ROOT = Path(__file__).resolve().parents[2]
WRITERS, ROUNDS, PER_ROUND = 3, 3, 10  # each writer's categories per round; the feeder is killed in every round
COMMITTED = WRITERS * ROUNDS * PER_ROUND * 2  # each category created, then renamed
READS = 1200  # a bound on the table reads of one wait (about a minute), never reached when all goes well


def _spawn(*args: str, **options) -> subprocess.Popen:
    command = [sys.executable, "-m", "tests.store.feed_worker", *args]
    return subprocess.Popen(command, cwd=ROOT, env=dict(os.environ), **options)


def _numbered() -> int:
    return feed.read_head(ACCOUNT).sequence


def _wait_for(condition, feeder: subprocess.Popen) -> None:
    """Read the table until `condition()` holds, at most READS times, each time after waiting up to 50 ms for the
    feeder's process to end (it never should)."""
    for _ in range(READS):
        if condition():
            return
        try:
            code = feeder.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            continue
        pytest.fail(f"the feeder ended by itself with code {code}")
    pytest.fail(f"not reached after {READS} reads of the table: {_numbered()} of {COMMITTED} changes numbered")


def _kill(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait()


def _whole_feed() -> list[dict]:
    entries, after = [], 0
    while True:
        read = feed.read(ACCOUNT, after, 1000, dt.datetime.now(dt.timezone.utc))
        if not getattr(read, "entries", None):
            return entries
        entries += read.entries
        after = read.entries[-1]["sequence"]


@pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)
def test_a_feeder_killed_mid_run_again_and_again_and_restarted_on_its_checkpoints_numbers_every_change_once(
    engine, tmp_path
):
    checkpoints = tmp_path / "stream-checkpoints.json"
    writers = [_spawn("writer", str(n), str(PER_ROUND), stdin=subprocess.PIPE, text=True) for n in range(WRITERS)]
    feeder = _spawn("feeder", str(checkpoints))
    try:
        for _ in range(ROUNDS):
            before = _numbered()
            for writer in writers:  # the round's writes begin
                writer.stdin.write("go\n")
                writer.stdin.flush()
            # Killed once it numbered some of them: most likely amid its next batch, the writers still writing.
            _wait_for(lambda: _numbered() > before, feeder)
            _kill(feeder)
            feeder = _spawn("feeder", str(checkpoints))  # on the same checkpoints, as make run restarted
        for writer in writers:
            writer.stdin.close()
            assert writer.wait() == 0
        _wait_for(lambda: _numbered() == COMMITTED, feeder)
    finally:
        for process in writers + [feeder]:
            _kill(process)

    entries = _whole_feed()
    assert [entry["sequence"] for entry in entries] == list(range(1, COMMITTED + 1))
    categories = [f"c{n}-{i}" for n in range(WRITERS) for i in range(ROUNDS * PER_ROUND)]
    assert Counter((entry["type"], entry["id"]) for entry in entries) == Counter(
        {(kind, category): 1 for category in categories for kind in ("category.created", "category.updated")}
    )
    for category in categories:
        assert [entry["type"] for entry in entries if entry["id"] == category] == [
            "category.created",
            "category.updated",
        ]
