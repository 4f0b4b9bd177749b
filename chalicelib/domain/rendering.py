"""The JSON text of stored documents: what the API answers, idempotency replays repeat and size limits measure."""

import json
from decimal import Decimal
from typing import Any


def _number_text(number: Decimal) -> str:
    if number == number.to_integral_value():
        return str(int(number))
    return format(number.normalize(), "f")


def json_text(value: Any) -> str:
    """Compact JSON with stored numbers exactly as written: Decimal 1.5 -> 1.5, 2 -> 2 (never 2.0), and no
    digits lost to float (123456789012.123456 stays as it is)."""
    if isinstance(value, Decimal):
        return _number_text(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json_text(str(k))}:{json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    if isinstance(value, set):
        return json_text(sorted(value))
    return json.dumps(value, ensure_ascii=False)


def size_in_bytes(value: Any) -> int:
    """Bytes of the UTF-8 JSON text the API would answer for `value`: what the size limits count."""
    return len(json_text(value).encode("utf-8"))
