"""Sending webhook events from the outbox (decisions §10), fairly: see docs/jobs.md.

One code path for every trigger:
- `make run`: `run_forever(stop_event)` polls the due index and starts lanes without waiting for them;
- AWS: the table stream (new events, `dispatch_new`) and the one-minute schedule (`dispatch_due`), both through
  jobs/handlers.py, with a deadline derived from the function's timeout.

Fairness: due events are grouped by account into lanes. Lanes run concurrently (at most MAX_LANES at once),
each sending its account's events one at a time, oldest first, so one account's slow or dead receiver holds
only its own lane. A failed attempt parks the account until that event's next attempt (the backoff of its
attempts): its other due events are postponed to then without being tried, and so leave the due index, so
neither the sends nor the reads of a failing account grow with its backlog.

Nothing poisons the queue: the event item is small whatever the delivery (store/events.py); an event that can
never be sent (a body over MAX_BODY_BYTES, a refused address, a delivery that is gone) is FAILED at once with
its reason; every other failure is an attempt, counted and logged, retried with backoff and FAILED once the
event is 24 hours old. Each lane catches what goes wrong with one event, logs it and goes on.
"""
import base64
import concurrent.futures
import datetime as dt
import logging
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

from standardwebhooks import Webhook

from .. import config
from ..domain import event_policy as policy
from ..domain import field_order
from ..domain.event_policy import EventStatus
from ..domain.timestamps import iso, parse_iso
from ..store import events, table
from ..store import webhooks as settings_store
from . import outbound
from .budget import clock_from
from .budget import now as _now

log = logging.getLogger("supplier-ordering.webhooks")

Clock = Callable[[], dt.datetime]
Transport = Callable[..., outbound.Response]  # outbound.request's signature

SCAN = 1000  # due events read per poll (parked accounts' events are not among them)
PER_LANE = 25  # events one lane sends per poll, so a busy account yields its worker now and then
MAX_LANES = 32  # lanes sending at once
LEASE = dt.timedelta(seconds=60)  # longer than one send (10 s), its bookkeeping, and a whole invocation
USER_AGENT = "supplier-ordering-webhooks/1"
TOO_LARGE_TO_RECORD = "the event is too large to record its attempts"


@dataclass(frozen=True)
class Attempt:
    entry: dict  # {at, status_code | error, duration_ms}
    outcome: str  # "delivered", "retry" or "never" (can never be sent: FAILED at once)
    reason: str | None = None


def _headers(event: dict, hook: settings_store.Webhook, body: str, moment: dt.datetime) -> dict:
    settings = hook.settings
    headers = dict(settings.get("headers") or {})
    auth = settings.get("authorization")
    if auth:
        pair = f"{auth['username']}:{auth['password']}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
    headers.update(
        {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "webhook-id": event["event_id"],
            "webhook-timestamp": str(int(moment.timestamp())),
            "webhook-signature": Webhook(hook.signing_secret).sign(event["event_id"], moment, body),
        }
    )
    return headers


def body_of(event: dict) -> str | None:
    """The JSON text to send: {"type", "idempotency_key", "data": the delivery as it is now}; None when the
    delivery is gone. Events written before the outbox held no body keep theirs."""
    if "body" in event:
        return event["body"]
    delivery = events.delivery_of(event)
    if delivery is None:
        return None
    data = field_order.ordered(delivery, field_order.DELIVERY)  # as GET /deliveries/:id lists its fields
    return table.json_text({"type": event["type"], "idempotency_key": event["event_id"], "data": data})


def attempt(event: dict, hook: settings_store.Webhook | None, clock: Clock, transport: Transport) -> Attempt:
    """One try at sending the event; never raises."""
    moment = clock()
    started = time.monotonic()
    entry: dict = {"at": iso(moment)}

    def done(outcome: str, reason: str | None = None, **result) -> Attempt:
        if "error" in result:
            result["error"] = policy.error_text(result["error"])
        entry.update(result, duration_ms=int((time.monotonic() - started) * 1000))
        return Attempt(entry, outcome, reason)

    try:
        if hook is None:
            return done("retry", error=policy.NO_RECEIVER)
        body = body_of(event)
        if body is None:
            message = f"delivery {event.get('delivery_id')} no longer exists"
            return done("never", message, error=message)
        size = len(body.encode())
        if size > policy.MAX_BODY_BYTES:
            message = f"the body is {size} bytes, more than a receiver is sent ({policy.MAX_BODY_BYTES} bytes)"
            return done("never", message, error=message)
        response = transport(
            hook.settings.get("method", "POST"),
            hook.settings["url"],
            headers=_headers(event, hook, body, moment),
            body=body.encode(),
            timeout=policy.SEND_TIMEOUT_SECONDS,
            allow_private=config.allow_private_webhook_hosts(),
        )
    except outbound.Refused as refused:
        return done("never", f"the receiver's address was refused: {refused}", error=str(refused))
    except outbound.OutboundError as error:
        return done("retry", error=str(error))
    except Exception as error:  # noqa: BLE001 - recorded as a failed attempt, never a stuck event
        log.exception("event %s: sending failed unexpectedly", event["event_id"])
        return done("retry", error=f"{type(error).__name__}: {error}")
    if policy.is_success(response.status):
        return done("delivered", status_code=response.status)
    return done("retry", status_code=response.status)


