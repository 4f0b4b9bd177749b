"""The driver's delivery note (decisions §18): what was delivered of each line, the substitutes, the empties
collected and the proof, given once by the supplier; it makes a REQUESTED or ACCEPTED delivery DELIVERED.

Pure: the delivery as read (with its deposit basis), the substitutes and empties as the service checked them
against the catalogue and the deposit types, the time and the account's time zone arrive as data. Only the note
decides what the delivery charges and what comes back from then on (domain/deposits.py reads it).
"""

import datetime as dt
import re
from typing import Annotated

from pydantic import AfterValidator, Field, Strict

from . import deposit_orders, limits
from .common import HttpsUrl, Number, Shape, ShortText, Text, dump
from .delivery import DELIVERED, FINAL, Substitutions, User, answered_line_errors, timestamp, vessel_count
from .delivery_status import ResponseReason
from .deposit_types import Empties
from .deposits import counted_responses, lines_now, substitutes_of
from .errors import FieldError, InvalidTransition, ValidationFailed
from .product import ItemBundle
from .timestamps import local_iso, parse_iso
from .values import literal

NOTE = "delivery_note"
_RFC_3339 = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:)([0-9]{2})(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def _moment(value: str) -> dt.datetime:
    """An RFC 3339 date and time as a moment: a fraction of any length (to the microsecond), a leap second (:60)
    as the last microsecond before it; ValueError for anything else."""
    found = _RFC_3339.fullmatch(value)
    if found is None:
        raise ValueError("must be an RFC 3339 date and time with its offset, such as 2026-05-04T11:30:00+03:00")
    start, second, fraction, offset = found.groups()
    fraction = (fraction or "")[:7]
    if second == "60":
        second, fraction = "59", ".999999"
    try:
        return dt.datetime.fromisoformat(f"{start.upper()}{second}{fraction}{offset.upper().replace('Z', '+00:00')}")
    except ValueError:
        raise ValueError("is not a calendar date and time") from None


def _rfc_3339(value: str) -> str:
    moment = _moment(value)
    if not 1900 <= moment.year <= 2999:
        raise ValueError("must be between the years 1900 and 2999")
    return value


class NoteItemBody(Shape):
    """What was delivered of one line."""

    id: ShortText = Field(description="An item of the delivery, by the id it shows")
    count: Number = Field(description="What was delivered (0: nothing)")
    bundle: ItemBundle | None = Field(default=None, description="As delivered; absent: as the response confirmed it")
    reason: literal(ResponseReason) | None = Field(default=None, description="Why it differs (decisions §16)")


class ProofBody(Shape):
    """Who received it and links to the proof: the service keeps the links, not the files."""

    received_by: Annotated[str, Strict(), Field(max_length=limits.RECEIVED_BY_LENGTH)] | None = None
    signature_url: HttpsUrl | None = None
    photo_urls: Annotated[list[HttpsUrl], Field(max_length=limits.PROOF_PHOTOS)] | None = None
    note: Text | None = None


class DeliveryNoteBody(Shape):
    """POST /deliveries/:id/delivery-note."""

    number: Annotated[str, Strict(), Field(min_length=1, max_length=limits.NOTE_NUMBER_LENGTH)] = Field(
        description="The paper note's number"
    )
    delivered_at: Annotated[str, Strict(), AfterValidator(_rfc_3339)] | None = Field(
        default=None, description="RFC 3339; default now; at most 5 minutes ahead, not before the request"
    )
    items: Annotated[list[NoteItemBody], Field(max_length=limits.ORDER_ITEMS)] | None = Field(
        default=None, description="Lines delivered otherwise than confirmed; a line left out was delivered as confirmed"
    )
    substitutions: Substitutions | None = Field(default=None, description="Replace the responses' substitutes")
    empties: Empties | None = Field(default=None, description="What the driver collected; absent: what §15 counts")
    proof: ProofBody | None = None
    message: Text | None = None
    user: User | None = None


def check_deliverable(delivery: dict) -> None:
    """400 invalid-transition for a delivery no note may deliver: one that is final, or has its note already."""
    if delivery.get(NOTE) is not None:
        raise InvalidTransition("the delivery has its delivery note already; a delivery takes one")
    if delivery["status"] in FINAL:
        raise InvalidTransition(f"a {delivery['status']} delivery takes no delivery note")


def _delivered_at(given: str | None, delivery: dict, now: dt.datetime) -> tuple[dt.datetime, list[FieldError]]:
    moment = _moment(given) if given is not None else now
    ahead = dt.timedelta(seconds=limits.DELIVERED_AT_AHEAD_SECONDS)
    if moment > now + ahead:
        return moment, [FieldError("delivered_at", "must not be more than 5 minutes in the future")]
    requested = delivery["request"]["timestamp"]
    if moment < parse_iso(requested):
        return moment, [FieldError("delivered_at", f"must not be before the delivery was requested ({requested})")]
    return moment, []


def _said(given, lines: dict) -> tuple[dict, list[FieldError]]:
    """The note's items by line, and the problems of each (every one at once, decisions §3)."""
    said, errors = {}, []
    for i, item in enumerate(given or ()):
        path = f"items[{i}]"
        line = lines.get(item.id)
        if line is None or item.id in said:
            message = "is not an item of this delivery" if line is None else "appears more than once in the note"
            errors.append(FieldError(f"{path}.id", message))
            continue
        said[item.id] = (i, item)
        errors += answered_line_errors(item, line, path)
    return said, errors


def _lines(delivery: dict, basis: dict | None, given) -> tuple[list[dict], list[FieldError]]:
    """Every line of the delivery, in its order: as ordered, as confirmed, as delivered."""
    request_items = delivery["request"].get("items") or []
    said, errors = _said(given, {item["id"]: item for item in request_items})
    confirmed = lines_now({**delivery, "responses": counted_responses(delivery, basis)})
    packaging = (basis or {}).get("packaging") or {}
    lines = []
    for item, (_, count, bundle, _vessels) in zip(request_items, confirmed):
        line = {"id": item["id"], "bundle": bundle, "ordered": item["count"], "confirmed": count}
        index, note = said.get(item["id"], (None, None))
        if note is not None and "bundle" in note.model_fields_set:
            line["bundle"] = dump(note.bundle) if note.bundle is not None else None
        line["count"] = note.count if note is not None else count
        line["vessel_count"] = vessel_count(line["count"], line["bundle"])
        if note is not None:
            path = f"items[{index}].bundle"
            errors += deposit_orders.fraction_errors(packaging.get(item["id"]), line["vessel_count"], path)
            if note.reason is not None:
                line["reason"] = note.reason
        lines.append(line)
    return lines, errors


def _collected(delivery: dict, responses: list[dict]) -> list[dict]:
    """The empties that count as returned when the note names none: the latest response's, else those the customer
    announced (a note implies acceptance, as an ACCEPT takes them: decisions §15)."""
    for response in reversed(responses):
        if "empties" in response:
            return response["empties"]
    return delivery["request"].get("empties") or []


def deliver(
    delivery: dict,
    basis: dict | None,
    body: DeliveryNoteBody,
    substitutes: list[dict] | None,
    empties: list[dict] | None,
    now: dt.datetime,
    zone: str,
    errors: list[FieldError] = (),
) -> dict:
    """The delivery as the note leaves it: DELIVERED, with its `delivery_note`; InvalidTransition, or
    ValidationFailed naming every wrong field (`errors`: those the service found in the substitutes and empties)."""
    check_deliverable(delivery)
    moment, wrong = _delivered_at(body.delivered_at, delivery, now)
    lines, line_errors = _lines(delivery, basis, body.items)
    wrong += line_errors + list(errors)
    if wrong:
        raise ValidationFailed(wrong)
    responses = counted_responses(delivery, basis)
    note = {
        "number": body.number,
        "delivered_at": local_iso(moment, zone, "milliseconds"),
        "items": lines,
        "substitutions": substitutes if substitutes is not None else substitutes_of(responses),
        "empties": empties if empties is not None else _collected(delivery, responses),
    }
    proof = dump(body.proof) if body.proof is not None else {}
    if proof:
        note["proof"] = proof
    if body.message:
        note["message"] = body.message
    if body.user is not None:
        note["user"] = dump(body.user)
    note["timestamp"] = timestamp(now)
    too_large = limits.size_errors(note, limits.NOTE_BYTES, "body", "a delivery note holds")
    if too_large:
        raise ValidationFailed(too_large)
    return {**delivery, "status": DELIVERED, NOTE: note}
