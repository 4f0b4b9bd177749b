"""Idempotency records (decisions §11): one item per key, claimed before the work and completed after it.

Item: keys.idempotency_key(account, scope, key) with `state` (IN_PROGRESS | COMPLETE), `fingerprint` (hash of
the request), `claim_id` (who holds the claim), `claimed_at` and `expires_at` (epoch seconds; `expires_at` is
the table's TTL attribute, and is also checked here since TTL deletion is lazy), and once complete the
response: `status`, `headers`, `body` (text). An answer longer than PART_BYTES (a delivery in full with its note
and claims, decisions §18, may pass an item's 400 KB) keeps its first PART_BYTES in `body` and the rest in `parts`
more items (keys.idempotency_part_key, with the record's `expires_at`), written in the same transaction.
"""

import secrets
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.idempotency import REPLAY_WINDOW
from . import batch, keys, operations, table
from .operations import Operation
from .outcomes import Contended, LostClaim, Refusal, Stale

IN_PROGRESS, COMPLETE = "IN_PROGRESS", "COMPLETE"
TTL_SECONDS = int(REPLAY_WINDOW.total_seconds())
STALE_SECONDS = 60  # a claim older than this belongs to a request that died; it may be taken over
PART_BYTES = 300_000  # of an answer's UTF-8 text, per item: with the record's other attributes well under 400 KB
_NAMES = {"#state": "state"}


@dataclass(frozen=True)
class Record:
    state: str
    fingerprint: str
    status: int | None = None
    headers: dict | None = None
    body: str | None = None


@dataclass(frozen=True)
class ClaimedKey:
    account: str
    scope: str
    key: str
    claim_id: str
    expires_at: int | None = None


def _record(item: dict, account: str, scope: str, key: str) -> Record:
    status = item.get("status")
    status = int(status) if status is not None else None
    return Record(item["state"], item["fingerprint"], status, item.get("headers"), _body(item, account, scope, key))


def _body(item: dict, account: str, scope: str, key: str) -> str | None:
    """The answer's text: the record's `body`, and its parts after it when it has any (read consistently: they were
    written in the transaction that completed the record)."""
    parts = int(item.get("parts") or 0)
    if not parts:
        return item.get("body")
    wanted = [keys.idempotency_part_key(account, scope, key, n) for n in range(1, parts + 1)]
    found = batch.get_items(wanted, consistent=True)
    return item["body"] + "".join(found[(part["PK"], part["SK"])]["text"] for part in wanted)


def split(text: str, size: int = PART_BYTES) -> list[str]:
    """The text in pieces of at most `size` UTF-8 bytes, never inside a character."""
    encoded, pieces, start = text.encode("utf-8"), [], 0
    while start < len(encoded) or not pieces:
        end = min(start + size, len(encoded))
        while end < len(encoded) and encoded[end] & 0xC0 == 0x80:  # a continuation byte: cut before its character
            end -= 1
        pieces.append(encoded[start:end].decode("utf-8"))
        start = end
    return pieces


def claim(account: str, scope: str, key: str, fingerprint: str, now: int) -> ClaimedKey | Record | Contended:
    """Claim the key for this request (a ClaimedKey), or the record that already holds it. Contended: holders
    let it go between our put and our read three times."""
    claim_id = secrets.token_hex(8)
    item = {
        **keys.idempotency_key(account, scope, key),
        "state": IN_PROGRESS,
        "fingerprint": fingerprint,
        "claim_id": claim_id,
        "claimed_at": now,
        "expires_at": now + TTL_SECONDS,
    }
    for _ in range(3):  # the holder may release between our put and our read
        try:
            table.client().put_item(
                TableName=table.name(),
                Item=table.to_item(item),
                ConditionExpression=(
                    "attribute_not_exists(PK) OR expires_at < :now"
                    " OR (#state = :in_progress AND claimed_at < :stale AND fingerprint = :fingerprint)"
                ),
                ExpressionAttributeNames=_NAMES,
                ExpressionAttributeValues=table.values(
                    now=now, in_progress=IN_PROGRESS, stale=now - STALE_SECONDS, fingerprint=fingerprint
                ),
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
            return ClaimedKey(account, scope, key, claim_id, now + TTL_SECONDS)
        except ClientError as error:
            if not table.is_conditional_failure(error):
                raise
            raw = error.response.get("Item")
            old = table.from_item(raw) if raw else _read(account, scope, key)
            if old:
                return _record(old, account, scope, key)
    return Contended()


def _read(account: str, scope: str, key: str) -> dict | None:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.idempotency_key(account, scope, key)), ConsistentRead=True
    )
    return table.from_item(response["Item"]) if "Item" in response else None


@dataclass(frozen=True)
class Completion:
    """The answer to record for a claimed key, inside the transaction of the work it answers (store/deliveries.py
    turns it into its transaction's last item)."""

    claim: ClaimedKey
    status: int
    headers: dict
    body: str


def answer_items(completion: Completion) -> list[dict]:
    """The transaction items that record the response, if the claim is still ours: the record's update first, then
    the parts of an answer longer than PART_BYTES."""
    claim, status, headers = completion.claim, completion.status, completion.headers
    first, *rest = split(completion.body)
    values = {"complete": COMPLETE, "status": status, "headers": headers, "body": first, "claim_id": claim.claim_id}
    expression = "SET #state = :complete, #status = :status, headers = :headers, body = :body"
    if rest:
        expression, values = expression + ", parts = :parts", {**values, "parts": len(rest)}
    else:
        expression += " REMOVE parts"
    update = {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.idempotency_key(claim.account, claim.scope, claim.key)),
            "UpdateExpression": expression,
            "ConditionExpression": "claim_id = :claim_id",
            "ExpressionAttributeNames": {**_NAMES, "#status": "status"},
            "ExpressionAttributeValues": table.values(**values),
        }
    }
    parts = [
        {
            "Put": {
                "TableName": table.name(),
                "Item": table.to_item(
                    {
                        **keys.idempotency_part_key(claim.account, claim.scope, claim.key, n),
                        "text": text,
                        "expires_at": claim.expires_at,
                    }
                ),
            }
        }
        for n, text in enumerate(rest, start=1)
    ]
    return [update, *parts]


def complete(claim: ClaimedKey, status: int, headers: dict, body: str) -> None | Refusal:
    """Record the answer after its work: LostClaim when another request took over a stale claim (its answer
    stands), Contended when a write held the record (the claim stays, to be taken over when stale)."""
    record, *parts = answer_items(Completion(claim, status, headers, body))
    return operations.commit([record, *parts], [Operation(record, LostClaim()), *map(Operation, parts)])


def release(claim: ClaimedKey) -> None:
    """Give the key back (the work failed), unless the claim was completed or taken over."""
    delete = {
        "TableName": table.name(),
        "Key": table.to_item(keys.idempotency_key(claim.account, claim.scope, claim.key)),
        "ConditionExpression": "claim_id = :claim_id AND #state = :in_progress",
        "ExpressionAttributeNames": _NAMES,
        "ExpressionAttributeValues": table.values(claim_id=claim.claim_id, in_progress=IN_PROGRESS),
    }
    operations.write(Operation({"Delete": delete}, Stale()))  # Stale: completed or taken over, it stays
