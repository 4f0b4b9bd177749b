"""Per-account turns, the one scheduling rule of every kind of background work (decisions §10).

Work read from a shared queue is taken in turns per account, not per unit: each account's first unit, then
each one's second, and so on. However much one account has queued, another's work is at most one turn per
account ahead of it away (docs/jobs.md "Fairness").
"""
from collections import defaultdict
from typing import Callable, Iterable, TypeVar

Unit = TypeVar("Unit")


def in_turns(work: Iterable[Unit], account_of: Callable[[Unit], str]) -> list[Unit]:
    """`work` (oldest first) reordered so accounts take turns; accounts in the order of their oldest unit,
    each account's units in their own order."""
    queues: dict[str, list[Unit]] = defaultdict(list)
    for unit in work:
        queues[account_of(unit)].append(unit)
    ordered: list[Unit] = []
    for turn in range(max((len(q) for q in queues.values()), default=0)):
        ordered += [queue[turn] for queue in queues.values() if turn < len(queue)]
    return ordered
