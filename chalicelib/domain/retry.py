"""The one way to retry a write that lost a race (issue 26.3): attempt numbers bounded by a count and a deadline,
and a jittered pause between attempts.

Pure: the caller hands in its clock (`now`, the service's clock.now) and the pause (`sleep`), so a test moves the
deadline with its fake clock and skips the pauses; nothing here reads the time. The store uses it with the clock
its caller passes down, so neither layer imports the other's.
"""

import datetime as dt
import random
from typing import Callable, Iterator


def attempts(now: Callable[[], dt.datetime] | None, at_least: int, for_seconds: float) -> Iterator[int]:
    """Attempt numbers 0, 1, ...: at least `at_least` of them, and on while `for_seconds` (of `now`'s clock) have
    not passed since the first. The caller breaks out when an attempt got through; running out means give up.
    Without a clock (`now` None) only the count bounds them."""
    give_up_at = now() + dt.timedelta(seconds=for_seconds) if now is not None else None
    attempt = 0
    while attempt < at_least or (give_up_at is not None and now() < give_up_at):
        yield attempt
        attempt += 1


def pause_seconds(
    attempt: int, first: float, cap: float, draw: Callable[[float, float], float] = random.uniform
) -> float:
    """Full jitter: a random pause up to `first` doubled per attempt, never above `cap`, so racing writers spread
    out instead of colliding again in step."""
    return draw(0, min(first * 2 ** min(attempt, 32), cap))  # the exponent bounded: a float overflows past 2**1023


def back_off(attempt: int, sleep: Callable[[float], None], first: float, cap: float) -> None:
    sleep(pause_seconds(attempt, first, cap))
