"""Use cases of webhooks: configure where events go, and see how their delivery went (decisions §10)."""

import math

from ..domain.errors import NotFound, TooManyRequests
from ..domain.event_policy import RESEND_WINDOW, RESENDS_PER_WINDOW
from ..domain.feed import SETTINGS_WEBHOOKS, Change, ChangeType
from ..domain.webhook import shown, validate_settings
from ..store import event_attempts, event_lists, events, feed, outbox_accounts, outcomes, webhook_settings
from ..store.paging import Page
from ..store.unit_of_work import unit_of_work
from . import clock, contention
from .idempotency import IdempotencyClaim
from .paging import paged

KEPT_CHANGING = "the event kept changing while the resend was queued; retry"
NOT_CONFIGURED = "no webhook is configured; PUT /account/settings/webhooks to configure one"


def get_settings(account: str) -> dict:
    webhook = webhook_settings.get(account)
    if webhook is None:
        raise NotFound(NOT_CONFIGURED)
    return shown(webhook.settings, webhook.signing_secret)


SETTINGS_CHANGE = Change(ChangeType.SETTINGS_UPDATED, SETTINGS_WEBHOOKS)
WRITE_ATTEMPTS = 5  # the settings kept changing between our read and our write this many times: Busy
RESEND_ATTEMPTS = 5  # the event kept changing (attempts recorded) between our read and our write: Busy


def put_settings(account: str, body) -> dict:
    """Replace the configuration, with its feed entry (none for the same configuration again). Every PUT starts a
    new version of the settings and unparks the account: an attempt made before it, still under way, neither parks
    the account nor backs off or fails an event when it ends (service/event_sending.py)."""
    settings = validate_settings(body)
    selected = settings["events"]

    def attempt():
        current = webhook_settings.read_for_write(account)
        operation, salt = webhook_settings.putting(account, settings, selected, current)
        with unit_of_work(account, clock.now()) as uow:
            uow.add(operation)
            uow.add(feed.selecting(account, selected))  # where the numbering reads it
            if not current.shows(settings):  # a new selection alone is nothing a reader sees
                uow.record(SETTINGS_CHANGE)
            return uow.commit() or webhook_settings.webhook(account, settings, salt)

    webhook = contention.retried(attempt, again=(outcomes.Refusal,), minimum=WRITE_ATTEMPTS, seconds=0)
    outbox_accounts.unpark(account)  # a new receiver gets the account's next events at once
    return shown(webhook.settings, webhook.signing_secret)


def delete_settings(account: str) -> None:
    with unit_of_work(account, clock.now()) as uow:
        uow.add(webhook_settings.deleting(account))
        uow.record(SETTINGS_CHANGE)
        refused = uow.commit()
    if isinstance(refused, outcomes.Gone):
        raise NotFound(NOT_CONFIGURED)
    if refused is not None:
        contention.raise_for(refused)


def _attempt(entry: dict) -> dict:
    return {k: entry[k] for k in ("at", "status_code", "error", "duration_ms") if k in entry}


def _delivery(item: dict) -> dict:
    entry = {
        "id": item["event_id"],
        "type": item["type"],
        "status": item["status"],
        "created_at": item["created_at"],
        "attempts": [_attempt(a) for a in item.get("attempt_log", [])],
    }
    if item.get("delivery_id") is not None:
        entry["delivery_id"] = item["delivery_id"]
    if item["status"] == events.PENDING:
        entry["next_attempt_at"] = item["next_attempt_at"]
    return entry


def _event(item: dict) -> dict:
    """An event as GET /account/events shows it (domain.webhook.Event)."""
    entry = {"id": item["event_id"], "type": item["type"], "delivery_id": item.get("delivery_id")}
    if item.get("sequence") is not None:
        entry["sequence"] = int(item["sequence"])
    entry.update(status=item["status"], attempts=int(item.get("attempts", 0)), created=item["created_at"])
    for name in ("last_status_code", "last_error"):
        if item.get(name) is not None:
            entry[name] = item[name]
    if item["status"] == events.PENDING:
        entry["next_attempt_at"] = item["next_attempt_at"]
    if item["status"] == events.FAILED and item.get("reason"):
        entry["reason"] = item["reason"]
    return entry


@paged
def list_deliveries(account: str, limit: int, cursor: str | None) -> Page:
    page = event_lists.list_page(account, limit, cursor)
    return Page([_delivery(item) for item in page.items], page.cursor)


@paged
def list_events(account: str, limit: int, cursor: str | None) -> Page:
    page = event_lists.list_page(account, limit, cursor, query="events")
    return Page([_event(item) for item in page.items], page.cursor)


def resend(account: str, event_id: str, idempotency: IdempotencyClaim | None = None) -> dict:
    """Queue one more attempt with the same idempotency key; the dispatcher makes it within seconds, whatever
    the event's state, one per accepted request (decisions §10). Returns the event as it is once queued, with
    the Idempotency-Key answer recorded in the same write (§11). At most RESENDS_PER_WINDOW accepted requests
    per account in any RESEND_WINDOW."""
    event = events.get(account, event_id)
    if event is None:
        raise NotFound(f"event {event_id} does not exist")
    now = clock.now()
    accepted = outbox_accounts.accept_resend(account, now)
    if isinstance(accepted, outcomes.Throttled):
        seconds = max(1, math.ceil((accepted.until - now).total_seconds()))
        raise TooManyRequests(
            f"at most {RESENDS_PER_WINDOW} resend requests per {int(RESEND_WINDOW.total_seconds())} seconds; "
            f"the next is allowed in {seconds} s",
            seconds,
        )

    def queue() -> dict | outcomes.Refusal:
        nonlocal event
        if event is None:
            raise NotFound(f"event {event_id} does not exist")
        queued, operation = event_attempts.resending(event, now)
        with unit_of_work(account, now) as uow:
            uow.add(operation)
            if idempotency is not None:  # in the same write: a request that dies after it replays, never queues again
                uow.answer(idempotency.completion(_event(queued)))
            refused = uow.commit()
        if refused is not None:
            event = events.get(account, event_id)  # changed meanwhile (an attempt recorded) or gone: again
            return refused
        return queued

    queued = contention.retried(queue, minimum=RESEND_ATTEMPTS, seconds=0, busy=KEPT_CHANGING)
    if isinstance(queued, outcomes.Refusal):
        contention.raise_for(queued)
    return _event(queued)
