"""Opaque paging cursors: the DynamoDB key to resume from, signed and bound to the account and the query."""

import base64
import enum
import hashlib
import hmac
import json

from .. import config

_SIGNATURE_BYTES = 16


class BadCursor(Exception):
    """A cursor we cannot resume from; `reason` says why."""

    class Reason(enum.Enum):
        FORGED = "forged"  # not a cursor we issued: garbled, or its signature does not match
        FOREIGN = "foreign"  # ours, but for another account, list or query

    def __init__(self, reason: "BadCursor.Reason"):
        super().__init__(reason.value)
        self.reason = reason


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(payload: bytes) -> bytes:
    return hmac.new(config.derived_secret("cursor"), payload, hashlib.sha256).digest()[:_SIGNATURE_BYTES]


def encode(account: str, query: str, last_key: dict) -> str:
    payload = json.dumps({"a": account, "q": query, "k": last_key}, separators=(",", ":"), sort_keys=True).encode()
    return f"{_b64(payload)}.{_b64(_sign(payload))}"


def decode(account: str, query: str, cursor: str) -> dict:
    """The key to resume from; BadCursor for anything not issued by us for this very account and query."""
    try:
        body, signature = cursor.split(".")
        payload = _unb64(body)
        if not hmac.compare_digest(_unb64(signature), _sign(payload)):
            raise ValueError("bad signature")
        data = json.loads(payload)
    except (ValueError, TypeError):
        raise BadCursor(BadCursor.Reason.FORGED) from None
    if data.get("a") != account or data.get("q") != query or not isinstance(data.get("k"), dict):
        raise BadCursor(BadCursor.Reason.FOREIGN)
    return data["k"]
