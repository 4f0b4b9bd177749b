"""Query parameters, parsed at the edge: a wrong value is a 400 naming the parameter, as for body fields."""

import re
from typing import Mapping

from ..domain.errors import FieldError, ValidationFailed
from ..domain.identifiers import is_identifier
from ..domain.limits import CHARSETS, DEFAULT_DAYS, MAX_DAYS, PAGE_ITEMS
from ..domain.order_file import ENCODINGS as FILE_ENCODINGS

DEFAULT_LIMIT, MAX_LIMIT = 50, PAGE_ITEMS


def whole_number(text: str, low: int, high: int) -> int | None:
    """A query value as a whole number in [low, high], or None. ASCII digits only: "²".isdigit() is True."""
    if not re.fullmatch(r"[0-9]{1,9}", text):
        return None
    number = int(text)
    return number if low <= number <= high else None


def page(query: Mapping[str, str], default: int = DEFAULT_LIMIT, most: int = MAX_LIMIT) -> tuple[int, str | None]:
    """limit (1 to `most`, default `default`: MAX_LIMIT and DEFAULT_LIMIT but where a list says otherwise) and
    cursor (decisions §4); every wrong one named at once."""
    errors = []
    raw_limit = query.get("limit")
    limit = default
    if raw_limit is not None:
        limit = whole_number(raw_limit, 1, most)
        if limit is None:
            errors.append(FieldError("limit", f"must be a whole number from 1 to {most}"))
    cursor = query.get("cursor")
    if cursor is not None and not cursor:
        errors.append(FieldError("cursor", "must not be empty"))
    if errors:
        raise ValidationFailed(errors)
    return limit, cursor


def one_of(query: Mapping[str, str], name: str, allowed) -> str | None:
    """An optional parameter that must be one of `allowed` (exact spelling; strings or a StrEnum)."""
    names = tuple(str(option) for option in allowed)
    value = query.get(name)
    if value is not None and value not in names:
        raise ValidationFailed([FieldError(name, f"must be one of {', '.join(names)}")])
    return value


def boolean(query: Mapping[str, str], name: str) -> bool:
    """true or false (any case); absent is false."""
    value = query.get(name)
    if value is None or value.lower() == "false":
        return False
    if value.lower() == "true":
        return True
    raise ValidationFailed([FieldError(name, "must be true or false")])


def encoding(query: Mapping[str, str]) -> str:
    """The order file's encoding (any case, default utf-8), as its canonical name: utf-8 or latin1."""
    name = CHARSETS.get((query.get("encoding") or "utf-8").lower())
    if name is None:
        raise ValidationFailed([FieldError("encoding", f"must be {' or '.join(FILE_ENCODINGS)}")])
    return name


MAX_PRODUCTS = 100


def delivery_dates(query: Mapping[str, str]) -> tuple[list[str], int]:
    """products (a comma-separated list of at most 100 ids, duplicates dropped) and days (1 to MAX_DAYS,
    default 14); every wrong one named at once."""
    ids = list(dict.fromkeys(part.strip() for part in (query.get("products") or "").split(",") if part.strip()))
    errors = [FieldError("products", f"{pid!r} is not a product id") for pid in ids if not is_identifier(pid)]
    if len(ids) > MAX_PRODUCTS:
        errors.append(FieldError("products", f"must name at most {MAX_PRODUCTS} products"))
    raw_days = query.get("days")
    days = DEFAULT_DAYS
    if raw_days is not None:
        if re.fullmatch(r"[0-9]{1,3}", raw_days) and 1 <= int(raw_days) <= MAX_DAYS:
            days = int(raw_days)
        else:
            errors.append(FieldError("days", f"must be a whole number from 1 to {MAX_DAYS}"))
    if errors:
        raise ValidationFailed(errors)
    return ids, days
