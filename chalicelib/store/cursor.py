"""Opaque paging cursors: the DynamoDB key to resume from, signed and bound to the account and the query."""
import base64
import hashlib
import hmac
import json

from .. import config
from ..domain.errors import invalid

_SIGNATURE_BYTES = 16


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
    """The key to resume from; 400 for anything not issued by us for this very account and query."""
    try:
        body, signature = cursor.split(".")
        payload = _unb64(body)
        if not hmac.compare_digest(_unb64(signature), _sign(payload)):
            raise ValueError("bad signature")
        data = json.loads(payload)
    except (ValueError, TypeError):
        raise invalid("cursor", "is not a valid cursor") from None
    if data.get("a") != account or data.get("q") != query or not isinstance(data.get("k"), dict):
        raise invalid("cursor", "belongs to another list or query")
    return data["k"]
