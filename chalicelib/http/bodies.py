"""Request bodies: JSON parsed exactly (numbers as Decimal), every failure a 400 naming `body`."""

import json
import re
from decimal import Decimal
from typing import Any

from ..domain.errors import invalid
from ..domain.limits import IMPORT_UPLOAD_BYTES, MAX_BODY_BYTES

# Routes whose bodies may exceed MAX_BODY_BYTES, with their own limit: the catalogue import takes files of up
# to 5 MiB, with a multipart envelope around it (decisions §12 excepts it from the 1 MiB limit of §3); the route
# checks the file's own size.
BODY_LIMITS = {"/imports/products": IMPORT_UPLOAD_BYTES}
BODY_METHODS = ("POST", "PUT", "PATCH")
JSON_BODY = "application/json"
MERGE_PATCH = "application/merge-patch+json"

# A \uD800-\uDFFF escape may leave a lone surrogate in a string, which cannot be stored or sent as UTF-8.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def limit_for(route: str | None) -> int:
    """The largest body a route takes, in bytes."""
    return BODY_LIMITS.get(route or "", MAX_BODY_BYTES)


def content_types(method: str) -> list[str]:
    """What a route accepts: JSON, and JSON merge patch on PATCH only (RFC 7396)."""
    if method == "PATCH":
        return [JSON_BODY, MERGE_PATCH]
    return [JSON_BODY] if method in BODY_METHODS else ["*/*"]


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _check_encodable(body: Any) -> None:
    """Raise UnicodeEncodeError if any key or string holds a lone surrogate (iterative: bodies may be deep)."""
    pending = [body]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            value.encode("utf-8")
        elif isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def parse(raw: bytes | str | None) -> Any:
    raw = raw or b""
    if isinstance(raw, str):
        raw = raw.encode()
    if not raw.strip():
        raise invalid("body", "a JSON body is required")
    try:
        body = json.loads(raw.decode("utf-8"), parse_float=Decimal, parse_constant=_reject_constant)
        if _SURROGATE_ESCAPE.search(raw):
            _check_encodable(body)
        return body
    except RecursionError:
        raise invalid("body", "is nested too deeply") from None
    except ValueError as error:  # includes UnicodeDecodeError and UnicodeEncodeError
        raise invalid("body", f"is not valid JSON: {error}") from None