def _failure(entry: dict) -> str:
    return entry.get("error") or f"the receiver answered {entry.get('status_code')}"


def record(claimed: dict, result: Attempt, now: dt.datetime) -> tuple[EventStatus, dt.datetime | None]:
    """Store the attempt and decide what follows: (the event's status, its next attempt when PENDING)."""
    attempts = int(claimed["attempts"]) + 1
    next_attempt, reason = None, result.reason
    if result.outcome == "delivered":
        status = EventStatus.DELIVERED
    elif result.outcome == "never":
        status = EventStatus.FAILED
    elif policy.gives_up(parse_iso(claimed["created_at"]), now):
        status, reason = EventStatus.FAILED, f"gave up after 24 hours; the last attempt: {_failure(result.entry)}"
    else:
        status, next_attempt = EventStatus.PENDING, now + policy.retry_delay(attempts)
    outcome = events.record_attempt(claimed, result.entry, status, next_attempt, now, reason)
    if outcome == events.Recorded.TOO_LARGE:  # an old event whose stored body leaves no room for its log
        status, next_attempt = EventStatus.FAILED, None
        reason = TOO_LARGE_TO_RECORD
        events.record_attempt(claimed, result.entry, status, None, now, reason, compact=True)
    elif outcome == events.Recorded.LEASE_LOST:
        log.warning("event %s: changed while we sent it; the attempt was logged", claimed["event_id"])
    return status, next_attempt


class Dispatcher:
    """Sends due events in per-account lanes on a pool of threads (docs/jobs.md)."""

    def __init__(self, clock: Clock | None = None, transport: Transport = outbound.request, lanes: int = MAX_LANES):
        self.clock = clock or _now
        self.transport = transport
        self._pool = concurrent.futures.ThreadPoolExecutor(lanes, thread_name_prefix="event-lane")
        self._busy: set[str] = set()
        self._lock = threading.Lock()

    def active(self) -> int:
        with self._lock:
            return len(self._busy)

    def poll(self, deadline: dt.datetime | None = None, known: list[dict] = (), scan: bool = True) -> list:
        """Start a lane for every account with due events and no lane running; returns their futures.

        `known` are events the caller holds (the stream's new images), taken even if the index, which is
        eventually consistent, does not show them yet; scan=False takes only those. No lane claims an event
        after `deadline`.
        """
        now = self.clock()
        now_iso = iso(now)
        found = {event["SK"]: event for event in events.due(now, SCAN)} if scan else {}
        for event in known:
            if event.get("status") == EventStatus.PENDING and event["next_attempt_at"] <= now_iso:
                found.setdefault(event["SK"], event)
        by_account: dict[str, list[dict]] = defaultdict(list)
        for event in sorted(found.values(), key=lambda e: e["SK"]):  # oldest first: in order per delivery
            by_account[event["account"]].append(event)
        with self._lock:
            accounts = [account for account in by_account if account not in self._busy]
            self._busy.update(accounts)
        try:
            parked = events.lanes(accounts) if accounts else {}
        except Exception:
            with self._lock:
                self._busy.difference_update(accounts)
            raise
        return [
            self._pool.submit(self._lane, account, by_account[account], parked.get(account), deadline)
            for account in accounts
        ]

    def _lane(self, account: str, due: list[dict], lane: events.Lane | None, deadline) -> dict:
        summary = defaultdict(int, due=len(due))
        try:
            now = self.clock()
            if lane is not None and lane.parked_until > iso(now):
                self._hold(due, parse_iso(lane.parked_until), lane.reason, deadline, summary)
                return summary
            hook = settings_store.get(account)
            for index, event in enumerate(due[:PER_LANE]):
                if deadline is not None and self.clock() >= deadline:
                    break
                try:
                    status, next_attempt = self._send(event, hook, summary)
                except Exception:  # noqa: BLE001 - one event's trouble never stops the others
                    log.exception("event %s: could not be processed; its lease will bring it back", event["event_id"])
                    continue
                if status == EventStatus.PENDING:  # a failed attempt parks the account until its retry
                    reason = summary.pop("last_failure", "")
                    events.park(account, next_attempt, reason)
                    self._hold(due[index + 1 :], next_attempt, reason, deadline, summary)
                    return summary
                if status == EventStatus.DELIVERED and lane is not None:
                    events.unpark(account)
                    lane = None
        except Exception:  # noqa: BLE001
            log.exception("events of account %s: the lane stopped; the next poll tries again", account)
        finally:
            with self._lock:
                self._busy.discard(account)
        summary.pop("last_failure", None)
        return summary

    def _send(self, event: dict, hook, summary) -> tuple[EventStatus | None, dt.datetime | None]:
        claimed = events.claim(event, self.clock() + LEASE)
        if claimed is None:
            summary["claimed_elsewhere"] += 1
            return None, None
        if claimed is events.TOO_LARGE:
            if events.give_up(event, TOO_LARGE_TO_RECORD, self.clock()):
                summary["failed"] += 1
            return EventStatus.FAILED, None
        result = attempt(claimed, hook, self.clock, self.transport)
        status, next_attempt = record(claimed, result, self.clock())
        summary[{EventStatus.DELIVERED: "delivered", EventStatus.PENDING: "retrying"}.get(status, "failed")] += 1
        if status == EventStatus.PENDING:
            summary["last_failure"] = _failure(result.entry)
        return status, next_attempt

    def _hold(self, held: list[dict], until: dt.datetime, reason: str, deadline, summary) -> None:
        """Events of a parked account wait for its next try without an attempt; past 24 hours they fail.

        Stops once a phase with this deadline must be done (the next run holds the rest)."""
        for event in held:
            now = self.clock()
            if deadline is not None and now >= deadline + dt.timedelta(seconds=policy.SEND_TIMEOUT_SECONDS):
                break
            if policy.gives_up(parse_iso(event["created_at"]), now):
                if events.give_up(event, f"gave up after 24 hours; its receiver kept failing: {reason}", now):
                    summary["failed"] += 1
            elif events.postpone(event, until):
                summary["held_back"] += 1

    def wait(self, futures: list, timeout: float | None = None) -> dict:
        total = defaultdict(int)
        for future in concurrent.futures.as_completed(futures, timeout=timeout):
            for name, count in future.result().items():
                total[name] += count
        return total

    def close(self, wait: bool = True) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=True)


