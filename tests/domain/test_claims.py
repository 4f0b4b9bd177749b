"""The rules of claims (decisions §18, second half), without infrastructure: what a claim may name and how much, the
claim window, the supplier's answer line by line (the default credit, the status it derives), withdrawal, and the
byte bounds of a claim and of its answer at their edges."""

import datetime as dt
import json
from decimal import Decimal

import pytest

from chalicelib.domain import claims, limits
from chalicelib.domain.claim_shapes import AnswerBody, ClaimBody
from chalicelib.domain.common import parse
from chalicelib.domain.errors import ClaimWindowClosed, InvalidTransition, NotFound, ValidationFailed
from chalicelib.domain.rendering import size_in_bytes

NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
RECEIVED = "2026-05-04T09:30:00.000Z"
CRATE = {"type": "CR", "size": 20}


def delivery(**fields) -> dict:
    """Two crates of beer (95 a bottle), 2 kg of cheese (1,200 a kilo) and six unpriced waters, received."""
    items = [
        {"id": "beer", "count": 2, "bundle": CRATE, "vessel_count": 40, "price": 95},
        {"id": "cheese", "order_by": "kg", "count": 2, "bundle": None, "vessel_count": 2, "price": 1200},
        {"id": "water", "count": 6, "bundle": None, "vessel_count": 6, "price": None},
    ]
    return {
        "id": 7,
        "type": "DELIVERY",
        "status": "DELIVERED",
        "request": {"timestamp": "2026-05-01T08:00:00.000Z", "customer_id": "c1", "items": items},
        "responses": [],
        "received": {"timestamp": RECEIVED, "user": None, "message": None},
        **fields,
    }


def as_parsed(value):
    """A body as the service parses JSON: 0.5 as Decimal."""
    return json.loads(json.dumps(value), parse_float=Decimal)


def claim_body(*items, **fields) -> ClaimBody:
    return parse(ClaimBody, as_parsed({"items": list(items), **fields}))


def line(item_id="beer", count=1, issue="DAMAGED", **fields) -> dict:
    return {"id": item_id, "issue": issue, "count": count, **fields}


def opened(source: dict, *items, substitutes_by_kg=None, **fields) -> tuple[dict, dict]:
    return claims.opened(source, None, claim_body(*items, **fields), NOW, substitutes_by_kg or {})


def paths(failed: pytest.ExceptionInfo) -> list[str]:
    return [error.path for error in failed.value.errors]


def answer_body(*items, **fields) -> AnswerBody:
    return parse(AnswerBody, as_parsed({"items": list(items), **fields}))


def answered(source: dict, number: int, *items, **fields) -> tuple[dict, dict]:
    return claims.answered(source, None, number, answer_body(*items, **fields), NOW, {})


# --- what was delivered ---


def test_without_a_note_lines_are_as_the_latest_response_states_them_at_the_price_it_stated():
    source = delivery(
        responses=[
            {"type": "ACCEPT", "items": [{"id": "beer", "count": 1, "vessel_count": 20, "price": 90}]},
            {"type": "UPDATE", "items": [{"id": "water", "count": 4, "vessel_count": 4}]},
        ]
    )
    lines = claims.delivered_lines(source, None)
    assert lines["beer"] == claims.Line(Decimal(1), Decimal(20), 90, False)
    assert lines["cheese"] == claims.Line(Decimal(2), Decimal(1), 1200, True)
    assert lines["water"] == claims.Line(Decimal(4), Decimal(1), None, False)


def test_a_note_says_what_was_delivered_and_its_substitutes_are_lines_of_their_own():
    note = {
        "delivered_at": "2026-05-04T12:30:00.000+03:00",
        "items": [
            {"id": "beer", "bundle": CRATE, "ordered": 2, "confirmed": 2, "count": 1, "vessel_count": 20},
            {"id": "cheese", "bundle": None, "ordered": 2, "confirmed": 2, "count": 1.5, "vessel_count": 1.5},
            {"id": "water", "bundle": None, "ordered": 6, "confirmed": 6, "count": 0, "vessel_count": 0},
        ],
        "substitutions": [
            {"for": "beer", "id": "helles", "count": 1, "bundle": CRATE, "vessel_count": 20, "price": 110}
        ],
    }
    lines = claims.delivered_lines(delivery(delivery_note=note), None)
    assert lines["beer"].delivered == 1 and lines["cheese"].delivered == Decimal("1.5")
    assert lines["water"] == claims.Line(Decimal(0), Decimal(0), None, False)
    assert lines["helles"] == claims.Line(Decimal(1), Decimal(20), 110, None)  # by kg: its product tells
    assert claims.substitutes_claimed(delivery(delivery_note=note), None, ["beer", "helles", "nope"]) == ["helles"]


