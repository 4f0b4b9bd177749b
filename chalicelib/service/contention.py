"""Retrying a write that lost a race (decisions §8): keep trying until contention has lasted CONTENTION_SECONDS
of the one clock (so a test moves it), then give up with a 409 the client may retry. The service's policy on the
one retry helper, domain/retry.py."""

import time
from typing import Iterator

from ..domain import retry
from ..domain.limits import CONTENTION_SECONDS
from . import clock

ACCOUNT_BUSY = "the account is being changed by many requests at once; try again"  # a write that kept losing races


def attempts(minimum: int, seconds: float = CONTENTION_SECONDS) -> Iterator[int]:
    """Attempt numbers: at least `minimum`, and on until contention has lasted `seconds` of the one clock."""
    return retry.attempts(clock.now, minimum, seconds)


def back_off(attempt: int) -> None:
    """A short random pause after a lost race, growing to 0.2 s, so the racers spread out."""
    retry.back_off(attempt, time.sleep, first=0.005, cap=0.2)
