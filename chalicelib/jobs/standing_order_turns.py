"""The standing-order job (decisions §17): standing orders whose placing moment has come, accounts taking turns.

An entry point like http/: it reads the due queue (every shard, at most READ from each), takes at most
PER_ACCOUNT entries of each account, orders them in per-account turns (jobs/turns.py) and gives each one turn of
the service's use case (service/standing_placing.py `take_turn`) on a pool of WORKERS threads, never starting one
after the run's deadline; then it reads the queue again, round after round, while it holds entries it has not
taken yet in this run. So every standing order of an account that share a placing moment is placed in one run,
however many (decisions §17: within a minute of it, in AWS too), while the accounts of its shards take their turns
beside it. A failure of one turn is logged and never stops the others.

Drivers: AWS runs it in the one-minute schedule (jobs/handlers.py PHASES), which keeps reading the queue every
POLL_SECONDS until the invocation's window ends, so a moment that comes during the minute is acted on within it;
`make run` runs a run every 10 seconds (its own loop, `run_forever`).
"""

import collections
import datetime as dt
import logging
import math
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from .. import config
from ..service import clock
from .budget import LAMBDA_TIMEOUT_SECONDS, Phase
from .turns import in_turns

log = logging.getLogger("supplier-ordering.standing-orders")

READ = 1000  # due entries read from each queue shard in one round (each is small: one page of at most 1 MB)
# Entries of one account a round takes: an account with hundreds due at one moment (bars sharing a cutoff) takes
# its turns round after round beside the other accounts of its shard, never ahead of all of them.
PER_ACCOUNT = 25
STEP_SECONDS = 5.0  # the longest one turn may take: a few reads, and up to three orders placed
POLL_SECONDS = 5.0  # AWS: the queue read again this often while the schedule's invocation may start turns
PAUSE_SECONDS = 10.0  # make run: between runs that left nothing due
# Turns at once. Each is mostly eight requests waiting on DynamoDB (in AWS about 10 ms each), so a few at once place
# 300 bars sharing a moment in seconds; more gain little where one machine runs the store too (bench/README.md).
# STANDING_ORDER_WORKERS=1 takes them one after another (tests on moto: its transactions are not safe at once).
WORKERS = 4


def place_due(deadline: dt.datetime, polls: int = 0) -> dict:
    """Rounds of turns until nothing due is left that this run has not taken, or the deadline; then, `polls` times,
    wait POLL_SECONDS and look again. A round is read again as soon as half the workers are free, so the pool stays
    busy. The counts of the run: `due` the entries the first round found, `left` those still due and untaken when it
    ended."""
    from ..service import standing_placing as placing

    summary = {"due": 0, "left": 0, "placed": 0, "failed": 0, "busy": 0, "crashed": 0}
    taken: set = set()  # (entry, due moment): a turn moves an entry on, so an entry seen again unmoved is not retaken
    first, pending = True, set()
    size = config.standing_order_workers(WORKERS)

    def collect(done) -> None:
        for turn in done:
            for name, count in turn.result().items():
                summary[name] += count

    with ThreadPoolExecutor(max_workers=size, thread_name_prefix="standing-order") as pool:
        while clock.now() < deadline:
            fresh = [item for item in placing.due(READ) if item not in taken]
            if first:
                summary["due"], first = len(fresh), False
            if fresh:
                chosen = shares(fresh, PER_ACCOUNT)
                taken.update(chosen)
                pending |= {
                    pool.submit(_turn, placing, item, deadline) for item in in_turns(chosen, lambda q: q.account)
                }
            elif not pending:
                if polls <= 0 or clock.current().wait(POLL_SECONDS, threading.Event()):
                    break
                polls -= 1
                continue
            while pending and (len(pending) > size // 2 or not fresh):  # nothing new: what runs may queue more
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                collect(done)
        collect(pending)
        summary["left"] = (
            len([item for item in placing.due(READ) if item not in taken]) if clock.now() >= deadline else 0
        )
    return summary


def _turn(placing, item, deadline: dt.datetime) -> dict:
    if clock.now() >= deadline:
        return {"left": 1}  # taken, but not started: the next run takes it
    try:
        turn = placing.take_turn(item)
    except Exception:  # noqa: BLE001 - the standing order stays due and is tried in the next round or run
        log.exception("standing order %s of %s failed in this run", item.standing_id or "(recheck)", item.account)
        return {"crashed": 1}
    return {"placed": turn.placed, "failed": turn.failed, "busy": turn.busy}


def shares(due: list, per_account: int) -> list:
    """The due entries a round takes: at most `per_account` of each account, oldest first."""
    counted: collections.Counter = collections.Counter()
    chosen = []
    for item in due:
        if counted[item.account] < per_account:
            counted[item.account] += 1
            chosen.append(item)
    return chosen


def scheduled(deadline: dt.datetime) -> dict:
    """The one-minute schedule's run: it keeps looking until its window ends (decisions §17: a moment that comes
    while it runs is acted on at once, and the next invocation follows within the minute)."""
    window = (deadline - clock.now()).total_seconds()
    return place_due(deadline, polls=max(0, math.floor(window / POLL_SECONDS)))


def run_forever(stop_event: threading.Event, **_) -> None:
    """`make run`: a run, then PAUSE_SECONDS (a placing moment is acted on within seconds)."""
    while not stop_event.is_set():
        try:
            place_due(clock.after(LAMBDA_TIMEOUT_SECONDS - STEP_SECONDS))
        except Exception:  # noqa: BLE001 - the loop must survive a DynamoDB hiccup
            log.exception("the standing-order run failed; trying again in %s s", PAUSE_SECONDS)
        clock.current().wait(PAUSE_SECONDS, stop_event)


PHASE = Phase("standing-orders", STEP_SECONDS, run=scheduled, loop=run_forever, pause=PAUSE_SECONDS)
