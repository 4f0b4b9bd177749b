"""Ten of the largest claims with the largest answers, on a delivery already at its other bounds (decisions §18,
domain/limits.py): test_note_limits.py builds the largest delivery with its largest note once and goes on here."""

import json
from decimal import Decimal

from chalicelib.domain import claims, limits
from chalicelib.domain.claim_shapes import AnswerBody, ClaimBody
from chalicelib.domain.common import parse
from chalicelib.domain.rendering import size_in_bytes
from chalicelib.store import claim_keys, table
from chalicelib.store import deliveries as delivery_store

from .test_limits_store import CUSTOMER_TOKEN, NOW, USER, WORST, largest, valid

LINK = "https://evidence.example/" + "a" * (limits.URL_LENGTH - len("https://evidence.example/"))


def _claim(first: str, second: str, message: int) -> dict:
    """Two lines: the first with the longest evidence and a message of `message` characters of the widest JSON."""
    items = [
        {"id": first, "issue": "WRONG_ITEM", "count": 1, "message": WORST * message, "evidence": [LINK] * 5},
        {"id": second, "issue": "DAMAGED", "count": 1},
    ]
    return {"items": items, "user": USER}


def _answer(first: str, second: str, message: int) -> dict:
    items = [
        {"id": first, "accepted": 1, "resolution": "CREDIT", "reason": "x"},
        {"id": second, "accepted": 0, "resolution": "NONE"},
    ]
    return {"items": items, "user": USER, "message": WORST * message}


def _parsed(model, body):
    return parse(model, json.loads(json.dumps(body), parse_float=Decimal))


def _claim_fits(delivery_id: int, body: dict) -> bool:
    """Whether the claim would be taken, asked of the domain as the service asks it (nothing is written)."""
    stored = delivery_store.get("acme", delivery_id, consistent=True)
    return valid(lambda: claims.opened(stored.delivery, stored.deposit_basis, _parsed(ClaimBody, body), NOW, {}))


def _answer_fits(delivery_id: int, number: int, body: dict) -> bool:
    stored = delivery_store.get("acme", delivery_id, consistent=True)
    parsed = _parsed(AnswerBody, body)
    return valid(lambda: claims.answered(stored.delivery, stored.deposit_basis, number, parsed, NOW, {}))


def ten_largest_claims(api, delivery_id: int, delivered: dict) -> None:
    """Open ten claims at their byte bound and answer each at its bound; the delivery in full then still fits every
    answer that carries it (a webhook event's body the tightest) and replays byte for byte from its
    Idempotency-Key record; the claims item stays one item."""
    lines = [item["id"] for item in delivered["delivery_note"]["items"]]
    claim_path = f"/customer/deliveries/{delivery_id}/claims"
    for k in range(limits.CLAIMS):
        first, second = lines[2 * k], lines[2 * k + 1]
        message = largest(lambda m: _claim_fits(delivery_id, _claim(first, second, m)), limits.MESSAGE_LENGTH)
        assert message < limits.MESSAGE_LENGTH  # the claim's byte bound, not the message's, stopped it
        refused = api.post(claim_path, _claim(first, second, message + 1), token=CUSTOMER_TOKEN)
        assert (refused.status_code, [e["path"] for e in refused.data["errors"]]) == (400, ["body"])
        opened = api.post(claim_path, _claim(first, second, message), token=CUSTOMER_TOKEN)
        assert opened.status_code == 200, opened.data
        claim = opened.data["claims"][k]
        assert limits.CLAIM_BYTES - 6 < size_in_bytes(claim) <= limits.CLAIM_BYTES

        number, answer_path = k + 1, f"/deliveries/{delivery_id}/claims/{k + 1}/answer"
        said = largest(lambda m: _answer_fits(delivery_id, number, _answer(first, second, m)), limits.MESSAGE_LENGTH)
        assert said < limits.MESSAGE_LENGTH
        refused = api.post(answer_path, _answer(first, second, said + 1))
        assert (refused.status_code, [e["path"] for e in refused.data["errors"]]) == (400, ["body"])
        keyed = {"Idempotency-Key": f"largest-answer-{number}"}
        answered = api.post(answer_path, _answer(first, second, said), headers=keyed)
        assert answered.status_code == 200, answered.data
        added = size_in_bytes(answered.data["claims"][k]) - size_in_bytes(claim)
        assert limits.CLAIM_ANSWER_BYTES - 6 < added <= limits.CLAIM_ANSWER_BYTES

    eleventh = api.post(claim_path, {"items": [{"id": lines[-1], "issue": "OTHER", "count": 1}]}, token=CUSTOMER_TOKEN)
    assert (eleventh.status_code, [e["path"] for e in eleventh.data["errors"]]) == (400, ["items"])

    full = api.get(f"/deliveries/{delivery_id}")
    assert [c["status"] for c in full.data["claims"]] == ["PARTIALLY_ACCEPTED"] * limits.CLAIMS
    assert full.data["delivery_note"] == delivered["delivery_note"]
    assert len(full.body) <= limits.FULL_DELIVERY_BYTES
    assert len(full.body) + 1_000 < limits.MAX_BODY_BYTES  # a webhook event's body carries it whole
    replayed = api.post(answer_path, _answer(first, second, said), headers=keyed)
    assert (replayed.status_code, replayed.headers.get("Idempotent-Replayed")) == (200, "true")
    assert replayed.body == answered.body and len(answered.body) > 400 * 1024  # kept in parts
    stored = table.client().get_item(
        TableName=table.name(), Key=table.to_item(claim_keys.delivery_claims_key("acme", delivery_id))
    )["Item"]
    assert 9 * (limits.CLAIM_BYTES + limits.CLAIM_ANSWER_BYTES) < len(stored["claims"]["S"].encode()) < 400 * 1024
