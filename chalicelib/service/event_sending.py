"""Sending one event, and one account's turn of its due events (decisions §10; docs/jobs.md).

The use case behind every trigger that sends: the dispatcher's lanes (jobs/event_lanes.py: the `make run` loop, the
table stream, the schedule) and a queued resend, which the dispatcher sends like any due event.

One account's turn (`send_turn`) sends its due events one at a time, oldest first. A failed attempt parks the
account until that event's next attempt (the backoff of its attempts): its other due events are postponed to
then without being tried, and so leave the due index, so neither the sends nor the reads of a failing account
grow with its backlog. A resend is tried even while its account is parked (someone asked for it), and each
accepted resend makes its own attempt: an event with more resends queued is sent again in the same turn.

Every attempt is made under the webhook settings as they are when it starts, and what its failure decides (the
backoff, FAILED, parking the account) commits only while those settings are still current (their version): an
attempt to an old receiver that ends after a PUT is only counted and logged, and the event is tried again at once
under the new settings, so it never parks the account or delays the events made for them.

Nothing poisons the queue: the event item is small whatever the delivery (store/events.py); an event that can
never be sent (a body over MAX_BODY_BYTES, a refused address, a delivery that is gone) is FAILED at once with
its reason; every other failure is an attempt, counted and logged, retried with backoff and FAILED once the
event is 24 hours old. A turn catches what goes wrong with one event, logs it and goes on.
"""

import base64
import datetime as dt
import logging
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from typing import Callable

from standardwebhooks import Webhook

from .. import config
from ..adapters import outbound
from ..domain import event_policy as policy
from ..domain.event_policy import EventStatus
from ..domain.timestamps import in_words, iso, parse_iso
from ..store import event_attempts, events, outbox_accounts, outcomes, webhook_settings
from . import changes, clock

log = logging.getLogger("supplier-ordering.webhooks")

Transport = Callable[..., outbound.Response]  # outbound.request's signature

SCAN = 1000  # due events read per poll from each queue shard (parked accounts' events are not among them)
PER_TURN = 25  # events one account's turn sends, so a busy account yields its worker now and then
LEASE = dt.timedelta(seconds=60)  # longer than one send (10 s), its bookkeeping, and a whole invocation
USER_AGENT = "supplier-ordering-webhooks/1"
TOO_LARGE_TO_RECORD = "the event is too large to record its attempts"


@dataclass(frozen=True)
class Attempt:
    entry: dict  # {at, status_code | error, duration_ms}
    outcome: str  # "delivered", "retry" or "never" (can never be sent: FAILED at once)
    reason: str | None = None


def _headers(event: dict, hook: webhook_settings.Webhook, body: str, moment: dt.datetime) -> dict:
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
    """The JSON text to send (service/changes.py builds it, the same for every trigger); None when it can never
    be sent (its delivery is gone)."""
    return changes.event_body(event)


def attempt(event: dict, hook: webhook_settings.Webhook | None, transport: Transport) -> Attempt:
    """One try at sending the event; never raises."""
    moment = clock.now()
    started = time.monotonic()  # measures the attempt's duration for its log; no deadline depends on it
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


@dataclass(frozen=True)
class Recorded:
    """What an attempt's record decided."""

    status: EventStatus
    next_attempt: dt.datetime | None  # when PENDING: its next attempt
    parked: bool = False  # the failure parked the account until next_attempt
    superseded: bool = False  # the settings changed during the attempt: due again at once, under the new ones
    failure: str = ""  # what went wrong, when it did


