"""The id rule of products, categories and customers. Pure, so read paths can check ids without pydantic."""
import re

ID_PATTERN = r"^[a-zA-Z0-9_-]+$"
ID_MAX_LENGTH = 128
ID_RULE = "must be 1-128 characters of [a-zA-Z0-9_-]"


def is_identifier(value: str | None) -> bool:
    """True for an id that may exist, e.g. one that arrives in a URL."""
    return bool(value) and len(value) <= ID_MAX_LENGTH and re.fullmatch(ID_PATTERN, value) is not None
