"""The dispatcher of events: per-account turns of sending (decisions §10; docs/jobs.md).

An entry point like http/: it turns a trigger into calls of the sending use case (service/event_sending.py)
and owns only the scheduling.
- `make run`: `run_forever(stop_event)` polls the due queue and starts lanes without waiting for them;
- AWS: the table stream (new events and queued resends, `dispatch_new`) and the one-minute schedule
  (`dispatch_due`), both through jobs/handlers.py, with a deadline from the function's timeout.

Fairness: due events are grouped by account into lanes. Lanes run concurrently (at most MAX_LANES at once),
each giving its account one turn (service `send_turn`), so one account's slow or dead receiver holds only its
own lane. Nor does it hold the account's new receiver (decisions §10): an account whose lane sends under webhook
settings a PUT has replaced gets a new lane for its due events at once, and the old lane ends after the attempt
it is making.
"""

import concurrent.futures
import datetime as dt
import itertools
import logging
import threading
from collections import defaultdict

from . import wakeups

log = logging.getLogger("supplier-ordering.webhooks")

MAX_LANES = 32  # lanes sending at once
POLL_SECONDS = 0.5


class Dispatcher:
    """Sends due events in per-account lanes on a pool of threads (docs/jobs.md).

    `transport` replaces the outbound HTTP client (the benchmark's simulated receivers). `bell` (`make run`,
    jobs/wakeups.py): known events of an account whose lane was running are rung again when that lane ends, so
    they wait for that lane, not for the next scan of the queue."""

    def __init__(self, transport=None, lanes: int = MAX_LANES, bell=None):
        self.transport = transport
        self.bell = bell
        self._pool = concurrent.futures.ThreadPoolExecutor(lanes, thread_name_prefix="event-lane")
        self._lanes: dict[str, int] = {}  # each busy account's newest lane
        self._under: dict[int, int] = {}  # each running lane's webhook settings version (once it sent)
        self._numbers = itertools.count(1)
        self._waiting: dict[str, list[dict]] = defaultdict(list)  # known events of busy accounts (with a bell)
        self._lock = threading.Lock()

    def active(self) -> int:
        with self._lock:
            return len(self._lanes)

    def poll(self, deadline: dt.datetime | None = None, known: list[dict] = (), scan: bool = True) -> list:
        """Start a lane for every account with due events and no lane running, or whose lane sends under webhook
        settings replaced since; returns their futures.

        `known` are events the caller holds (the stream's), taken even if the index, which is eventually
        consistent, does not show them yet; scan=False takes only those. No lane claims an event after
        `deadline`.
        """
        from ..service import event_sending as sending

        found = {event["event_id"]: event for event in sending.due_events()} if scan else {}
        for event in known:
            if sending.is_due(event):
                found.setdefault(event["event_id"], event)
        by_account: dict[str, list[dict]] = defaultdict(list)
        for event in found.values():  # send_turn orders each account's events
            by_account[event["account"]].append(event)
        with self._lock:
            running = {a: self._lanes[a] for a in by_account if self._lanes.get(a) in self._under}
        # A read per busy account with due events: only they can wait for an old receiver.
        replaced = {a: lane for a, lane in running.items() if sending.settings_version(a) != self._under.get(lane)}
        with self._lock:
            accounts = [a for a in by_account if a not in self._lanes or self._lanes[a] == replaced.get(a)]
            lanes = {account: next(self._numbers) for account in accounts}
            self._lanes.update(lanes)
            if self.bell is not None:
                for event in known:
                    if event["account"] not in lanes and event["account"] in by_account:
                        self._waiting[event["account"]].append(event)
        try:
            parked = sending.parked(accounts)
        except Exception:
            for account, number in lanes.items():
                self._release(account, number)
            raise
        return [
            self._pool.submit(self._lane, account, number, by_account[account], parked.get(account), deadline)
            for account, number in lanes.items()
        ]

    def _release(self, account: str, number: int) -> None:
        with self._lock:
            self._under.pop(number, None)
            newest = self._lanes.get(account) == number
            if newest:
                del self._lanes[account]
            waiting = self._waiting.pop(account, []) if newest else []
        # A lane a newer one replaced leaves its last event due again at once: the loop reads the queue now.
        if self.bell is not None and (waiting or not newest):
            self.bell.ring(waiting)

    def _lane(self, account: str, number: int, due: list[dict], lane, deadline) -> dict:
        from ..service import event_sending as sending

        def under(version: int) -> None:
            with self._lock:
                self._under[number] = version

        watch = sending.Watch(under, retired=lambda: self._lanes.get(account) != number)
        try:
            turn = sending.send_turn(account, due, lane, deadline, self.transport, watch)
            if self.bell is not None and sum(turn.get(name, 0) for name in _ATTEMPTS) >= sending.PER_TURN:
                self.bell.ring()  # the turn may have left events behind: the loop reads the queue again at once
            return turn
        except Exception:  # noqa: BLE001 - the next poll tries again
            log.exception("events of account %s: the lane stopped; the next poll tries again", account)
            return {"due": len(due)}
        finally:
            self._release(account, number)

    def wait(self, futures: list, timeout: float | None = None) -> dict:
        total = defaultdict(int)
        for future in concurrent.futures.as_completed(futures, timeout=timeout):
            for name, count in future.result().items():
                total[name] += count
        return total

    def close(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=True)


_ATTEMPTS = ("delivered", "retrying", "failed", "resend_failed", "claimed_elsewhere")  # what a turn's sends end in
_SUMMARY = ("due", "delivered", "retrying", "failed", "resend_failed", "claimed_elsewhere", "held_back")


def _run_once(deadline, known, scan, transport) -> dict:
    dispatcher = Dispatcher(transport)
    try:
        total = dispatcher.wait(dispatcher.poll(deadline, known, scan))
    finally:
        dispatcher.close()
    return {name: total.get(name, 0) for name in _SUMMARY}


def dispatch_due(deadline: dt.datetime | None = None, transport=None) -> dict:
    """One run over everything due (the schedule, tests); waits for its lanes. Returns counts of what happened."""
    return _run_once(deadline, (), True, transport)


def dispatch_new(new_events: list[dict], deadline: dt.datetime | None = None) -> dict:
    """The stream's events only, each account in its own lane (parked accounts' events are postponed)."""
    return _run_once(deadline, new_events, False, None)


def run_forever(
    stop_event: threading.Event, interval: float = POLL_SECONDS, dispatcher: Dispatcher | None = None, bell=None
) -> None:
    """`make run`: poll every `interval` until stop_event is set; lanes run on while the next polls happen,
    so a lane waiting on a slow receiver never delays another account's events. With a `bell`
    (jobs/wakeups.py) the events the stream rang it with are sent at once, without reading the queue, and the
    queue is read every `interval` only (the safety net: retries coming due, anything the stream missed)."""
    dispatcher = dispatcher or Dispatcher(bell=bell)
    known: list[dict] = []
    try:
        while not stop_event.is_set():
            try:
                dispatcher.poll(known=known, scan=not known)
            except Exception:  # noqa: BLE001 - the loop must survive a DynamoDB hiccup
                log.exception("polling for due events failed; trying again in %s s", interval)
            rung = wakeups.pause(stop_event, interval, bell)
            known = bell.take_events() if rung and bell is not None else []
    finally:
        dispatcher.close(wait=False)  # a send in progress (at most 10 s) finishes on its own
