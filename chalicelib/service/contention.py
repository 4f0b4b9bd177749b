"""Retrying a write that lost a race (decisions §8), the service's one idiom: `retried` calls an attempt (read,
decide, write) until it answers something other than a lost race, pausing a jittered moment between attempts, and
gives up with a 409 the client may retry once contention has lasted CONTENTION_SECONDS of the one clock (so a test
moves it). The service's policy on the one retry helper, domain/retry.py; and the one answer to each refusal no
retry mends (`raise_for`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Iterator, TypeVar

from ..domain import retry
from ..domain.errors import Busy, invalid
from ..domain.limits import CONTENTION_SECONDS
from . import clock

if TYPE_CHECKING:
    from ..store import outcomes

ACCOUNT_BUSY = "the account is being changed by many requests at once; try again"  # a write that kept losing races
LOST_CLAIM = "another request with this Idempotency-Key took over; retry to get its answer"
TOO_LARGE = "the delivery has reached the storage limit of one delivery"
MIN_ATTEMPTS = 5

T = TypeVar("T")


def retried(
    attempt: Callable[[], T],
    *,
    again: tuple[type, ...] | None = None,
    minimum: int = MIN_ATTEMPTS,
    seconds: float = CONTENTION_SECONDS,
    busy: str = ACCOUNT_BUSY,
    exhausted: T | None = None,
) -> T:
    """What `attempt()` answers first that is not an outcome of `again`: at least `minimum` attempts, and on until
    contention has lasted `seconds` of the one clock (0: the count alone), with a pause before each but the first;
    then Busy(`busy`), a 409 (a job passes what it answers then, `exhausted`, instead). `again`: lost races unless
    named."""
    again = again or lost_races()
    for n in attempts(minimum, seconds):
        if n:
            back_off(n - 1)
        answered = attempt()
        if not isinstance(answered, again):
            return answered
    if exhausted is not None:
        return exhausted
    raise Busy(busy)


def lost_races() -> tuple[type, ...]:
    """What another attempt may mend: Stale (another write won), Contended (a transaction held an item). Read when
    asked: a cold start that retries nothing loads no outcome (tests/api/test_cold_path.py)."""
    from ..store import outcomes

    return outcomes.Stale, outcomes.Contended


def attempts(minimum: int, seconds: float = CONTENTION_SECONDS) -> Iterator[int]:
    """Attempt numbers: at least `minimum`, and on until contention has lasted `seconds` of the one clock."""
    return retry.attempts(clock.now, minimum, seconds)


def back_off(attempt: int) -> None:
    """A short random pause after a lost race, growing to 0.2 s, so the racers spread out."""
    retry.back_off(attempt, time.sleep, first=0.005, cap=0.2)


def raise_for(refused: outcomes.Refusal, too_large: str = TOO_LARGE) -> None:
    """The one answer of a refusal its use case does not answer itself: a lost Idempotency-Key claim is a 409 (retry
    to get the other request's answer), a lost race not tried again a 409, an item past its storage limit a 400
    on the body (`too_large`). Any other refusal is a fault, raised as one (a 500), never called a storage limit."""
    from ..store import outcomes

    if isinstance(refused, outcomes.LostClaim):
        raise Busy(LOST_CLAIM)
    if isinstance(refused, lost_races()):
        raise Busy(ACCOUNT_BUSY)
    if isinstance(refused, outcomes.TooLarge):
        raise invalid("body", too_large)
    raise Unanswered(refused)


class Unanswered(RuntimeError):
    """A refusal no use case planned for (a fault, not an answer): a 500, logged."""

    def __init__(self, refused: outcomes.Refusal):
        super().__init__(f"a write was refused with {refused!r}, which nothing here answers")
        self.refused = refused
