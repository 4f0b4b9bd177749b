"""The integration state of a delivery (decisions §14): whether the supplier's ERP took it over.

`{"status", "reference"?, "message"?, "updated"?}`. A delivery is PENDING when requested and again after every
customer change (cancel, receive); the supplier's ERP sets IMPORTED or FAILED with PUT /deliveries/:id/integration.
Pure: time is a parameter, the store keeps the state beside the delivery's own document (so customer reads,
legacy webhook events and the order file never carry it).
"""

import datetime as dt
from typing import Annotated, Any

from pydantic import Field, Strict

from . import limits
from .common import FieldError, Shape, Text, ValidationFailed, parse
from .integration_status import (  # noqa: F401  (the state's values and views, kept free of pydantic)
    FAILED,
    IMPORTED,
    PENDING,
    REQUESTED_STATE,
    STATUSES,
    IntegrationStatus,
    state_of,
    supplier_view,
)
from .timestamps import iso
from .values import literal

# The states GET /account/integration counts, by the name it answers them under.
COUNTED = {PENDING: "pending", FAILED: "failed"}

Reference = Annotated[str, Strict(), Field(max_length=limits.INTEGRATION_REFERENCE_LENGTH)]


class IntegrationBody(Shape):
    """PUT /deliveries/:id/integration. Replaces the state: a field left out is removed."""

    status: literal(IntegrationStatus)
    reference: Reference | None = Field(None, description="The ERP's own id of the delivery.")
    message: Text | None = Field(None, description="Why the import failed (required, not blank, with FAILED).")


class Integration(Shape):
    """A delivery's integration state, as supplier reads show it."""

    status: literal(IntegrationStatus)
    reference: str | None = None
    message: str | None = None
    updated: str | None = Field(None, description="When the state was last set; absent until it is.")


class OldestPending(Shape):
    id: int
    since: str = Field(description="When the delivery last became PENDING.")


class IntegrationOverview(Shape):
    """GET /account/integration."""

    pending: int
    failed: int
    oldest_pending: OldestPending | None


def parse_body(data: Any) -> IntegrationBody:
    """The PUT body, or ValidationFailed naming every wrong field (FAILED without a message included)."""
    errors: list[FieldError] = []
    body = None
    try:
        body = parse(IntegrationBody, data)
    except ValidationFailed as failed:
        errors = list(failed.errors)
    if isinstance(data, dict) and data.get("status") == FAILED and not any(e.path == "message" for e in errors):
        message = data.get("message")
        if not isinstance(message, str) or not message.strip():
            errors.append(FieldError("message", "is required, and must not be blank, when status is FAILED"))
    if not errors:
        largest = {"integration": {**state_of_body(body), "updated": iso(dt.datetime(2000, 1, 1))}}
        path = "message" if body.message is not None else "reference"
        errors = limits.size_errors(largest, limits.INTEGRATION_BYTES, path, "the integration state holds")
    if errors:
        raise ValidationFailed(errors)
    return body


def state_of_body(body: IntegrationBody) -> dict:
    """The state a PUT body says, without its time."""
    state = {"status": body.status}
    if body.reference is not None:
        state["reference"] = body.reference
    if body.message is not None:
        state["message"] = body.message
    return state


def acknowledged(current: dict, body: IntegrationBody, now: dt.datetime) -> dict | None:
    """The state after the PUT, or None when it says what the state already says (nothing changes, not even
    `updated`)."""
    new = state_of_body(body)
    if {k: current.get(k) for k in ("status", "reference", "message")} == {
        k: new.get(k) for k in ("status", "reference", "message")
    }:
        return None
    return {**new, "updated": iso(now)}


def repended(current: dict | None, now: dt.datetime) -> dict:
    """The state after a customer's change: PENDING, the ERP's reference kept, its message gone."""
    state = {"status": PENDING.value}
    if current is not None and current.get("reference") is not None:
        state["reference"] = current["reference"]
    return {**state, "updated": iso(now)}


def count_changes(before: str | None, after: str) -> dict[str, int]:
    """What a change from state `before` (None: not counted yet) to `after` adds to the account's counts."""
    changes: dict[str, int] = {}
    if before != after:
        if before in COUNTED:
            changes[COUNTED[before]] = -1
        if after in COUNTED:
            changes[COUNTED[after]] = 1
    return changes


def entered_before(delivery: dict) -> str:
    """When a delivery stored before integration states last became what the ERP has not seen: its request, or
    the customer's latest change."""
    times = [delivery["request"]["timestamp"]] + [
        delivery[f]["timestamp"] for f in ("cancelled", "received") if delivery.get(f)
    ]
    return max(times)


def changed_by_customer(read: dict, now: dict) -> bool:
    """Whether the customer changed the delivery between two reads of it (a cancel, a receive or an amendment,
    decisions §16). An acknowledgement based on the first read must not mark the second IMPORTED: the ERP has not
    seen it."""
    return any(read.get(field) != now.get(field) for field in ("cancelled", "received", "amendments"))
