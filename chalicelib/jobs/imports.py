"""Running catalogue imports in the background (decisions §12), one bounded step at a time.

`advance_imports(now, deadline)` claims due imports (a lease: GSI3SK moved to its end plus a token every write
checks), works on each for at most SLICE_SECONDS and never past `deadline`, and gives it back to the queue with
its checkpoint, behind the imports of other accounts: a big file never holds another supplier's import up. A job
that dies leaves its lease to run out; the next one resumes from the last committed chunk. Drivers:

- `make run`: `run_forever(stop_event)` in a thread of the local runner;
- AWS: the IMPORTS phase of chalicelib/jobs/handlers.py, run by the table stream (a queued or given-back import)
  and the one-minute schedule within the function's time budget (jobs/budget.py).
"""
import datetime as dt
import logging
import threading
import time

from ..service import imports as import_service
from ..store import keys
from . import budget

log = logging.getLogger("supplier-ordering.imports")

SLICE_SECONDS = 10.0  # one import's turn before the next due import gets one
LOCAL_RUN_SECONDS = 30.0  # one run of the `make run` loop (no Lambda timeout there; imports still take turns)
BATCH = 10
IDLE_SECONDS = 0.5


def _utc(now: dt.datetime) -> dt.datetime:
    return now.astimezone(dt.timezone.utc) if now.tzinfo else now.replace(tzinfo=dt.timezone.utc)


def advance_imports(now: dt.datetime, deadline: float, limit: int = BATCH) -> dict:
    """Work on the imports due at `now` until `deadline` (a time.monotonic() value); counts of what happened."""
    now = _utc(now)
    summary = {"due": 0, "done": 0, "failed": 0, "paused": 0, "lost": 0, "claimed_elsewhere": 0, "crashed": 0}
    due = import_service.due_imports(now, limit)
    summary["due"] = len(due)
    for item in due:
        remaining = deadline - time.monotonic()
        if remaining < 2 * import_service.CHUNK_SECONDS:  # time for the slice's set-up and at least one chunk
            break
        try:
            outcome = import_service.advance_import(item, now, min(deadline, time.monotonic() + SLICE_SECONDS))
        except Exception:  # noqa: BLE001 - the lease runs out and the next job resumes from the checkpoint
            log.exception("import %s of %s failed in this run; it resumes when its lease ends", item["id"], item["account"])
            outcome = "crashed"
        summary[outcome] += 1
    return summary


def run_phase(deadline: dt.datetime, clock) -> dict:
    """One run as a `budget.Phase`: due imports advance until `deadline` (jobs/handlers.py IMPORTS)."""
    now = clock()
    return advance_imports(now, time.monotonic() + max(0.0, (deadline - now).total_seconds()))


def wakes(record_name: str, new_image: dict | None) -> bool:
    """A stream record of an import waiting for a job: queued, or given back after a slice (not one leased)."""
    image = new_image or {}
    return (image.get("GSI3PK") or {}).get("S") == keys.IMPORTS_PENDING and "lease" not in image


def run_forever(stop_event: threading.Event) -> None:
    """The `make run` driver: imports advance as soon as they are due."""
    while not stop_event.is_set():
        try:
            summary = advance_imports(budget.now(), time.monotonic() + LOCAL_RUN_SECONDS)
        except Exception:  # noqa: BLE001 - a failing store must not end the loop
            log.exception("import run failed")
            summary = {"due": 0}
        if not summary["due"]:
            stop_event.wait(IDLE_SECONDS)
