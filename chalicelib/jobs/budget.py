"""Time budgets of background work, derived from the function's timeout (docs/jobs.md).

Work is split into phases (event sending, image downloads, and whatever comes next). In one invocation the
phases run side by side, each in its own thread, so a slow phase never eats another's time. A phase claims no
new unit of work after its deadline: the invocation's end minus the longest one unit may take (a send: 10 s;
a download: 15 s) minus a margin to record it. So a send that may have happened is always recorded before the
function can be cut off, and every phase runs in every invocation.
"""

import datetime as dt
import logging
import threading
from dataclasses import dataclass
from typing import Callable

from ..service import clock
from . import wakeups

log = logging.getLogger("supplier-ordering.jobs")

# .chalice/config.json `lambda_timeout`; tests/jobs/test_budget.py fails when the two disagree.
LAMBDA_TIMEOUT_SECONDS = 30
# Recording the last unit (a few DynamoDB writes, with their retries) and returning.
RECORD_MARGIN_SECONDS = 4


@dataclass(frozen=True)
class Phase:
    """One kind of background work. `run(deadline)` does one bounded run: it claims no unit of work at
    or after `deadline` and returns counts; `busy(counts)` says it left work behind (the local loop goes again
    at once). `loop(stop_event)`, when given, replaces repeated runs in `make run`."""

    name: str
    longest_step_seconds: float
    run: Callable[[dt.datetime], dict]
    busy: Callable[[dict], bool] = lambda counts: False
    loop: Callable[..., None] | None = None  # (stop_event, interval=..., bell=...)
    pause: float = 1.0  # `make run`: seconds between runs that left nothing behind

    def window(self, seconds: float) -> float:
        """How long this phase may start new work in an invocation that has `seconds` to live."""
        return seconds - self.longest_step_seconds - RECORD_MARGIN_SECONDS


def run_phases(phases: list[Phase], remaining_seconds: float | None = None) -> dict:
    """Run the phases side by side within the invocation's time; each phase's failure is logged, not raised."""
    seconds = min(LAMBDA_TIMEOUT_SECONDS, remaining_seconds or LAMBDA_TIMEOUT_SECONDS)
    start = clock.now()
    results: dict[str, dict] = {}

    def run(phase: Phase) -> None:
        deadline = start + dt.timedelta(seconds=phase.window(seconds))
        try:
            results[phase.name] = phase.run(deadline)
        except Exception:  # noqa: BLE001 - the next invocation tries again
            log.exception("background phase %s failed; the next run tries again", phase.name)

    threads = [threading.Thread(target=run, args=(phase,), name=f"phase-{phase.name}") for phase in phases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def loop_forever(phase: Phase, stop_event: threading.Event, interval: float | None = None, bell=None) -> None:
    """`make run`: one run after another until stop_event is set; again at once while the phase is busy. With
    a `bell` (jobs/wakeups.py) a run follows its ring, or `interval`, the safety net, without one."""
    if phase.loop is not None:
        phase.loop(stop_event, interval=interval, bell=bell) if bell is not None else phase.loop(stop_event)
        return
    interval = phase.pause if interval is None else interval
    while not stop_event.is_set():
        busy = False
        try:
            busy = phase.busy(phase.run(clock.after(phase.window(LAMBDA_TIMEOUT_SECONDS))))
        except Exception:  # noqa: BLE001 - the loop must survive a bad item or a DynamoDB hiccup
            log.exception("background phase %s failed; trying again in %s s", phase.name, interval)
        if not busy:
            wakeups.pause(stop_event, interval, bell)
