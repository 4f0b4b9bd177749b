"""The standing-order job (decisions §17): standing orders whose placing moment has come, accounts taking turns.

An entry point like http/: it reads the due queue (every shard, at most READ from each), takes at most
PER_ACCOUNT standing orders of each account, orders them in per-account turns (jobs/turns.py) and gives each
one turn of the service's use case
(service/standing_placing.py `place_due`), never starting one after the run's deadline. A failure of one standing
order is logged and never stops the others. Drivers: `make run` runs it every PAUSE_SECONDS (so a placing
moment is acted on within seconds), AWS in the one-minute schedule (jobs/handlers.py).
"""

import collections
import datetime as dt
import logging

from ..service import clock
from .budget import Phase
from .turns import in_turns

log = logging.getLogger("supplier-ordering.standing-orders")

READ = 1000  # due entries read from each queue shard in one run (each is small: one page of at most 1 MB)
# Standing orders of one account a run takes: an account with hundreds due at one moment (bars sharing a cutoff)
# takes its turns run after run without holding up the other accounts of its shard (the queue is oldest first).
PER_ACCOUNT = 10
STEP_SECONDS = 10.0  # the longest one turn may take: a few reads, and up to three orders placed
PAUSE_SECONDS = 5.0


def place_due(deadline: dt.datetime) -> dict:
    from ..service import standing_placing as placing

    due = placing.due(READ)
    chosen = shares(due, PER_ACCOUNT)
    # `left`: due beyond their accounts' shares; the loop goes again at once while there are any.
    summary = {"due": len(due), "left": len(due) - len(chosen), "placed": 0, "failed": 0, "busy": 0, "crashed": 0}
    for item in in_turns(chosen, lambda queued: queued.account):
        if clock.now() >= deadline:
            break
        try:
            turn = placing.place_due(item)
        except Exception:  # noqa: BLE001 - the standing order stays due and is tried in the next run
            log.exception("standing order %s of %s failed in this run", item.standing_id, item.account)
            summary["crashed"] += 1
            continue
        summary["placed"] += turn.placed
        summary["failed"] += turn.failed
        summary["busy"] += turn.busy
    return summary


def shares(due: list, per_account: int) -> list:
    """The due standing orders a run takes: at most `per_account` of each account, oldest first."""
    taken: collections.Counter = collections.Counter()
    chosen = []
    for item in due:
        if taken[item.account] < per_account:
            taken[item.account] += 1
            chosen.append(item)
    return chosen


PHASE = Phase(
    "standing-orders",
    STEP_SECONDS,
    run=place_due,
    busy=lambda counts: counts["left"] > 0 or counts["due"] >= READ,
    pause=PAUSE_SECONDS,
)
