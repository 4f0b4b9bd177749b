"""Events and the retry policy of their delivery (decisions §10): value lists, bounds and backoff.

Pure and free of pydantic, so the store, the jobs and the app's cold start can use them without loading the
shapes of domain/webhook.py."""

import datetime as dt
from enum import StrEnum

# An event body is never larger than the request bodies we accept (decisions §3); a larger one fails at once.
from .limits import MAX_BODY_BYTES  # noqa: F401

SUCCESS_STATUSES = (200, 201)
FIRST_RETRY = dt.timedelta(seconds=30)
LONGEST_RETRY = dt.timedelta(hours=6)
RETRY_WINDOW = dt.timedelta(hours=24)
SEND_TIMEOUT_SECONDS = 10
SEND_TIMEOUT = dt.timedelta(seconds=SEND_TIMEOUT_SECONDS)
MAX_LOGGED_ATTEMPTS = 20
MAX_ERROR_LENGTH = 300  # an attempt's error text, so the attempt log of an event stays small
NO_RECEIVER = "no receiver"
RESENDS_PER_WINDOW = 60  # accepted resend requests of one account in any RESEND_WINDOW
RESEND_WINDOW = dt.timedelta(seconds=60)


class EventStatus(StrEnum):
    PENDING = "PENDING"
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"


class EventType(StrEnum):
    REQUEST_DELIVERY = "request-delivery"
    CANCEL_DELIVERY = "cancel-delivery"
    RECEIVE_DELIVERY = "receive-delivery"


def is_success(status_code: int) -> bool:
    return status_code in SUCCESS_STATUSES


def attempt_order(event: dict) -> tuple:
    """The order in which an account's due events are attempted (decisions §13): by feed `sequence`, so one
    write's events (an import chunk, a split order) and writes whose clocks were read out of order go out in the
    order of the chain; events from before the feed (no sequence) first, by creation."""
    return (int(event.get("sequence", 0)), event["created_at"], event["event_id"])


def retry_delay(attempts: int) -> dt.timedelta:
    """Wait after the attempts-th failed attempt: 30 s, 1 min, 2 min, ... at most 6 h."""
    return min(FIRST_RETRY * 2 ** min(attempts - 1, 20), LONGEST_RETRY)


def gives_up(created: dt.datetime, now: dt.datetime) -> bool:
    """After a failed attempt (or while its receiver is parked): stop once the event has waited the whole
    retry window since it was written."""
    return now - created >= RETRY_WINDOW


def error_text(message: str) -> str:
    return message if len(message) <= MAX_ERROR_LENGTH else message[: MAX_ERROR_LENGTH - 1] + "…"


def resend_window(accepted: list[dt.datetime], now: dt.datetime) -> tuple[list[dt.datetime], dt.datetime | None]:
    """(the accepted requests still inside the window at `now`, None when one more is allowed now, else the
    moment the oldest of them leaves the window and one more is allowed)."""
    kept = sorted(moment for moment in accepted if moment > now - RESEND_WINDOW)
    if len(kept) < RESENDS_PER_WINDOW:
        return kept, None
    return kept, kept[-RESENDS_PER_WINDOW] + RESEND_WINDOW
