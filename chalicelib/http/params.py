"""Query parameters, parsed at the edge: a wrong value is a 400 naming the parameter, as for body fields."""
import re
from typing import Mapping

from ..domain.errors import FieldError, ValidationFailed

DEFAULT_LIMIT, MAX_LIMIT = 50, 100


def whole_number(text: str, low: int, high: int) -> int | None:
    """A query value as a whole number in [low, high], or None. ASCII digits only: "²".isdigit() is True."""
    if not re.fullmatch(r"[0-9]{1,9}", text):
        return None
    number = int(text)
    return number if low <= number <= high else None


def page(query: Mapping[str, str]) -> tuple[int, str | None]:
    """limit (1-100, default 50) and cursor (decisions §4); every wrong one named at once."""
    errors = []
    raw_limit = query.get("limit")
    limit = DEFAULT_LIMIT
    if raw_limit is not None:
        limit = whole_number(raw_limit, 1, MAX_LIMIT)
        if limit is None:
            errors.append(FieldError("limit", f"must be a whole number from 1 to {MAX_LIMIT}"))
    cursor = query.get("cursor")
    if cursor is not None and not cursor:
        errors.append(FieldError("cursor", "must not be empty"))
    if errors:
        raise ValidationFailed(errors)
    return limit, cursor
