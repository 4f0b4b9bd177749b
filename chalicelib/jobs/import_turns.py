"""The import job: queued catalogue imports advance one slice at a time, accounts taking turns (decisions §12).

An entry point like http/: it runs rounds (jobs/turns.py): each reads the queue and gives the oldest due import
of every account one slice of at most SLICE_SECONDS, never past the run's deadline; advancing a slice (claiming the
import, working on it, giving it back with its checkpoint) is the service's use case (service/importing.py
`advance_import`). A given-back import queues behind the others, so a big file, or 25 of them, never holds another
supplier's import up for more than a turn. Drivers:

- `make run`: `run_forever(stop_event)` in a thread of the local runner;
- AWS: the IMPORTS phase of chalicelib/jobs/handlers.py, run by the table stream (a queued or given-back import)
  and the one-minute schedule within the function's time budget (jobs/budget.py).
"""

import datetime as dt
import itertools
import logging
import threading

from ..domain.limits import IMPORT_CHUNK_SECONDS
from ..service import clock
from . import wakeups
from .turns import rounds

log = logging.getLogger("supplier-ordering.imports")

SLICE_SECONDS = 10.0  # one import's turn before the next account's import gets one
LOCAL_RUN_SECONDS = 30.0  # one run of the `make run` loop (no Lambda timeout there; imports still take turns)
SCAN = 100  # queued imports read from each shard, so a run sees every account's first import
IDLE_SECONDS = 1.0  # an idle loop reads every queue shard once a second


def advance_imports(deadline: dt.datetime) -> dict:
    """Rounds until `deadline`: each round reads the queue again and gives the oldest due import of every
    account one slice, so an import queued meanwhile gets its turn in the next round. Counts of what happened
    (`due`: how many the first read found)."""
    from ..service import importing

    summary = {"due": 0, **{end.value: 0 for end in importing.TurnEnd}, "crashed": 0}
    served: dict[str, int] = {}  # account -> the number of its latest turn in this run
    turns = itertools.count()
    first = True
    while True:
        due = importing.due_imports(SCAN)
        if first:
            summary["due"], first = len(due), False
        round_ = (rounds(due, lambda queued: queued.account) or [[]])[0]
        if not round_:
            return summary
        # Accounts not yet served in this run first, then the least recently served: an import queued while
        # another account's slice runs goes next, not behind that account's older imports.
        round_.sort(key=lambda queued: served.get(queued.account, -1))
        for item in round_:
            served[item.account] = next(turns)
            now = clock.now()
            if now + dt.timedelta(seconds=2 * IMPORT_CHUNK_SECONDS) > deadline:  # set-up and at least one chunk
                return summary
            summary[_slice(item, min(deadline, now + dt.timedelta(seconds=SLICE_SECONDS)))] += 1


def _slice(item, until: dt.datetime) -> str:
    from ..service import importing

    try:
        return importing.advance_import(item, until)
    except Exception:  # noqa: BLE001 - the lease runs out and the next job resumes from the checkpoint
        log.exception("import %s of %s failed in this run; it resumes when its lease ends", item.id, item.account)
        return "crashed"


def run_forever(stop_event: threading.Event, interval: float = IDLE_SECONDS, bell=None) -> None:
    """The `make run` driver: imports advance as soon as they are due; with a `bell` (jobs/wakeups.py), as soon
    as the stream shows one queued, and every `interval` (the safety net) otherwise."""
    while not stop_event.is_set():
        try:
            summary = advance_imports(clock.after(LOCAL_RUN_SECONDS))
        except Exception:  # noqa: BLE001 - a failing store must not end the loop
            log.exception("import run failed")
            summary = {"due": 0}
        if not summary["due"]:
            wakeups.pause(stop_event, interval, bell)
