"""The bar's claims (decisions §18, second half): what arrived broken, short, wrong or expired, claimed line by line
within the account's claim window after the delivery, and the supplier's answer to each claimed line.

Pure: the delivery as read (with its deposit basis), the account's window and time zone, the time, and whether each
substitute's product is ordered by kg (a substitute does not show it) arrive as data. Claims are kept on the delivery
as `claims`, shown by its single reads only. A claim never moves a deposit balance: the driver's count is the note's,
and a supplier corrects a balance by an adjustment (§15).
"""

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from . import limits
from .claim_shapes import AnswerBody, AnswerItemBody, ClaimBody, ClaimItemBody
from .claim_status import ACCEPTED, DECLINED, HOLDING, OPEN, PARTIALLY_ACCEPTED, WITHDRAWN, ClaimResolution
from .common import dump, is_whole, well_formed_items
from .delivery_status import DELIVERED, DELIVERY
from .deposits import counted_responses, lines_now, substitutes_of
from .errors import ClaimWindowClosed, FieldError, InvalidTransition, NotFound, ValidationFailed
from .rendering import size_in_bytes
from .timestamps import iso, local_iso, parse_iso
from .values import is_by_kg

CLAIMS = "claims"
NOTE = "delivery_note"


class Line(NamedTuple):
    """A delivered line or substitute, as claims measure and value it."""

    delivered: Decimal  # how much of it was delivered
    vessels_per_count: Decimal  # the vessels (or kilos) one count of it holds, as its vessel_count counts them
    price: int | None  # cents a vessel (or kilo), as delivered
    by_kg: bool | None  # None for a substitute: its product tells


def _decimal(value) -> Decimal:
    return Decimal(str(value))


def _written(number: Decimal) -> str:
    """A count as a message writes it: 18, 1.25."""
    return str(int(number)) if is_whole(number) else str(number.normalize())


def _line(count, vessel_count, price, by_kg: bool | None) -> Line:
    count = _decimal(count)
    per_count = _decimal(vessel_count) / count if count else Decimal(0)
    return Line(count, per_count, price, by_kg)


def _stated_prices(responses: list[dict]) -> dict[str, int]:
    """The price each line was last stated at by a response (the price it is delivered at)."""
    prices: dict[str, int] = {}
    for response in responses:
        for item in response.get("items") or ():
            if item.get("price") is not None:
                prices[item["id"]] = item["price"]
    return prices


def delivered_lines(delivery: dict, basis: dict | None) -> dict[str, Line]:
    """Every line and substitute that was delivered, by the id a claim names it by: as the delivery note says, or
    (received without one) as the latest responses state them, else as requested."""
    responses = counted_responses(delivery, basis)
    requested = {item["id"]: item for item in delivery["request"].get("items") or ()}
    prices = {**{item_id: item.get("price") for item_id, item in requested.items()}, **_stated_prices(responses)}
    note = delivery.get(NOTE)
    if note is not None:
        lines = [(line["id"], line["count"], line["vessel_count"]) for line in note["items"]]
        substitutes = note["substitutions"]
    else:
        now = lines_now({**delivery, "responses": responses})
        lines = [(item_id, count, vessels) for item_id, count, _bundle, vessels in now]
        substitutes = substitutes_of(responses)
    found = {
        item_id: _line(count, vessels, prices.get(item_id), is_by_kg(requested[item_id]))
        for item_id, count, vessels in lines
    }
    for substitute in substitutes:
        found[substitute["id"]] = _line(substitute["count"], substitute["vessel_count"], substitute["price"], None)
    return found


def substitutes_claimed(delivery: dict, basis: dict | None, ids) -> list[str]:
    """Which of `ids` are substitutes (whose products the service reads to know whether they are ordered by kg)."""
    lines = delivered_lines(delivery, basis)
    return sorted({item_id for item_id in ids if item_id in lines and lines[item_id].by_kg is None})


def window_closes(delivery: dict, hours: int) -> dt.datetime:
    """When the claim window closes: `hours` after the note's delivered_at, or after the receive."""
    note = delivery.get(NOTE)
    start = note["delivered_at"] if note is not None else (delivery.get("received") or {}).get("timestamp")
    if start is None:
        raise InvalidTransition("the delivery has no delivery note and no receipt to count a claim window from")
    return parse_iso(start) + dt.timedelta(hours=hours)


def check_claimable(delivery: dict, now: dt.datetime, hours: int, zone: str) -> None:
    """400 invalid-transition unless a claim may be opened now: a DELIVERED delivery of type DELIVERY within the
    account's claim window (the problem then adds `closed_at`)."""
    check_type(delivery)
    if delivery["status"] != DELIVERED:
        raise InvalidTransition(f"a {delivery['status']} delivery takes no claims: only a DELIVERED one does")
    closes = window_closes(delivery, hours)
    if now >= closes:
        closed_at = local_iso(closes, zone, "milliseconds")
        raise ClaimWindowClosed(
            f"the claim window closed at {closed_at} ({hours} hours after the delivery); claims are no longer taken",
            closed_at,
        )