# --- the claim window ---


def test_the_window_counts_from_the_receive_or_from_the_note_s_delivered_at():
    assert claims.window_closes(delivery(), 72) == NOW + dt.timedelta(hours=72)
    noted = delivery(delivery_note={"delivered_at": "2026-05-04T12:30:00.000+03:00", "items": [], "substitutions": []})
    assert claims.window_closes(noted, 1) == NOW + dt.timedelta(hours=1)


def test_a_claim_is_taken_until_the_moment_the_window_closes_and_refused_from_then_on():
    closes = NOW + dt.timedelta(hours=72)
    claims.check_claimable(delivery(), closes - dt.timedelta(milliseconds=1), 72, "UTC")
    with pytest.raises(ClaimWindowClosed) as refused:
        claims.check_claimable(delivery(), closes, 72, "Europe/Helsinki")
    assert refused.value.extensions == {"closed_at": "2026-05-07T12:30:00.000+03:00"}
    assert "2026-05-07T12:30:00.000+03:00" in refused.value.detail
    with pytest.raises(ClaimWindowClosed):  # 0 hours: claims only with the receipt itself
        claims.check_claimable(delivery(), NOW, 0, "UTC")


@pytest.mark.parametrize(
    "fields, words", [({"status": "ACCEPTED"}, "ACCEPTED delivery"), ({"type": "RETURN"}, "RETURN takes no claims")]
)
def test_only_delivered_deliveries_of_type_delivery_take_claims(fields, words):
    with pytest.raises(InvalidTransition, match=words):
        claims.check_claimable(delivery(**fields), NOW, 72, "UTC")


# --- opening a claim ---


def test_a_claim_is_numbered_and_shows_its_lines_as_claimed():
    first, claim = opened(
        delivery(),
        line("beer", 1, evidence=["https://photos.example/1.jpg"]),
        line("cheese", 0.5, "QUALITY", message="mouldy"),
        user={"name": "Anna", "email": "anna@example.com"},
        message="see photos",
    )
    assert claim == {
        "number": 1,
        "status": "OPEN",
        "opened_at": RECEIVED,
        "user": {"name": "Anna", "email": "anna@example.com"},
        "message": "see photos",
        "items": [
            {"id": "beer", "issue": "DAMAGED", "count": 1, "evidence": ["https://photos.example/1.jpg"]},
            {"id": "cheese", "issue": "QUALITY", "count": Decimal("0.5"), "message": "mouldy"},
        ],
    }
    second, claim = opened(first, line("water", 6, "SHORT"))
    assert claim["number"] == 2 and [c["number"] for c in second["claims"]] == [1, 2]


def test_a_line_is_named_once_and_must_be_delivered():
    with pytest.raises(ValidationFailed) as refused:
        opened(delivery(), line("beer"), line("nope"), line("beer"))
    assert paths(refused) == ["items[1].id", "items[2].id"]


def test_counts_are_whole_unless_the_product_goes_by_kg():
    with pytest.raises(ValidationFailed) as refused:
        opened(delivery(), line("beer", 0.5), line("cheese", 0.25))
    assert paths(refused) == ["items[0].count"]


def test_a_count_is_at_most_what_was_delivered_less_what_open_and_accepted_claims_hold():
    with pytest.raises(ValidationFailed) as refused:
        opened(delivery(), line("beer", 3))  # two crates were delivered
    assert paths(refused) == ["items[0].count"] and "at most 2" in refused.value.errors[0].message
    first, _ = opened(delivery(), line("beer", 1), line("water", 6))
    with pytest.raises(ValidationFailed) as refused:
        opened(first, line("beer", 2), line("water", 1))
    assert paths(refused) == ["items[0].count", "items[1].count"]
    assert refused.value.errors[0].message == (
        "must be at most 1: 2 delivered, 1 claimed by claims that are not WITHDRAWN or DECLINED"
    )
    second, _ = opened(first, line("beer", 1))  # what is left
    with pytest.raises(ValidationFailed):
        opened(second, line("beer", 1))


@pytest.mark.parametrize("status", ["WITHDRAWN", "DECLINED"])
def test_withdrawn_and_declined_claims_hold_nothing(status):
    first, _ = opened(delivery(), line("beer", 2))
    settled = {**first, "claims": [{**first["claims"][0], "status": status}]}
    assert opened(settled, line("beer", 2))[1]["number"] == 2


