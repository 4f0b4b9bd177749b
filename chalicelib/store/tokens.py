"""API tokens, stored only as a SHA-256 hash; a reference item per token id allows revocation by id."""
import hashlib
import secrets

from botocore.exceptions import ClientError

from ..domain.errors import NotFound
from . import keys, table

TOKEN_PREFIX = "sos_"


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_secret() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(24)  # 192 random bits


def create(account: str, role: str, customer_id: str | None = None, secret: str | None = None) -> tuple[str, str]:
    """Store a token and return (token id, secret). The secret is never stored."""
    secret = secret or new_secret()
    token_hash = hash_token(secret)
    token_id = token_hash[:16]
    principal = {"account": account, "role": role, "token_id": token_id}
    if customer_id is not None:
        principal["customer_id"] = customer_id
    table.client().transact_write_items(
        TransactItems=[
            {"Put": {"TableName": table.name(), "Item": table.to_item({**keys.token_key(token_hash), **principal})}},
            {
                "Put": {
                    "TableName": table.name(),
                    "Item": table.to_item({**keys.token_ref_key(account, token_id), **principal, "hash": token_hash}),
                }
            },
        ]
    )
    return token_id, secret


def find(secret: str) -> dict | None:
    """The principal a token stands for: account, role, token_id and customer_id for customer tokens."""
    response = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.token_key(hash_token(secret))))
    if "Item" not in response:
        return None
    item = table.from_item(response["Item"])
    return {k: item[k] for k in ("account", "role", "token_id", "customer_id") if k in item}


def revoke(account: str, token_id: str, customer_id: str | None = None) -> None:
    """Delete a token. With customer_id, only a token of that customer."""
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.token_ref_key(account, token_id)), ConsistentRead=True
    )
    ref = table.from_item(response["Item"]) if "Item" in response else None
    if ref is None or (customer_id is not None and ref.get("customer_id") != customer_id):
        raise NotFound(f"token {token_id} does not exist")
    try:
        table.client().transact_write_items(
            TransactItems=[
                {"Delete": {"TableName": table.name(), "Key": table.to_item(keys.token_key(ref["hash"]))}},
                {
                    "Delete": {
                        "TableName": table.name(),
                        "Key": table.to_item(keys.token_ref_key(account, token_id)),
                        "ConditionExpression": "attribute_exists(PK)",
                    }
                },
            ]
        )
    except ClientError as error:
        if table.cancellation_codes(error):
            raise NotFound(f"token {token_id} does not exist") from None
        raise