def check_type(delivery: dict) -> None:
    if delivery["type"] != DELIVERY:
        raise InvalidTransition(f"a {delivery['type']} takes no claims: claims are about what a DELIVERY brought")


def held(claims: list[dict]) -> dict[str, Decimal]:
    """What the claims that are not WITHDRAWN or DECLINED claim of each line."""
    counts: dict[str, Decimal] = {}
    for claim in claims:
        if claim["status"] in HOLDING:
            for item in claim["items"]:
                counts[item["id"]] = counts.get(item["id"], Decimal(0)) + _decimal(item["count"])
    return counts


def _by_kg(line: Line | None, item_id: str, substitutes_by_kg: dict[str, bool]) -> bool:
    if line is not None and line.by_kg is not None:
        return line.by_kg
    return substitutes_by_kg.get(item_id, False)


def _whole_errors(number: Decimal, by_kg: bool, path: str) -> list[FieldError]:
    if by_kg or is_whole(number):
        return []
    return [FieldError(path, "must be a whole number unless the product is ordered by kg")]


def _claimed_line_errors(item, path: str, line: Line, by_kg: bool, claimed_before: Decimal) -> list[FieldError]:
    errors = _whole_errors(item.count, by_kg, f"{path}.count")
    left = line.delivered - claimed_before
    if not errors and item.count > left:
        errors.append(
            FieldError(
                f"{path}.count",
                f"must be at most {_written(max(left, Decimal(0)))}: {_written(line.delivered)} delivered, "
                f"{_written(claimed_before)} claimed by claims that are not WITHDRAWN or DECLINED",
            )
        )
    return errors


def claimed_items(
    delivery: dict, basis: dict | None, given: list[tuple[int, ClaimItemBody]], substitutes_by_kg: dict[str, bool]
) -> tuple[list[dict], list[FieldError]]:
    """The claimed items (each given with its position in the body) as the claim keeps them, and what each gets
    wrong against the delivery: a line it lacks or names twice, a count past what is left to claim."""
    lines, before = delivered_lines(delivery, basis), held(delivery.get(CLAIMS) or [])
    errors, seen, items = [], set(), []
    for i, item in given:
        path, line = f"items[{i}]", lines.get(item.id)
        if line is None or item.id in seen:
            why = "is not a delivered line or substitute of this delivery" if line is None else "is claimed twice"
            errors.append(FieldError(f"{path}.id", why if line is None else f"{why}: a claim names a line once"))
            continue
        seen.add(item.id)
        by_kg = _by_kg(line, item.id, substitutes_by_kg)
        errors += _claimed_line_errors(item, path, line, by_kg, before.get(item.id, Decimal(0)))
        items.append(dump(item))
    return items, errors


def items_that_parse(data) -> list[tuple[int, ClaimItemBody]]:
    return well_formed_items(data, ClaimItemBody, limits.CLAIM_LINES)


def opened(
    delivery: dict, basis: dict | None, body: ClaimBody, now: dt.datetime, substitutes_by_kg: dict[str, bool]
) -> tuple[dict, dict]:
    """The delivery with its next claim, and that claim; ValidationFailed naming every wrong field."""
    claims = list(delivery.get(CLAIMS) or [])
    if len(claims) >= limits.CLAIMS:
        raise ValidationFailed(
            [FieldError("items", f"a delivery takes at most {limits.CLAIMS} claims, and this one has them")]
        )
    items, errors = claimed_items(delivery, basis, list(enumerate(body.items)), substitutes_by_kg)
    if errors:
        raise ValidationFailed(errors)
    claim = {"number": len(claims) + 1, "status": OPEN.value, "opened_at": iso(now)}
    if body.user is not None:
        claim["user"] = dump(body.user)
    if body.message:
        claim["message"] = body.message
    claim["items"] = items
    too_large = limits.size_errors(claim, limits.CLAIM_BYTES, "body", "a claim holds")
    if too_large:
        raise ValidationFailed(too_large)
    return {**delivery, CLAIMS: [*claims, claim]}, claim


def found(delivery: dict, number: int) -> dict:
    """The delivery's claim `number`; 404 when it has none of that number."""
    for claim in delivery.get(CLAIMS) or ():
        if claim["number"] == number:
            return claim
    raise NotFound(f"delivery {delivery['id']} has no claim {number}")


def _replaced(delivery: dict, claim: dict) -> dict:
    return {**delivery, CLAIMS: [claim if c["number"] == claim["number"] else c for c in delivery[CLAIMS]]}


def _require_open(claim: dict, action: str) -> None:
    if claim["status"] != OPEN:
        raise InvalidTransition(f"claim {claim['number']} is {claim['status']}: only an OPEN claim can be {action}")


