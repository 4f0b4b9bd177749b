"""Idempotency records (decisions §11): one item per key, claimed before the work and completed after it.

Item: keys.idempotency_key(account, scope, key) with `state` (IN_PROGRESS | COMPLETE), `fingerprint` (hash of
the request), `claim_id` (who holds the claim), `claimed_at` and `expires_at` (epoch seconds; `expires_at` is
the table's TTL attribute, and is also checked here since TTL deletion is lazy), and once complete the
response: `status`, `headers`, `body` (text).
"""

import secrets
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.idempotency import REPLAY_WINDOW
from . import keys, table
from .outcomes import Contended, LostClaim

IN_PROGRESS, COMPLETE = "IN_PROGRESS", "COMPLETE"
TTL_SECONDS = int(REPLAY_WINDOW.total_seconds())
STALE_SECONDS = 60  # a claim older than this belongs to a request that died; it may be taken over
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


def _record(item: dict) -> Record:
    status = item.get("status")
    status = int(status) if status is not None else None
    return Record(item["state"], item["fingerprint"], status, item.get("headers"), item.get("body"))


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
            return ClaimedKey(account, scope, key, claim_id)
        except ClientError as error:
            if not table.is_conditional_failure(error):
                raise
            raw = error.response.get("Item")
            old = table.from_item(raw) if raw else _read(account, scope, key)
            if old:
                return _record(old)
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


def complete_operation(completion: Completion) -> dict:
    """A transaction item that records the response, if the claim is still ours."""
    claim, status, headers, body = completion.claim, completion.status, completion.headers, completion.body
    return {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.idempotency_key(claim.account, claim.scope, claim.key)),
            "UpdateExpression": "SET #state = :complete, #status = :status, headers = :headers, body = :body",
            "ConditionExpression": "claim_id = :claim_id",
            "ExpressionAttributeNames": {**_NAMES, "#status": "status"},
            "ExpressionAttributeValues": table.values(
                complete=COMPLETE, status=status, headers=headers, body=body, claim_id=claim.claim_id
            ),
        }
    }


def complete(claim: ClaimedKey, status: int, headers: dict, body: str) -> None | LostClaim:
    try:
        table.client().update_item(**complete_operation(Completion(claim, status, headers, body))["Update"])
    except ClientError as error:
        if table.is_conditional_failure(error):
            return LostClaim()  # another request took over a stale claim; its answer stands
        raise
    return None


def release(claim: ClaimedKey) -> None:
    """Give the key back (the work failed), unless the claim was completed or taken over."""
    try:
        table.client().delete_item(
            TableName=table.name(),
            Key=table.to_item(keys.idempotency_key(claim.account, claim.scope, claim.key)),
            ConditionExpression="claim_id = :claim_id AND #state = :in_progress",
            ExpressionAttributeNames=_NAMES,
            ExpressionAttributeValues=table.values(claim_id=claim.claim_id, in_progress=IN_PROGRESS),
        )
    except ClientError as error:
        if not table.is_conditional_failure(error):
            raise