def record(claimed: dict, result: Attempt, now: dt.datetime, version: int, park: bool = False) -> Recorded:
    """Store the attempt and decide what follows (with `park`, a failure parks the account until the retry).

    What a failure decides (the backoff, FAILED, the park) commits only while the webhook settings are still at
    `version`, those the attempt was made under: after a PUT or DELETE the attempt is only counted and logged, and
    the event is due again at once, so an old receiver's failure never holds events made for a new one.
    A resend that does not deliver the event leaves its state as it was: DELIVERED or FAILED stay so, a
    PENDING one waits for its next attempt (never given up by the resend itself)."""
    attempts = int(claimed["attempts"]) + 1
    next_attempt, reason, failure = None, result.reason, ""
    settled = claimed["status"] != EventStatus.PENDING
    if result.outcome != "delivered":
        failure = _failure(result.entry)
    if result.outcome == "delivered":
        status, reason = EventStatus.DELIVERED, None
    elif settled:
        status, reason = EventStatus(claimed["status"]), claimed.get("reason")
    elif result.outcome == "never":
        status = EventStatus.FAILED
    elif policy.gives_up(parse_iso(claimed["created_at"]), now) and not _resent(claimed):
        status, reason = (
            EventStatus.FAILED,
            f"gave up after {in_words(policy.RETRY_WINDOW)}; the last attempt: {failure}",
        )
    else:
        status, next_attempt = EventStatus.PENDING, now + policy.retry_delay(attempts)
    together = ()
    if failure and not settled:  # the receiver's failure decides: only under the settings it was sent with
        together = (webhook_settings.unchanged_check(claimed["account"], version),)
        if park and status == EventStatus.PENDING:
            together += (outbox_accounts.parking(claimed["account"], next_attempt, failure),)
    outcome = event_attempts.record_attempt(claimed, result.entry, status, next_attempt, now, reason, together=together)
    # Contended: a transaction held the settings or the event (a PUT, most likely): decide again at once, too.
    superseded = isinstance(outcome, (outcomes.Changed, outcomes.Contended))
    if superseded:
        status, next_attempt = EventStatus.PENDING, now
        outcome = event_attempts.record_attempt(claimed, result.entry, status, next_attempt, now)
    if isinstance(outcome, outcomes.TooLarge):  # an old event whose stored body leaves no room for its log
        status, next_attempt = EventStatus.FAILED, None
        reason = TOO_LARGE_TO_RECORD
        event_attempts.record_attempt(claimed, result.entry, status, None, now, reason, compact=True)
    elif isinstance(outcome, outcomes.LostLease):
        log.warning("event %s: changed while we sent it; the attempt was logged", claimed["event_id"])
    parked = not superseded and outcome is None and len(together) > 1
    return Recorded(status, next_attempt, parked, superseded, failure)


def due_events() -> list[dict]:
    """Every account's due events (retries, new events, queued resends), oldest first."""
    return events.due(clock.now(), SCAN)


def is_due(event: dict) -> bool:
    """An event the stream brought is waiting for an attempt now (the index, eventually consistent, may not
    show it yet)."""
    return events.is_due(event, clock.now())


def parked(accounts: list[str]) -> dict[str, outbox_accounts.Lane]:
    return outbox_accounts.lanes(accounts) if accounts else {}


@dataclass(frozen=True)
class Watch:
    """How a dispatcher follows a turn: `under(version)` is told the webhook settings' version of each send before
    it is made; once `retired()`, the turn sends nothing more (a newer turn sends under newer settings)."""

    under: Callable[[int], None] = lambda version: None
    retired: Callable[[], bool] = lambda: False


def settings_version(account: str) -> int:
    """The version of the account's webhook settings now (each PUT and DELETE moves it)."""
    return webhook_settings.receiver(account).version


def send_turn(
    account: str,
    due: list[dict],
    lane: outbox_accounts.Lane | None,
    deadline: dt.datetime | None,
    transport: Transport | None = None,
    watch: Watch = Watch(),
) -> dict:
    """One account's turn: its due events (oldest first), at most PER_TURN sends, none started after
    `deadline`; returns counts of what happened. `transport` replaces the outbound HTTP client (benchmarks).
    Each send reads the webhook settings as they are when it starts, so a PUT during the turn takes effect at
    its next send; `watch` ends the turn once a dispatcher started another under newer settings."""
    transport = transport or outbound.request
    summary = defaultdict(int, due=len(due))
    if lane is not None and lane.parked_until > iso(clock.now()):
        # Only events read before the lane are held: one made since may be for settings a PUT unparked it for.
        due = sorted(due, key=policy.attempt_order)
        # Resends are asked for: tried even while the account is parked, within the turn's budget and cap.
        _send_within([event for event in due if _resent(event)], deadline, summary, transport, watch)
        held = [event for event in due if not _resent(event)]
        _hold(held, parse_iso(lane.parked_until), lane.reason, deadline, summary)
        return summary
    waiting = deque(_in_sequence(account, due))
    for _ in range(PER_TURN):
        if not waiting or (deadline is not None and clock.now() >= deadline) or watch.retired():
            break
        event = waiting.popleft()
        try:
            recorded, again = _send(event, summary, transport, watch, park=True)
        except Exception:  # noqa: BLE001 - one event's trouble never stops the others
            log.exception("event %s: could not be processed; its lease will bring it back", event["event_id"])
            continue
        if again is not None:
            waiting.appendleft(again)
        if recorded is not None and recorded.parked:  # its other events wait for the retry, untried
            _hold([e for e in waiting if not _resent(e)], recorded.next_attempt, recorded.failure, deadline, summary)
            return summary
        if recorded is not None and recorded.status == EventStatus.DELIVERED and lane is not None:
            outbox_accounts.unpark(account)
            lane = None
    return summary


