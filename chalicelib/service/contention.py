"""Retrying a write that lost a race (decisions §8): keep trying until contention has lasted CONTENTION_SECONDS
of the one clock (so a test moves it), then give up with a 409 the client may retry. The service's policy on the
one retry helper, domain/retry.py."""

import time
from contextlib import contextmanager
from typing import Iterator

from ..domain import retry
from ..domain.errors import Busy, ServiceError
from ..domain.limits import CONTENTION_SECONDS
from . import clock

ACCOUNT_BUSY = "the account is being changed by many requests at once; try again"  # a write that kept losing races
# A resource with FEED_PENDING_PER_RESOURCE changes waiting for their feed sequences (docs/feed.md): numbering
# takes them within §13's 5 seconds (the stream, the sweep, any reader of the feed), so a retry after that fits.
FEED_BACKLOG = (
    "this resource has too many changes waiting for their place in the change feed; retry after Retry-After seconds"
)
FEED_BACKLOG_RETRY_AFTER = 5


def attempts(minimum: int, seconds: float = CONTENTION_SECONDS) -> Iterator[int]:
    """Attempt numbers: at least `minimum`, and on until contention has lasted `seconds` of the one clock."""
    return retry.attempts(clock.now, minimum, seconds)


def back_off(attempt: int) -> None:
    """A short random pause after a lost race, growing to 0.2 s, so the racers spread out."""
    retry.back_off(attempt, time.sleep, first=0.005, cap=0.2)


@contextmanager
def kept_losing_as_busy():
    """A write the store gave up on after losing every attempt (feed.FeedBusy: its feed entries stayed held, or
    hold the most unnumbered changes a resource may have) is Busy: nothing was written and the client may try
    again. Every use case runs inside this, at the edges that call the service (http/endpoint.py, cli.py)."""
    try:
        yield
    except ServiceError:
        raise  # a 404 of a cold read loads none of the write path
    except Exception as error:
        from ..store.feed import FeedBacklog, FeedBusy  # only for a failure the service did not name

        if isinstance(error, FeedBacklog):
            raise Busy(FEED_BACKLOG, FEED_BACKLOG_RETRY_AFTER) from error
        if isinstance(error, FeedBusy):
            raise Busy(ACCOUNT_BUSY) from error
        raise
