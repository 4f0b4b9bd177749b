"""An account's webhook settings: key webhooks_key(account).

Attributes: `data` (the configuration as validated, password included: it must be sent) and `secret_salt`,
random bytes drawn on the first PUT and kept for good. The signing secret itself is never stored: it is
derived from SIGNING_SECRET and the salt (decisions §1), so a copy of the table alone cannot forge events.
"""

import base64
import datetime as dt
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from botocore.exceptions import ClientError

from .. import config
from ..domain.feed import SETTINGS_WEBHOOKS, Change, ChangeType
from . import batch, feed, keys, table
from .outcomes import Contended, Gone

CHANGE = Change(ChangeType.SETTINGS_UPDATED, SETTINGS_WEBHOOKS)
WRITE_ATTEMPTS = 5

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


def put(account: str, settings: dict, now: dt.datetime, selected: list[str] | None = None) -> Webhook | Contended:
    """Replace the configuration, with its feed entry; the signing secret stays what it was. The same
    configuration again writes nothing. `selected`: the event types it selects (None: the default), kept in
    `events` beside it, where the sequencer reads which events entries make (store/feed_numbering.py); a DELETE
    of the configuration keeps it. Contended: others kept changing it between our read and our write, WRITE_ATTEMPTS
    times."""
    key = keys.webhooks_key(account)
    for _ in range(WRITE_ATTEMPTS):
        found = batch.get_items([key], consistent=True)
        current = batch.pick(found, key) or {}
        salt = current.get("secret_salt")
        unchanged = "data" in current and table.plain(current["data"]) == table.plain(settings)
        if unchanged and table.plain(current.get("events")) == selected:
            return Webhook(table.plain(current["data"]), signing_secret(account, salt))
        update = {
            "TableName": table.name(),
            "Key": _key(account),
            "UpdateExpression": "SET #data = :data, secret_salt = :salt, #events = :events",
            "ExpressionAttributeNames": {"#data": "data", "#events": "events"},
        }
        if salt is None:  # the first PUT draws the salt (a new signing secret)
            salt = secrets.token_hex(SALT_BYTES)
            update["ConditionExpression"] = "attribute_not_exists(secret_salt)"
        else:
            update["ConditionExpression"] = "secret_salt = :salt"
        update["ExpressionAttributeValues"] = table.values(data=settings, salt=salt, events=selected)
        try:
            feed.commit(account, [{"Update": update}], [] if unchanged else [CHANGE], now)
            return Webhook(table.plain(settings), signing_secret(account, salt))
        except ClientError as error:
            if table.CONDITION_FAILED not in table.cancellation_codes(error):
                raise
    return Contended()


def delete(account: str, now: dt.datetime) -> None | Gone:
    """Stop sending: remove the configuration but keep the salt, so a later PUT brings back the same secret.
    Gone when none is configured."""
    update = {
        "TableName": table.name(),
        "Key": _key(account),
        "UpdateExpression": "REMOVE #data",
        "ConditionExpression": "attribute_exists(#data)",
        "ExpressionAttributeNames": {"#data": "data"},
    }
    try:
        feed.commit(account, [{"Update": update}], [CHANGE], now)
    except ClientError as error:
        if table.CONDITION_FAILED in table.cancellation_codes(error):
            return Gone()
        raise
    return None
