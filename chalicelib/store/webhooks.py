"""An account's webhook settings: key webhooks_key(account).

Attributes: `data` (the configuration as validated, password included: it must be sent) and `secret_salt`,
random bytes drawn on the first PUT and kept for good. The signing secret itself is never stored: it is
derived from SIGNING_SECRET and the salt (decisions §1), so a copy of the table alone cannot forge events.
"""
import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from botocore.exceptions import ClientError

from .. import config
from . import keys, table

SALT_BYTES = 16


@dataclass(frozen=True)
class Webhook:
    settings: dict
    signing_secret: str


def signing_secret(account: str, salt: str) -> str:
    """whsec_ + base64 of 32 bytes: the form Standard Webhooks libraries accept."""
    digest = hmac.new(config.derived_secret("webhook"), f"{account}\0{salt}".encode(), hashlib.sha256).digest()
    return "whsec_" + base64.b64encode(digest).decode()


def _key(account: str) -> dict:
    return table.to_item(keys.webhooks_key(account))


def _from_item(account: str, item: dict) -> Webhook | None:
    stored = table.from_item(item)
    if "data" not in stored:
        return None
    return Webhook(table.plain(stored["data"]), signing_secret(account, stored["secret_salt"]))


def get(account: str) -> Webhook | None:
    response = table.client().get_item(TableName=table.name(), Key=_key(account))
    return _from_item(account, response["Item"]) if "Item" in response else None


def put(account: str, settings: dict) -> Webhook:
    """Replace the configuration; the signing secret stays what it was (one UpdateItem)."""
    response = table.client().update_item(
        TableName=table.name(),
        Key=_key(account),
        UpdateExpression="SET #data = :data, secret_salt = if_not_exists(secret_salt, :salt)",
        ExpressionAttributeNames={"#data": "data"},
        ExpressionAttributeValues=table.values(data=settings, salt=secrets.token_hex(SALT_BYTES)),
        ReturnValues="ALL_NEW",
    )
    return _from_item(account, response["Attributes"])


def delete(account: str) -> bool:
    """Stop sending: remove the configuration but keep the salt, so a later PUT brings back the same secret."""
    try:
        table.client().update_item(
            TableName=table.name(),
            Key=_key(account),
            UpdateExpression="REMOVE #data",
            ConditionExpression="attribute_exists(#data)",
            ExpressionAttributeNames={"#data": "data"},
        )
    except ClientError as error:
        if table.is_conditional_failure(error):
            return False
        raise
    return True