@pytest.mark.parametrize("status", ["ACCEPTED", "PARTIALLY_ACCEPTED"])
def test_accepted_claims_hold_what_they_claimed(status):
    first, _ = opened(delivery(), line("beer", 2))
    settled = {**first, "claims": [{**first["claims"][0], "status": status}]}
    with pytest.raises(ValidationFailed):
        opened(settled, line("beer", 1))


def test_a_substitute_s_product_says_whether_it_goes_by_kg():
    note = {
        "delivered_at": "2026-05-04T09:30:00.000Z",
        "items": [{"id": "cheese", "bundle": None, "ordered": 2, "confirmed": 2, "count": 0, "vessel_count": 0}],
        "substitutions": [{"for": "cheese", "id": "gouda", "count": 2, "bundle": None, "vessel_count": 2, "price": 9}],
    }
    noted = delivery(delivery_note=note)
    with pytest.raises(ValidationFailed):
        opened(noted, line("gouda", 0.5))
    assert opened(noted, line("gouda", 0.5), substitutes_by_kg={"gouda": True})[1]["items"][0]["count"] == Decimal(
        "0.5"
    )


def test_a_delivery_takes_ten_claims_and_the_eleventh_is_refused_naming_items():
    current = delivery()
    for number in range(1, limits.CLAIMS + 1):
        current, claim = opened(current, line("beer", 1))
        current, _ = claims.withdrawn(current, number, NOW)  # so the beer can be claimed again
    assert claim["number"] == 10
    with pytest.raises(ValidationFailed) as refused:
        opened(current, line("beer", 1))
    assert paths(refused) == ["items"] and "at most 10 claims" in refused.value.errors[0].message


IDS = ("beer", "cheese", "water")


