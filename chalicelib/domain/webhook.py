"""Webhook settings and the shapes of events and attempts (decisions §10). Pure: no I/O, no clock; the retry
policy is in event_policy.py."""

import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, Strict

from .common import FieldError, Shape, ValidationFailed, absolute_http_url, dump, parse
from .event_policy import EventStatus, EventType  # noqa: F401 - the shapes below list them
from .feed import EVENT_TYPES, event_selection_errors, events_of

MAX_URL_LENGTH = 2048
MAX_HEADERS = 20
# RFC 9110 token: the characters a header name may have.
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# Headers the service sets itself or that belong to the connection, never to the receiver's configuration.
RESERVED_HEADERS = frozenset(
    h.lower()
    for h in (
        "Host Content-Length Content-Type Content-Encoding Transfer-Encoding Connection Keep-Alive TE Trailer "
        "Upgrade Expect Proxy-Authorization Proxy-Authenticate Proxy-Connection "
        "webhook-id webhook-signature webhook-timestamp"
    ).split()
)


def _webhook_url(value: str) -> str:
    """An absolute http(s) URL in ASCII, without credentials, with a valid port (if any)."""
    parts = urlsplit(absolute_http_url(value))
    if any(not "!" <= c <= "~" for c in value):
        raise ValueError("must be ASCII: percent-encode other characters and write host names in punycode")
    if parts.username is not None or parts.password is not None:
        raise ValueError("must not contain credentials; use authorization")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number 0-65535
    except ValueError:
        raise ValueError("has an invalid port") from None
    return value


def _no_line_breaks(value: str) -> str:
    if any(c in value for c in "\r\n\0"):
        raise ValueError("must not contain line breaks")
    return value


def _header_name_errors(headers) -> list[FieldError]:
    if not isinstance(headers, dict):
        return []
    errors = []
    if len(headers) > MAX_HEADERS:
        errors.append(FieldError("headers", f"must have at most {MAX_HEADERS} headers"))
    seen = set()
    for name in headers:
        path = f"headers.{name}"
        if not HEADER_NAME.fullmatch(name):
            errors.append(FieldError(path, "is not a valid header name (an RFC 9110 token)"))
        elif name.lower() in RESERVED_HEADERS:
            errors.append(FieldError(path, "is set by the service or the connection and cannot be configured"))
        elif name.lower() in seen:
            errors.append(FieldError(path, "is given twice (header names ignore case)"))
        seen.add(name.lower())
    return errors


def _username(value: str) -> str:
    if ":" in value:
        raise ValueError("must not contain ':' (basic authorization joins username:password)")
    return value


def _header_value(value: str) -> str:
    # What every HTTP stack sends as is: visible ASCII, spaces and tabs (no line breaks, no other controls).
    if any(not (" " <= c <= "~" or c == "\t") for c in value):
        raise ValueError("must be printable ASCII without line breaks")
    return value


HeaderValue = Annotated[str, Strict(), Field(max_length=1024), AfterValidator(_header_value)]
Credential = Annotated[str, Strict(), Field(min_length=1, max_length=256), AfterValidator(_no_line_breaks)]


class BasicAuthorization(Shape):
    type: Literal["basic"]
    username: Annotated[Credential, AfterValidator(_username)]
    password: Credential


class WebhookSettings(Shape):
    """PUT /account/settings/webhooks: the full configuration (absent optional fields are removed)."""

    url: Annotated[str, Strict(), Field(max_length=MAX_URL_LENGTH), AfterValidator(_webhook_url)]
    method: Literal["POST", "PUT", "PATCH"] = "POST"
    headers: dict[str, HeaderValue] | None = Field(None, description="sent with every event; names are HTTP tokens")
    authorization: BasicAuthorization | None = None
    events: list[Literal[EVENT_TYPES]] | None = Field(  # type: ignore[valid-type]
        None,
        max_length=len(EVENT_TYPES),
        description="The event types to send (decisions §13): the legacy request-delivery, cancel-delivery and "
        "receive-delivery (the default), and any change feed type (product.updated, delivery.accepted, ...).",
    )


class ShownAuthorization(Shape):
    """The password is never shown back."""

    type: Literal["basic"]
    username: str


class WebhookSettingsView(Shape):
    url: str
    method: Literal["POST", "PUT", "PATCH"]
    headers: dict[str, str] | None = None
    authorization: ShownAuthorization | None = None
    events: list[str] = Field(description="The event types sent.")
    signing_secret: str = Field(description="whsec_...: verify webhook-signature with it (Standard Webhooks)")


def validate_settings(data) -> dict:
    """The settings to store, or ValidationFailed naming every wrong field."""
    errors = _header_name_errors(data.get("headers") if isinstance(data, dict) else None)
    if isinstance(data, dict) and data.get("authorization") and isinstance(data.get("headers"), dict):
        errors += [
            FieldError(f"headers.{name}", "cannot be configured together with authorization")
            for name in data["headers"]
            if name.lower() == "authorization"
        ]
    if isinstance(data, dict) and isinstance(data.get("events"), list):
        problems = event_selection_errors([e for e in data["events"] if isinstance(e, str)])
        errors += [FieldError("events", problem) for problem in problems]
    try:
        settings = parse(WebhookSettings, data)
    except ValidationFailed as failed:
        raise ValidationFailed(failed.errors + errors) from None
    if errors:
        raise ValidationFailed(errors)
    stored = dump(settings)
    stored["events"] = list(dict.fromkeys(events_of(stored)))
    return stored


def shown(settings: dict, signing_secret: str) -> dict:
    view = {k: v for k, v in settings.items() if k not in ("authorization", "events")}
    if "authorization" in settings:
        view["authorization"] = {"type": "basic", "username": settings["authorization"]["username"]}
    view["events"] = events_of(settings)
    view["signing_secret"] = signing_secret
    return view


class Attempt(Shape):
    at: str
    status_code: int | None = None
    error: str | None = None
    duration_ms: int


class WebhookDelivery(Shape):
    id: str
    type: str
    status: EventStatus
    created_at: str
    delivery_id: int | None = None
    attempts: list[Attempt]
    next_attempt_at: str | None = Field(None, description="when the next attempt is due; PENDING only")


class WebhookDeliveryList(Shape):
    webhook_deliveries: list[WebhookDelivery]
    cursor: str | None = None


class Event(Shape):
    """One event as GET /account/events lists it (decisions §10)."""

    id: str
    type: Literal[EVENT_TYPES] = Field(  # type: ignore[valid-type]
        description="A legacy type (request-delivery, cancel-delivery, receive-delivery) or a change feed type"
    )
    delivery_id: int | None = Field(None, description="null when the event is not about a delivery")
    sequence: int | None = Field(None, description="The change feed entry the event comes from")
    status: EventStatus
    attempts: int = Field(description="attempts made so far, resends included")
    created: str
    last_status_code: int | None = Field(None, description="the HTTP status of the latest attempt, if it got one")
    last_error: str | None = Field(None, description="why the latest attempt failed, when it got no HTTP status")
    next_attempt_at: str | None = Field(None, description="when the next attempt is due; PENDING only")
    reason: str | None = Field(None, description="why the event was given up; FAILED only")


class EventList(Shape):
    events: list[Event]
    cursor: str | None = None