_SUMMARY = ("due", "delivered", "retrying", "failed", "claimed_elsewhere", "held_back")


def _run_once(now, deadline, known, scan, clock, transport) -> dict:
    dispatcher = Dispatcher(clock or clock_from(now), transport or outbound.request)
    try:
        total = dispatcher.wait(dispatcher.poll(deadline, known, scan))
    finally:
        dispatcher.close()
    return {name: total.get(name, 0) for name in _SUMMARY}


def dispatch_due(
    now: dt.datetime | None = None,
    deadline: dt.datetime | None = None,
    known: list[dict] = (),
    clock: Clock | None = None,
    transport: Transport | None = None,
) -> dict:
    """One run over everything due (the schedule, tests); waits for its lanes. Returns counts of what happened."""
    return _run_once(now, deadline, known, True, clock, transport)


def dispatch_new(new_events: list[dict], deadline: dt.datetime | None = None, clock: Clock | None = None) -> dict:
    """The stream's new events only, each account in its own lane (parked accounts' events are postponed)."""
    return _run_once(None, deadline, new_events, False, clock, None)


def run_forever(stop_event: threading.Event, interval: float = 0.5, dispatcher: Dispatcher | None = None) -> None:
    """`make run`: poll every `interval` until stop_event is set; lanes run on while the next polls happen,
    so a lane waiting on a slow receiver never delays another account's events."""
    dispatcher = dispatcher or Dispatcher()
    try:
        while not stop_event.is_set():
            try:
                dispatcher.poll()
            except Exception:  # noqa: BLE001 - the loop must survive a DynamoDB hiccup
                log.exception("polling for due events failed; trying again in %s s", interval)
            stop_event.wait(interval)
    finally:
        dispatcher.close(wait=False)  # a send in progress (at most 10 s) finishes on its own


def resend(event: dict, clock: Clock = _now, transport: Transport = outbound.request) -> dict:
    """POST /account/events/:id/resend: one attempt now, with the same idempotency key, recorded whatever the
    event's state (a success delivers it and unparks its account). Returns the event as stored after."""
    result = attempt(event, settings_store.get(event["account"]), clock, transport)
    delivered = result.outcome == "delivered"
    events.record_resend(event, result.entry, delivered, clock())
    if delivered:
        events.unpark(event["account"])
    return events.get(event["account"], event["event_id"]) or event
