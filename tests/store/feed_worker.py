"""A process of tests/store/test_feed_processes.py: a writer of one account's categories, or a sequencer.

    python -m tests.store.feed_worker writer <n> <count>   create c<n>-<i>, then rename it, for i < count
    python -m tests.store.feed_worker sequencer            number the account's pending entries until killed

The endpoint and table come from AWS_ENDPOINT_URL_DYNAMODB and TABLE_NAME.
"""

import datetime as dt
import sys

from chalicelib.domain.errors import Busy
from chalicelib.service import catalogue
from chalicelib.store import feed_numbering
from chalicelib.store.feed import FeedBusy

ACCOUNT = "acme"


def committed(write) -> None:
    while True:  # 409 Busy wrote nothing: a client tries again
        try:
            return write()
        except (Busy, FeedBusy):
            continue


def writer(n: int, count: int) -> None:
    for i in range(count):
        committed(lambda: catalogue.put_category(ACCOUNT, f"c{n}-{i}", {"name": "v0"}))
        committed(lambda: catalogue.put_category(ACCOUNT, f"c{n}-{i}", {"name": "v1"}))


def sequencer() -> None:
    while True:
        feed_numbering.number(ACCOUNT, dt.datetime.now(dt.timezone.utc))


if __name__ == "__main__":
    if sys.argv[1] == "writer":
        writer(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sequencer()
