"""The standing-order job (decisions §17): standing orders whose placing moment has come, accounts taking turns.

An entry point like http/: it reads the due queue (every shard, at most SCAN from each), orders what it found
in per-account turns (jobs/turns.py) and gives each standing order one turn of the service's use case
(service/standing_placing.py `place_due`), never starting one after the run's deadline. A failure of one standing
order is logged and never stops the others. Drivers: `make run` runs it every PAUSE_SECONDS (so a placing
moment is acted on within seconds), AWS in the one-minute schedule (jobs/handlers.py).
"""

import datetime as dt
import logging

from ..service import clock
from .budget import Phase
from .turns import in_turns

log = logging.getLogger("supplier-ordering.standing-orders")

SCAN = 100  # due standing orders read from each queue shard in one run
STEP_SECONDS = 10.0  # the longest one turn may take: a few reads, and up to three orders placed
PAUSE_SECONDS = 5.0


def place_due(deadline: dt.datetime) -> dict:
    from ..service import standing_placing as placing

    due = placing.due(SCAN)
    summary = {"due": len(due), "placed": 0, "failed": 0, "busy": 0, "crashed": 0}
    for item in in_turns(due, lambda queued: queued.account):
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


PHASE = Phase(
    "standing-orders", STEP_SECONDS, run=place_due, busy=lambda counts: counts["due"] >= SCAN, pause=PAUSE_SECONDS
)
