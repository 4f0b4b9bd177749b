"""The id rules: products, categories and customers; deliveries. Pure, so read paths can check ids without pydantic."""

import re

ID_PATTERN = r"^[a-zA-Z0-9_-]+$"
ID_MAX_LENGTH = 128
ID_RULE = "must be 1-128 characters of [a-zA-Z0-9_-]"


def is_identifier(value: str | None) -> bool:
    """True for an id that may exist, e.g. one that arrives in a URL."""
    return bool(value) and len(value) <= ID_MAX_LENGTH and re.fullmatch(ID_PATTERN, value) is not None


DELIVERY_ID_DIGITS = 12  # ids up to 999,999,999,999 (the store pads them to this width so they sort)


def parse_delivery_id(text: str | None) -> int | None:
    """A delivery id from a URL: a positive integer in ASCII digits, else None (reads as 404).

    str.isdigit() and int() also take "²", "①", "١" or "１", which are no ids (API Gateway decodes paths).
    """
    if not text or len(text) > DELIVERY_ID_DIGITS or not re.fullmatch(r"[1-9][0-9]*", text):
        return None
    return int(text)