def _first(event: dict) -> bool:
    """An event of a feed entry not yet attempted (store/events.first_attempts has it)."""
    return (
        event.get("sequence") is not None
        and int(event.get("attempts", 0)) == 0
        and event.get("status") == EventStatus.PENDING
    )


def _in_sequence(account: str, due: list[dict]) -> list[dict]:
    """The account's due events in the order they are attempted (decisions §13). The due read orders by time
    and may stop inside a backlog, holding a later sequence of this account without an earlier one: so its first
    attempts are those of the account's first-attempt index, read in sequence order, with the due read's (the
    index may not show them yet) unless they come after a full page of it."""
    if not any(_first(event) for event in due):
        return sorted(due, key=policy.attempt_order)
    page = events.first_attempts(account, PER_TURN)
    now = clock.now()
    firsts = {event["event_id"]: event for event in page if events.is_due(event, now)}
    last = int(page[-1]["sequence"]) if len(page) == PER_TURN else None
    for event in due:
        if _first(event) and (last is None or int(event["sequence"]) <= last):
            firsts.setdefault(event["event_id"], event)
    others = [event for event in due if not _first(event) and event["event_id"] not in firsts]
    return sorted(others + list(firsts.values()), key=policy.attempt_order)


def _send_within(due: list[dict], deadline, summary: dict, transport: Transport, watch: Watch) -> None:
    """Send at most PER_TURN of `due`, none started after `deadline`, parking nothing (the account is parked
    already); the rest wait for the next turn."""
    waiting = deque(due)
    for _ in range(PER_TURN):
        if not waiting or (deadline is not None and clock.now() >= deadline) or watch.retired():
            return
        event = waiting.popleft()
        try:
            again = _send(event, summary, transport, watch)[1]
        except Exception:  # noqa: BLE001 - one event's trouble never stops the others
            log.exception("event %s: could not be processed; its lease will bring it back", event["event_id"])
            continue
        if again is not None:
            waiting.appendleft(again)


def _resent(event: dict) -> bool:
    """A resend of the event is queued (its attempt is asked for)."""
    return events.queued_resends(event) > 0


def _send(
    event: dict, summary, transport: Transport, watch: Watch, park: bool = False
) -> tuple[Recorded | None, dict | None]:
    """One attempt, under the webhook settings as they are now: (what its record decided, None when another
    dispatcher had claimed it; the event again when it is due again at once: another queued resend, or the
    settings changed while it was sent)."""
    claimed = event_attempts.claim(event, clock.now() + LEASE)
    if isinstance(claimed, outcomes.Stale):
        summary["claimed_elsewhere"] += 1
        return None, None
    if isinstance(claimed, outcomes.TooLarge):
        if event_attempts.give_up(event, TOO_LARGE_TO_RECORD, clock.now()) is None:
            summary["failed"] += 1
        return Recorded(EventStatus.FAILED, None), None
    receiver = webhook_settings.receiver(claimed["account"])
    watch.under(receiver.version)
    result = attempt(claimed, receiver.webhook, transport)
    recorded = record(claimed, result, clock.now(), receiver.version, park)
    if _resent(claimed) and recorded.status == EventStatus.DELIVERED:
        outbox_accounts.unpark(claimed["account"])  # the receiver works again
    if result.outcome == "delivered":
        summary["delivered"] += 1
    elif claimed["status"] != EventStatus.PENDING:  # a resend left a settled event as it was
        summary["resend_failed"] += 1
    else:
        summary["retrying" if recorded.status == EventStatus.PENDING else "failed"] += 1
    again = None
    if recorded.superseded or events.queued_resends(claimed) > 1:
        fresh = events.get(claimed["account"], claimed["event_id"])
        again = fresh if fresh is not None and events.is_due(fresh, clock.now()) else None
    return recorded, again


def _hold(held: list[dict], until: dt.datetime, reason: str, deadline, summary) -> None:
    """Events of a parked account wait for its next try without an attempt; past 24 hours they fail.

    Stops once a phase with this deadline must be done (the next run holds the rest)."""
    for event in held:
        now = clock.now()
        if deadline is not None and now >= deadline + dt.timedelta(seconds=policy.SEND_TIMEOUT_SECONDS):
            break
        if policy.gives_up(parse_iso(event["created_at"]), now):
            if (
                event_attempts.give_up(
                    event, f"gave up after {in_words(policy.RETRY_WINDOW)}; its receiver kept failing: {reason}", now
                )
                is None
            ):
                summary["failed"] += 1
        elif event_attempts.postpone(event, until) is None:
            summary["held_back"] += 1
