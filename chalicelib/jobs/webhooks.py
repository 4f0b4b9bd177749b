"""Sending webhook events from the outbox (decisions §10). One code path for every trigger:

- `make run`: the local runner calls `run_forever(stop_event)` in a thread;
- AWS: the table stream handler (new events) and a one-minute schedule (chalicelib/jobs/handlers.py) call
  `dispatch_due`.

Each due event is claimed with a conditional write before it is sent (see store/events.py), so concurrent
dispatchers never send the same attempt twice; delivery is at least once (a dispatcher that dies after sending
but before recording leaves the attempt to be sent again when its lease ends).

An account without a webhook keeps its events PENDING: each check counts as a failed attempt ("no webhook is
configured for the account") with the usual backoff, so events written up to 24 hours before a webhook is
configured are still sent, and older ones end FAILED.
"""
import base64
import datetime as dt
import logging
import threading
import time

from standardwebhooks import Webhook

from .. import config
from ..domain import webhook as policy
from ..store import events
from ..store import webhooks as settings_store
from . import images, outbound

log = logging.getLogger("supplier-ordering.webhooks")

BATCH = 25
LEASE = dt.timedelta(seconds=60)  # longer than one send (10 s) and its bookkeeping
MAX_LOGGED_ATTEMPTS = 20
USER_AGENT = "supplier-ordering-webhooks/1"
NOT_CONFIGURED = "no webhook is configured for the account"


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.timezone.utc) if moment.tzinfo is None else moment.astimezone(dt.timezone.utc)


def _parse_iso(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def _request_headers(event: dict, hook: settings_store.Webhook, moment: dt.datetime) -> dict:
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
            "webhook-signature": Webhook(hook.signing_secret).sign(event["event_id"], moment, event["body"]),
        }
    )
    return headers


def _send(event: dict, hook: settings_store.Webhook | None, moment: dt.datetime) -> dict:
    """One attempt; the attempt entry {at, status_code | error, duration_ms}."""
    entry = {"at": events.iso(moment)}
    started = time.monotonic()
    if hook is None:
        entry["error"] = NOT_CONFIGURED
    else:
        try:
            response = outbound.request(
                hook.settings.get("method", "POST"),
                hook.settings["url"],
                headers=_request_headers(event, hook, moment),
                body=event["body"].encode(),
                timeout=policy.SEND_TIMEOUT_SECONDS,
                allow_private=config.allow_private_webhook_hosts(),
            )
            entry["status_code"] = response.status
        except outbound.OutboundError as error:
            entry["error"] = str(error)
        except Exception as error:  # noqa: BLE001 - recorded as a failed attempt, never a stuck event
            log.exception("event %s: sending failed unexpectedly", event["event_id"])
            entry["error"] = f"{type(error).__name__}: {error}"
    entry["duration_ms"] = int((time.monotonic() - started) * 1000)
    return entry


def _record(claimed: dict, entry: dict, now: dt.datetime) -> str:
    """Store the attempt and decide what follows; returns the event's new status."""
    attempt_log = (claimed.get("attempt_log") or []) + [entry]
    first = claimed.get("first_attempt_at") or entry["at"]
    attempts = int(claimed["attempts"]) + 1
    next_attempt = None
    if "status_code" in entry and policy.is_success(entry["status_code"]):
        status = events.DELIVERED
    elif policy.gives_up(_parse_iso(first), now):
        status = events.FAILED
    else:
        status = events.PENDING
        next_attempt = now + policy.retry_delay(attempts)
    if not events.record_attempt(claimed, attempt_log[-MAX_LOGGED_ATTEMPTS:], first, status, next_attempt, now):
        log.warning("event %s: lease ran out before the attempt was recorded", claimed["event_id"])
    return status


def dispatch_due(
    now: dt.datetime, limit: int = BATCH, budget_seconds: float | None = None, known: list[dict] = ()
) -> dict:
    """Send the events due at `now` (at most `limit`); returns counts of what happened.

    Events due together are sent oldest first, and an event whose attempt failed holds back later events of the
    same delivery in this run, so events of one delivery arrive in order where possible (a later event that
    falls due while an earlier one waits for its retry is not held back). `budget_seconds` stops claiming new
    events after that long. `known` are events the caller already holds (the stream's new images), sent even
    if the index, which is eventually consistent, does not show them yet.
    """
    now = _utc(now)
    started = time.monotonic()
    summary = {"due": 0, "delivered": 0, "retrying": 0, "failed": 0, "claimed_elsewhere": 0, "held_back": 0}
    hooks: dict[str, settings_store.Webhook | None] = {}
    held: set[tuple] = set()
    found = {event["SK"]: event for event in events.due(now, limit)}
    now_iso = events.iso(now)
    for event in known:
        if event.get("status") == events.PENDING and event["next_attempt_at"] <= now_iso:
            found.setdefault(event["SK"], event)
    # Oldest first within the batch, so events of one delivery due together go out in the order they happened.
    due = sorted(found.values(), key=lambda event: event["SK"])
    summary["due"] = len(due)
    for event in due:
        if budget_seconds is not None and time.monotonic() - started > budget_seconds:
            break
        subject = (event["account"], event.get("delivery_id"))
        if subject[1] is not None and subject in held:
            summary["held_back"] += 1
            continue
        moment = now + dt.timedelta(seconds=time.monotonic() - started)
        claimed = events.claim(event, moment + LEASE)
        if claimed is None:
            summary["claimed_elsewhere"] += 1
            continue
        account = claimed["account"]
        if account not in hooks:
            hooks[account] = settings_store.get(account)
        entry = _send(claimed, hooks[account], moment)
        finished = moment + dt.timedelta(milliseconds=entry["duration_ms"])
        status = _record(claimed, entry, finished)
        if status == events.DELIVERED:
            summary["delivered"] += 1
        else:
            held.add(subject)
            summary["retrying" if status == events.PENDING else "failed"] += 1
    return summary


def _loop(stop_event: threading.Event, interval: float, work) -> None:
    """Call work(now) until stop_event is set; again at once while it finds a full batch. Errors are logged."""
    while not stop_event.is_set():
        busy = False
        try:
            busy = work(dt.datetime.now(dt.timezone.utc))
        except Exception:  # noqa: BLE001 - the loop must survive a bad item or a DynamoDB hiccup
            log.exception("background work failed; trying again in %s s", interval)
        if not busy:
            stop_event.wait(interval)


def run_forever(stop_event: threading.Event, interval: float = 1.0) -> None:
    """The local runner's background work (`make run`), until stop_event is set.

    Events and images run in loops of their own, so a slow image download never delays an event.
    """
    image_loop = threading.Thread(
        target=_loop,
        args=(stop_event, interval, lambda now: images.download_pending_images(now)["due"] >= images.BATCH),
        name="image-downloads",
        daemon=True,
    )
    image_loop.start()
    try:
        _loop(stop_event, interval, lambda now: dispatch_due(now)["due"] >= BATCH)
    finally:
        image_loop.join(timeout=interval + 1)  # a download in progress (at most 15 s) is left to finish alone
