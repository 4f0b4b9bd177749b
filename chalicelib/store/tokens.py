"""API tokens, stored only as a SHA-256 hash; a reference item per token id allows revocation by id."""

from __future__ import annotations

import hashlib
import secrets
from typing import TYPE_CHECKING

from . import keys, table

if TYPE_CHECKING:
    from .outcomes import Gone, Taken


TOKEN_PREFIX = "sos_"


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(24)  # 192 random bits


def create(
    account: str, role: str, customer_id: str | None = None, secret: str | None = None
) -> tuple[str, str] | Taken:
    """Store a token and return (token id, secret). The secret is never stored.

    Registering a given secret again for the same principal changes nothing; a secret that already stands for
    another principal is never moved (Taken, `owner` the account it stands for).
    """
    secret = secret or new_secret()
    token_hash = hash_token(secret)
    token_id = token_hash[:16]
    principal = {"account": account, "role": role, "token_id": token_id}
    if customer_id is not None:
        principal["customer_id"] = customer_id
    same_principal = "attribute_not_exists(PK) OR (account = :account AND #role = :role AND " + (
        "customer_id = :customer_id)" if customer_id is not None else "attribute_not_exists(customer_id))"
    )
    condition_values = {"account": account, "role": role}
    if customer_id is not None:
        condition_values["customer_id"] = customer_id
    by_hash, reference = _token_puts(token_hash, principal, account, token_id, same_principal, condition_values)
    from . import operations  # its outcomes only on a refusal: setting up a cold start loads none (test_cold_path.py)

    def taken() -> Taken:  # asked after the refusal: the account the secret already stands for
        from .outcomes import Taken

        owner = find(secret)
        return Taken(owner["account"] if owner else "")

    declared = [operations.Operation(by_hash, taken), operations.Operation(reference)]
    refused = operations.commit([by_hash, reference], declared)
    if refused is None:
        return token_id, secret
    from . import outcomes

    if isinstance(refused, outcomes.Contended):  # a new token's items, held by another write: not ours to retry
        raise table.WriteFailed("a token's write", {})
    return refused


def _token_puts(
    token_hash: str, principal: dict, account: str, token_id: str, condition: str, values: dict
) -> list[dict]:
    """The token's two items: by the secret's hash (conditional on `condition`), and the account's reference."""
    return [
        {
            "Put": {
                "TableName": table.name(),
                "Item": table.to_item({**keys.token_key(token_hash), **principal}),
                "ConditionExpression": condition,
                "ExpressionAttributeNames": {"#role": "role"},
                "ExpressionAttributeValues": table.values(**values),
            }
        },
        {
            "Put": {
                "TableName": table.name(),
                "Item": table.to_item({**keys.token_ref_key(account, token_id), **principal, "hash": token_hash}),
            }
        },
    ]


def find(secret: str) -> dict | None:
    """The principal a token stands for: account, role, token_id and customer_id for customer tokens."""
    response = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.token_key(hash_token(secret))))
    if "Item" not in response:
        return None
    item = table.from_item(response["Item"])
    return {k: item[k] for k in ("account", "role", "token_id", "customer_id") if k in item}


def revoke(account: str, token_id: str, customer_id: str | None = None) -> None | Gone:
    """Delete a token, or Gone when there is none by that id (with customer_id: of that customer)."""
    from . import outcomes

    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.token_ref_key(account, token_id)), ConsistentRead=True
    )
    ref = table.from_item(response["Item"]) if "Item" in response else None
    if ref is None or (customer_id is not None and ref.get("customer_id") != customer_id):
        return outcomes.Gone()
    from . import operations

    by_hash = {"Delete": {"TableName": table.name(), "Key": table.to_item(keys.token_key(ref["hash"]))}}
    reference = {
        "Delete": {
            "TableName": table.name(),
            "Key": table.to_item(keys.token_ref_key(account, token_id)),
            "ConditionExpression": "attribute_exists(PK)",
        }
    }
    declared = [operations.Operation(by_hash), operations.Operation(reference, outcomes.Gone())]  # revoked meanwhile
    refused = operations.commit([by_hash, reference], declared)
    return outcomes.Gone() if isinstance(refused, outcomes.Contended) else refused  # a revoke racing: it is gone
