"""A process of tests/store/test_feed_processes.py: a writer of one account's categories, or make run's stream feeder.

    python -m tests.store.feed_worker writer <n> <count>    per line read from stdin, the next <count> categories:
                                                            create c<n>-<i>, then rename it; ends with stdin
    python -m tests.store.feed_worker feeder <checkpoints>  forward the table's stream to a feed queue of its own
                                                            and number it (localdev/stream.py, localdev/queue.py),
                                                            keeping its place in the file, until killed

The endpoint and table come from AWS_ENDPOINT_URL_DYNAMODB and TABLE_NAME.
"""

import sys
import threading
from pathlib import Path

from chalicelib.domain.errors import Busy
from chalicelib.jobs.wakeups import Bells
from chalicelib.localdev import run
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
    """As make run runs it: both stream handlers, ringing loops (none listen here but the feed queue's poller), the
    feed queue in this process's memory (a kill -9 loses it, as it does make run's)."""
    bells, stoppers, stop = Bells(), [], threading.Event()
    forwarding, numbering = run.stream_loops(bells, stoppers, Path(checkpoints))
    threading.Thread(target=numbering, args=(stop,), daemon=True).start()
    forwarding(stop)


if __name__ == "__main__":
    if sys.argv[1] == "writer":
        writer(int(sys.argv[2]), int(sys.argv[3]))
    else:
        feeder(sys.argv[2])
