"""An account's webhook settings: key webhooks_key(account).

Attributes: `data` (the configuration as validated, password included: it must be sent) and `secret_salt`,
random bytes drawn on the first PUT and kept for good. The signing secret itself is never stored: it is
derived from SIGNING_SECRET and the salt (decisions §1), so a copy of the table alone cannot forge events.
`version` counts the PUTs and DELETEs (absent: 0): an attempt reads it with the receiver it sends to, and what
the attempt writes back is conditional on it (unchanged_check), so attempts under replaced settings decide nothing.
"""

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from .. import config
from . import batch, keys, table
from .operations import Operation
from .outcomes import Changed, Gone, Stale

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


def _from_item(account: str, stored: dict) -> Webhook | None:
    if "data" not in stored:
        return None
    return Webhook(table.plain(stored["data"]), signing_secret(account, stored["secret_salt"]))


def get(account: str) -> Webhook | None:
    response = table.client().get_item(TableName=table.name(), Key=_key(account))
    return _from_item(account, table.from_item(response["Item"])) if "Item" in response else None


@dataclass(frozen=True)
class Receiver:
    """The settings an attempt is made under: the webhook (None: none configured) and their version."""

    webhook: Webhook | None
    version: int


def receiver(account: str) -> Receiver:
    """The settings as they are now (a consistent read: a send that starts after a PUT was answered uses it)."""
    response = table.client().get_item(TableName=table.name(), Key=_key(account), ConsistentRead=True)
    stored = table.from_item(response.get("Item") or {})
    return Receiver(_from_item(account, stored), int(stored.get("version", 0)))


def unchanged_check(account: str, version: int) -> Operation:
    """The settings are still at `version` (a write of what an attempt under them decided); Changed otherwise."""
    check = {"TableName": table.name(), "Key": _key(account)}
    if version:
        check.update(ConditionExpression="version = :version", ExpressionAttributeValues=table.values(version=version))
    else:  # never put, or put before versions were kept
        check["ConditionExpression"] = "attribute_not_exists(version)"
    return Operation({"ConditionCheck": check}, Changed())


@dataclass(frozen=True)
class Current:
    """The stored configuration as a write starts from it."""

    settings: dict | None  # None: none configured
    salt: str | None  # None: never configured (the first PUT draws it)

    def shows(self, settings: dict) -> bool:
        """A reader sees these settings already (only the selection would change: no feed entry)."""
        return self.settings is not None and self.settings == table.plain(settings)


def read_for_write(account: str) -> Current:
    key = keys.webhooks_key(account)
    current = batch.pick(batch.get_items([key], consistent=True), key) or {}
    settings = table.plain(current["data"]) if "data" in current else None
    return Current(settings, current.get("secret_salt"))


def webhook(account: str, settings: dict, salt: str) -> Webhook:
    return Webhook(table.plain(settings), signing_secret(account, salt))


def putting(account: str, settings: dict, selected: list[str] | None, current: Current) -> tuple[Operation, str]:
    """Replace the configuration (the signing secret stays what it was: its salt), and the salt it is signed with,
    and move the version on (even for the same configuration: attempts made before it decide nothing after it).
    `selected` is kept in `events` beside it, where the sequencer reads which events entries make
    (store/feed_sequencer.py); a DELETE of the configuration keeps it. Stale: changed since `current` was read."""
    update = {
        "TableName": table.name(),
        "Key": _key(account),
        "UpdateExpression": "SET #data = :data, secret_salt = :salt, #events = :events ADD version :one",
        "ExpressionAttributeNames": {"#data": "data", "#events": "events"},
    }
    salt = current.salt
    if salt is None:  # the first PUT draws the salt (a new signing secret)
        salt = secrets.token_hex(SALT_BYTES)
        update["ConditionExpression"] = "attribute_not_exists(secret_salt)"
    else:
        update["ConditionExpression"] = "secret_salt = :salt"
    update["ExpressionAttributeValues"] = table.values(data=settings, salt=salt, events=selected, one=1)
    return Operation({"Update": update}, Stale()), salt


def deleting(account: str) -> Operation:
    """Stop sending: remove the configuration but keep the salt, so a later PUT brings back the same secret.
    Gone when none is configured."""
    update = {
        "TableName": table.name(),
        "Key": _key(account),
        "UpdateExpression": "REMOVE #data ADD version :one",
        "ConditionExpression": "attribute_exists(#data)",
        "ExpressionAttributeNames": {"#data": "data"},
        "ExpressionAttributeValues": table.values(one=1),
    }
    return Operation({"Update": update}, Gone())