def default_credit(line: Line | None, accepted: Decimal) -> int:
    """The accepted count valued at the line's price as delivered, counted in vessels as its vessel_count counts them
    per count; whole cents, half up."""
    if line is None or not line.price:
        return 0
    cents = accepted * line.vessels_per_count * line.price
    return int(cents.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _answer_errors(
    claim: dict, answered: list[tuple[int, AnswerItemBody]], named: set[str], lines: dict, substitutes_by_kg: dict
) -> tuple[dict, list[FieldError]]:
    """The answers by line and what they get wrong against the claim: a line it lacks or answered twice, more
    accepted than claimed, a claimed line no item answers (`named`: the ids the body's items give, well formed or
    not: a malformed answer of a line is that line's problem, not a missing answer)."""
    claimed = {item["id"]: item for item in claim["items"]}
    errors, answers = [], {}
    for i, given in answered:
        path = f"items[{i}]"
        item = claimed.get(given.id)
        if item is None or given.id in answers:
            why = (
                f"is not a line of claim {claim['number']}" if item is None else "is answered twice: answer a line once"
            )
            errors.append(FieldError(f"{path}.id", why))
            continue
        answers[given.id] = given
        count = _decimal(item["count"])
        if given.accepted > count:
            errors.append(FieldError(f"{path}.accepted", f"must be at most the claimed count ({_written(count)})"))
        else:
            by_kg = _by_kg(lines.get(given.id), given.id, substitutes_by_kg)
            errors += _whole_errors(given.accepted, by_kg, f"{path}.accepted")
    errors += [
        FieldError("items", f"must answer the claimed line {item_id!r}: every line of the claim exactly once")
        for item_id in claimed
        if item_id not in answers and item_id not in named
    ]
    return answers, errors


def answer_problems(claim: dict, data, lines: dict, substitutes_by_kg: dict) -> list[FieldError]:
    """What the well-formed items of a refused answer body get wrong against the claim (decisions §3: named beside
    the body's own problems)."""
    raw = data.get("items") if isinstance(data, dict) else None
    named = {
        i["id"] for i in (raw if isinstance(raw, list) else ()) if isinstance(i, dict) and isinstance(i.get("id"), str)
    }
    given = well_formed_items(data, AnswerItemBody, limits.CLAIM_LINES)
    return _answer_errors(claim, given, named, lines, substitutes_by_kg)[1]


def _answered_items(claim: dict, body: AnswerBody, lines: dict, substitutes_by_kg: dict) -> list[dict]:
    answers, errors = _answer_errors(claim, list(enumerate(body.items)), set(), lines, substitutes_by_kg)
    if errors:
        raise ValidationFailed(errors)
    result = []
    for item in claim["items"]:
        given = answers[item["id"]]
        if given.credit is not None:
            credit = given.credit
        elif given.resolution == ClaimResolution.CREDIT:
            credit = default_credit(lines.get(item["id"]), given.accepted)
        else:
            credit = 0
        answered = {**item, "accepted": given.accepted, "resolution": given.resolution, "credit": credit}
        if given.reason is not None:
            answered["reason"] = given.reason
        result.append(answered)
    return result


def _status(items: list[dict]) -> str:
    if all(_decimal(item["accepted"]) == _decimal(item["count"]) for item in items):
        return ACCEPTED.value
    if all(_decimal(item["accepted"]) == 0 for item in items):
        return DECLINED.value
    return PARTIALLY_ACCEPTED.value


def answered(
    delivery: dict,
    basis: dict | None,
    number: int,
    body: AnswerBody,
    now: dt.datetime,
    substitutes_by_kg: dict[str, bool],
) -> tuple[dict, dict]:
    """The delivery with claim `number` answered line by line, and that claim: its status follows from what was
    accepted (decisions §18). 404, 400 invalid-transition (not OPEN), or ValidationFailed naming every wrong field."""
    claim = found(delivery, number)
    _require_open(claim, "answered")
    items = _answered_items(claim, body, delivered_lines(delivery, basis), substitutes_by_kg)
    status = _status(items)
    if status == DECLINED and not (body.message or "").strip():
        raise ValidationFailed([FieldError("message", "is required when nothing is accepted (DECLINED): say why")])
    answer = {"timestamp": iso(now)}
    if body.user is not None:
        answer["user"] = dump(body.user)
    if body.message:
        answer["message"] = body.message
    result = {**claim, "status": status, "items": items, "answer": answer}
    size = size_in_bytes(result) - size_in_bytes(claim)
    if size > limits.CLAIM_ANSWER_BYTES:
        message = f"the answer takes {size:,} bytes of JSON; an answer holds at most {limits.CLAIM_ANSWER_BYTES:,}"
        raise ValidationFailed([FieldError("body", message)])
    return _replaced(delivery, result), result


def withdrawn(delivery: dict, number: int, now: dt.datetime) -> tuple[dict, dict]:
    """The delivery with claim `number` WITHDRAWN by the customer, and that claim; only while it is OPEN."""
    claim = found(delivery, number)
    _require_open(claim, "withdrawn")
    result = {**claim, "status": WITHDRAWN.value, "withdrawn_at": iso(now)}
    return _replaced(delivery, result), result


def since(claim: dict) -> str:
    """When the claim entered its status: opened, answered or withdrawn."""
    return claim.get("withdrawn_at") or (claim.get("answer") or {}).get("timestamp") or claim["opened_at"]
