"""Retrying a write that lost a race (decisions §8): keep trying until contention has lasted CONTENTION_SECONDS
of the one clock (so a test moves it), then give up with a 409 the client may retry."""
import random
import time
from typing import Iterator

from ..domain.limits import CONTENTION_SECONDS
from . import clock


def attempts(minimum: int) -> Iterator[int]:
    """Attempt numbers: at least `minimum`, and on until contention has lasted CONTENTION_SECONDS."""
    give_up_at = clock.after(CONTENTION_SECONDS)
    attempt = 0
    while attempt < minimum or clock.now() < give_up_at:
        yield attempt
        attempt += 1


def back_off(attempt: int) -> None:
    """A short random pause after a lost race, growing to 0.2 s, so the racers spread out."""
    time.sleep(random.uniform(0, min(0.005 * 2**attempt, 0.2)))