def _texts_filling(room: int) -> list[str]:
    """Three texts of at most 2,000 characters each that take exactly `room` bytes of JSON together."""
    texts = []
    for _ in IDS:
        fours = min(limits.MESSAGE_LENGTH, room // 4)
        ones = min(limits.MESSAGE_LENGTH - fours, room - 4 * fours)
        texts.append("\U0001f37a" * fours + "x" * ones)  # a 4-byte character, then 1-byte ones
        room -= 4 * fours + ones
    assert room == 0
    return texts


def test_a_claim_holds_at_most_24000_bytes_as_opened():
    base = opened(delivery(), *[line(item_id, 1, message="") for item_id in IDS])[1]
    messages = _texts_filling(limits.CLAIM_BYTES - size_in_bytes(base))
    at_edge = [line(item_id, 1, message=text) for item_id, text in zip(IDS, messages)]
    assert size_in_bytes(opened(delivery(), *at_edge)[1]) == limits.CLAIM_BYTES
    at_edge[-1]["message"] += "x"
    with pytest.raises(ValidationFailed) as refused:
        opened(delivery(), *at_edge)
    assert paths(refused) == ["body"] and "24,001 bytes" in refused.value.errors[0].message


# --- the supplier's answer ---


def test_the_default_credit_values_the_accepted_count_in_vessels_at_the_price_as_delivered():
    source = delivery(
        responses=[{"type": "ACCEPT", "items": [{"id": "beer", "count": 2, "vessel_count": 40, "price": 90}]}]
    )
    first, _ = opened(source, line("beer", 2), line("cheese", 1.5), line("water", 6, "SHORT"))
    _, claim = answered(
        first,
        1,
        {"id": "beer", "accepted": 1, "resolution": "CREDIT"},
        {"id": "cheese", "accepted": 0.25, "resolution": "CREDIT"},
        {"id": "water", "accepted": 6, "resolution": "CREDIT"},
    )
    assert [(i["accepted"], i["resolution"], i["credit"]) for i in claim["items"]] == [
        (1, "CREDIT", 1 * 20 * 90),  # one crate of 20 bottles at the price the response stated
        (Decimal("0.25"), "CREDIT", 300),  # a quarter kilo at 1,200 a kilo
        (6, "CREDIT", 0),  # no price
    ]
    assert claim["status"] == "PARTIALLY_ACCEPTED"


def test_a_credit_is_rounded_half_up_to_whole_cents():
    assert claims.default_credit(claims.Line(Decimal(1), Decimal(1), 333, False), Decimal("0.5")) == 167
    assert claims.default_credit(claims.Line(Decimal(1), Decimal(1), 333, False), Decimal("0.25")) == 83
    assert claims.default_credit(claims.Line(Decimal(1), Decimal(1), None, False), Decimal(1)) == 0


def test_other_resolutions_credit_nothing_unless_a_credit_is_given():
    first, _ = opened(delivery(), line("beer", 2), line("cheese", 1))
    _, claim = answered(
        first,
        1,
        {"id": "cheese", "accepted": 1, "resolution": "CREDIT", "credit": 1000, "reason": "goodwill"},
        {"id": "beer", "accepted": 2, "resolution": "REPLACE"},
    )
    assert claim["items"] == [
        {"id": "beer", "issue": "DAMAGED", "count": 2, "accepted": 2, "resolution": "REPLACE", "credit": 0},
        {
            "id": "cheese",
            "issue": "DAMAGED",
            "count": 1,
            "accepted": 1,
            "resolution": "CREDIT",
            "credit": 1000,
            "reason": "goodwill",
        },
    ]
    assert claim["status"] == "ACCEPTED" and claim["answer"] == {"timestamp": RECEIVED}


def test_nothing_accepted_is_declined_and_needs_a_message():
    first, _ = opened(delivery(), line("beer", 2))
    with pytest.raises(ValidationFailed) as refused:
        answered(first, 1, {"id": "beer", "accepted": 0, "resolution": "NONE"}, message="  ")
    assert paths(refused) == ["message"]
    _, claim = answered(first, 1, {"id": "beer", "accepted": 0, "resolution": "NONE"}, message="not our breakage")
    assert claim["status"] == "DECLINED" and claim["answer"]["message"] == "not our breakage"


def test_every_claimed_line_is_answered_exactly_once():
    first, _ = opened(delivery(), line("beer", 2), line("cheese", 1))
    with pytest.raises(ValidationFailed) as refused:
        answered(
            first,
            1,
            {"id": "beer", "accepted": 3, "resolution": "CREDIT"},
            {"id": "water", "accepted": 1, "resolution": "CREDIT"},
            {"id": "beer", "accepted": 1, "resolution": "CREDIT"},
        )
    assert paths(refused) == ["items[0].accepted", "items[1].id", "items[2].id", "items"]
    assert refused.value.errors[-1].message.startswith("must answer the claimed line 'cheese'")
    with pytest.raises(ValidationFailed) as refused:
        answered(
            first,
            1,
            {"id": "beer", "accepted": 0.5, "resolution": "CREDIT"},
            {"id": "cheese", "accepted": 0.5, "resolution": "CREDIT"},
        )
    assert paths(refused) == ["items[0].accepted"]  # whole for the beer, a half kilo of cheese is fine


def test_only_an_open_claim_is_answered_or_withdrawn_and_an_unknown_number_is_not_found():
    first, _ = opened(delivery(), line("beer", 1))
    withdrawn, claim = claims.withdrawn(first, 1, NOW + dt.timedelta(minutes=5))
    assert claim["status"] == "WITHDRAWN" and claim["withdrawn_at"] == "2026-05-04T09:35:00.000Z"
    assert claims.since(claim) == "2026-05-04T09:35:00.000Z"
    with pytest.raises(InvalidTransition, match="claim 1 is WITHDRAWN: only an OPEN claim can be answered"):
        answered(withdrawn, 1, {"id": "beer", "accepted": 1, "resolution": "CREDIT"})
    with pytest.raises(InvalidTransition, match="can be withdrawn"):
        claims.withdrawn(withdrawn, 1, NOW)
    done, claim = answered(first, 1, {"id": "beer", "accepted": 1, "resolution": "CREDIT"})
    assert claims.since(claim) == RECEIVED
    with pytest.raises(InvalidTransition):
        answered(done, 1, {"id": "beer", "accepted": 1, "resolution": "CREDIT"})
    with pytest.raises(NotFound):
        claims.withdrawn(first, 2, NOW)


def test_an_answer_adds_at_most_12000_bytes_to_its_claim():
    first, claim = opened(delivery(), *[line(item_id, 1) for item_id in IDS])

    def answer(reasons):
        given = [{"id": i, "accepted": 1, "resolution": "COLLECT", "reason": r} for i, r in zip(IDS, reasons)]
        return answered(first, 1, *given)[1]

    added = size_in_bytes(answer(["", "", ""])) - size_in_bytes(claim)
    reasons = _texts_filling(limits.CLAIM_ANSWER_BYTES - added)
    assert size_in_bytes(answer(reasons)) - size_in_bytes(claim) == limits.CLAIM_ANSWER_BYTES
    reasons[-1] += "x"
    with pytest.raises(ValidationFailed) as refused:
        answer(reasons)
    assert paths(refused) == ["body"] and "12,001 bytes" in refused.value.errors[0].message
