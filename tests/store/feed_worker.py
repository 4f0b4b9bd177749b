"""A process of tests/store/test_feed_processes.py: a writer of one account's categories, or make run's stream feeder.

    python -m tests.store.feed_worker writer <n> <count>    per line read from stdin, the next <count> categories:
                                                            create c<n>-<i>, then rename it; ends with stdin
    python -m tests.store.feed_worker feeder <checkpoints>  number the table's stream (localdev/stream.py), keeping
                                                            its place in the file, until killed

The endpoint and table come from AWS_ENDPOINT_URL_DYNAMODB and TABLE_NAME.
"""

import sys
import threading
from pathlib import Path

from chalicelib.domain.errors import Busy
from chalicelib.jobs.wakeups import Bells
from chalicelib.localdev import stream
from chalicelib.service import catalogue

ACCOUNT = "acme"


def committed(write) -> None:
    while True:  # 409 Busy wrote nothing: a client tries again
        try:
            return write()
        except Busy:
            continue


def writer(n: int, count: int) -> None:
    for round_number, _ in enumerate(sys.stdin):
        for i in range(round_number * count, (round_number + 1) * count):
            committed(lambda: catalogue.put_category(ACCOUNT, f"c{n}-{i}", {"name": "v0"}))
            committed(lambda: catalogue.put_category(ACCOUNT, f"c{n}-{i}", {"name": "v1"}))


def feeder(checkpoints: str) -> None:
    """As make run runs it: both stream handlers, ringing loops (none listen here)."""
    stream.feeder(Bells(), Path(checkpoints)).run_forever(threading.Event())


if __name__ == "__main__":
    if sys.argv[1] == "writer":
        writer(int(sys.argv[2]), int(sys.argv[3]))
    else:
        feeder(sys.argv[2])
