"""Issue 25: writers and sequencers in several processes on DynamoDB Local, some killed with SIGKILL mid-way.
The feed read whole equals the committed changes, with consecutive sequences; each category's changes in order.
(tests/store/test_feed_store.py crashes a write and the sequencer at each of their steps, in one process.)"""

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from chalicelib.store import feed, feed_numbering, keys, table
from tests.store.feed_worker import ACCOUNT

pytestmark = pytest.mark.pending_feed
ROOT = Path(__file__).resolve().parents[2]
WRITERS = 4
PER_WRITER = 40


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.store.feed_worker", *args], cwd=ROOT, env=dict(os.environ))


def _categories() -> dict[str, str]:
    found, request = (
        {},
        {
            "TableName": table.name(),
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :c)",
            "ExpressionAttributeValues": table.values(pk=keys.account_pk(ACCOUNT), c=keys.CATEGORY_PREFIX),
            "ConsistentRead": True,
        },
    )
    while True:
        response = table.client().query(**request)
        for raw in response["Items"]:
            item = table.from_item(raw)
            found[keys.category_id_of(item)] = (item.get("data") or item).get("name")
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _wait_for(condition, processes) -> None:
    """Until `condition()` holds (progress, not time: no deadline of its own) or every process ended."""
    while not condition():
        if all(p.poll() is not None for p in processes):
            return
        time.sleep(0.05)  # a polling pause, not an interleaving: the condition decides


def _numbered() -> int:
    return feed.read_head(ACCOUNT).sequence


@pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)
def test_writers_and_sequencers_in_processes_killed_mid_way_leave_exactly_the_committed_changes(engine):
    writers = [_spawn("writer", str(n), str(PER_WRITER)) for n in range(WRITERS)]
    sequencer = _spawn("sequencer")
    try:
        _wait_for(lambda: _numbered() >= 20, writers)  # the sequencer is numbering while writers write
        sequencer.send_signal(signal.SIGKILL)
        sequencer.wait()
        _wait_for(lambda: len(_categories()) >= WRITERS * PER_WRITER // 3, writers)
        writers[0].send_signal(signal.SIGKILL)
        writers[0].wait()
        sequencer = _spawn("sequencer")  # a new one takes over whatever the dead one left
        _wait_for(
            lambda: _numbered() >= 2 * len(_categories()) // 3 and len(_categories()) >= WRITERS * PER_WRITER // 2,
            writers[1:],
        )
        sequencer.send_signal(signal.SIGKILL)
        sequencer.wait()
        for process in writers[1:]:
            assert process.wait() == 0
    finally:
        for process in writers + [sequencer]:
            if process.poll() is None:
                process.kill()
                process.wait()

    while not feed_numbering.number(ACCOUNT, dt.datetime.now(dt.timezone.utc)).done:
        pass
    entries, after = [], 0
    while True:
        read = feed.read(ACCOUNT, after, 1000, dt.datetime.now(dt.timezone.utc))
        if not read.entries:
            break
        entries += read.entries
        after = read.entries[-1]["sequence"]
    assert [e["sequence"] for e in entries] == list(range(1, len(entries) + 1))
    stored = _categories()
    committed = Counter(("category.created", c) for c in stored) + Counter(
        ("category.updated", c) for c, name in stored.items() if name == "v1"
    )
    assert Counter((e["type"], e["id"]) for e in entries) == committed
    for category in stored:
        kinds = [e["type"] for e in entries if e["id"] == category]
        assert kinds == ["category.created", "category.updated"][: len(kinds)]
    killed = [c for c in stored if c.startswith("c0-")]
    assert len(killed) < PER_WRITER  # the killed writer did die mid-way
    assert len(stored) >= (WRITERS - 1) * PER_WRITER
