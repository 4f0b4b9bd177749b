"""Per-account turns, the one scheduling rule of every kind of background work (decisions §10).

Work read from a shared queue is taken in turns per account, not per unit: each account's first unit, then
each one's second, and so on. However much one account has queued, another's work is at most one turn per
account ahead of it away (docs/jobs.md "Fairness").
"""

from collections import defaultdict
from typing import Callable, Iterable, TypeVar

Unit = TypeVar("Unit")


def rounds(work: Iterable[Unit], account_of: Callable[[Unit], str]) -> list[list[Unit]]:
    """`work` (oldest first) as rounds: the first holds each account's oldest unit, the second each one's next,
    and so on; accounts in the order of their oldest unit."""
    queues: dict[str, list[Unit]] = defaultdict(list)
    for unit in work:
        queues[account_of(unit)].append(unit)
    deepest = max((len(queue) for queue in queues.values()), default=0)
    return [[queue[turn] for queue in queues.values() if turn < len(queue)] for turn in range(deepest)]


def in_turns(work: Iterable[Unit], account_of: Callable[[Unit], str]) -> list[Unit]:
    """`work` reordered so accounts take turns (the rounds one after another)."""
    return [unit for round_ in rounds(work, account_of) for unit in round_]
