"""Value types shared by every resource: ids, numbers, dates, times of day, delivery rules.

Numbers arrive as int or Decimal (JSON is parsed with parse_float=Decimal) and are kept that way, so what a
client writes is what it reads back and no float ever reaches DynamoDB.
"""

import datetime as dt
import re
from decimal import Decimal
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    WithJsonSchema,
)

from . import limits
from .errors import FieldError, ValidationFailed
from .identifiers import ID_MAX_LENGTH, ID_PATTERN

Identifier = Annotated[str, Strict(), Field(min_length=1, max_length=ID_MAX_LENGTH, pattern=ID_PATTERN)]


Text = Annotated[str, Strict(), Field(max_length=limits.MESSAGE_LENGTH)]
ShortText = Annotated[str, Strict(), Field(min_length=1, max_length=limits.SHORT_TEXT_CHARS)]
Cents = Annotated[int, Strict(), Field(ge=0, le=10**12)]


# Tabs, and every line break Unicode knows (what str.splitlines breaks on: U+2028, U+0085, ...), not only \n and \r.
_BREAKS_AND_TABS = frozenset("\t\n\v\f\r\x1c\x1d\x1e\x85\u2028\u2029")


def one_line_name(value: str, shortest: int, longest: int, message: str | None = None) -> str:
    """A name as decisions §5 and §15 take it: trimmed, then `shortest` to `longest` characters with no newline or
    tab; ValueError saying which rule it breaks (`message`: one text for both)."""
    value = value.strip()
    if not _BREAKS_AND_TABS.isdisjoint(value):
        raise ValueError(message or "must not contain newlines or tabs")
    if not shortest <= len(value) <= longest:
        raise ValueError(message or f"must be {shortest} to {longest} characters after trimming")
    return value


def absolute_http_url(value: str) -> str:
    """An absolute http or https URL without whitespace (a product image; a webhook adds its own rules)."""
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or any(c.isspace() for c in value):
        raise ValueError("must be an absolute http or https URL")
    return value


# RFC 3986's characters (unreserved, reserved and %): a link is ASCII, so its JSON takes one byte a character.
_URL_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


def _https_url(value: str) -> str:
    if not _URL_CHARACTERS.fullmatch(value) or urlsplit(value).scheme != "https" or not urlsplit(value).hostname:
        raise ValueError("must be an absolute https URL (RFC 3986 characters, non-ASCII percent-encoded)")
    return value


# A link the service keeps, never fetches (a delivery note's proof, a claim's evidence: decisions §18).
HttpsUrl = Annotated[str, Strict(), Field(max_length=limits.URL_LENGTH), AfterValidator(_https_url)]

_MAX_NUMBER = Decimal(10) ** 12
_MAX_DECIMALS = 6


def _number(value: Any) -> Decimal:
    # bool is an int in Python; a JSON true is not a number.
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise ValueError("must be a number")
    number = Decimal(value)
    # copy_abs, not abs(): abs() rounds to the context and raises Overflow on 1e999999999.
    if not number.is_finite() or number.copy_abs() > _MAX_NUMBER:
        raise ValueError(f"must be a finite number of at most {_MAX_NUMBER:,.0f}")
    if number.as_tuple().exponent < -_MAX_DECIMALS and number != number.quantize(Decimal(1).scaleb(-_MAX_DECIMALS)):
        raise ValueError(f"must have at most {_MAX_DECIMALS} decimal places")
    return number


def _number_schema(**lower_bound) -> WithJsonSchema:
    """A JSON number: pydantic would document a Decimal as number-or-string, but only numbers are accepted."""
    limit = int(_MAX_NUMBER)
    return WithJsonSchema({"type": "number", **(lower_bound or {"minimum": -limit}), "maximum": limit})


# WithJsonSchema comes last so it replaces the generated schema; validation is unchanged.
Number = Annotated[Decimal, BeforeValidator(_number), _number_schema()]
PositiveNumber = Annotated[Decimal, BeforeValidator(_number), Field(gt=0), _number_schema(exclusiveMinimum=0)]
NonNegativeNumber = Annotated[Decimal, BeforeValidator(_number), Field(ge=0), _number_schema(minimum=0)]


def is_whole(number: Decimal) -> bool:
    return number == number.to_integral_value()


# Dates are bounded so date arithmetic (lead days back, a year of delivery dates ahead) never leaves Python's
# date range, whatever the lead days.
FIRST_DATE, LAST_DATE = dt.date(1900, 1, 1), dt.date(2999, 12, 31)


def _iso_date(value: str) -> str:
    # ASCII digits only: \d would also take "٢٠٢٦".
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        raise ValueError("must be a date YYYY-MM-DD")
    try:
        date = dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError("is not a calendar date") from None
    if not FIRST_DATE <= date <= LAST_DATE:
        raise ValueError(f"must be between {FIRST_DATE.isoformat()} and {LAST_DATE.isoformat()}")
    return value


def _time_of_day(value: str) -> str:
    if not re.fullmatch(r"([01][0-9]|2[0-3]):[0-5][0-9]", value):
        raise ValueError("must be a time HH:mm between 00:00 and 23:59")
    return value


IsoDate = Annotated[
    str,
    Strict(),
    AfterValidator(_iso_date),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date",
            # The bounded range as a pattern, which every JSON Schema tool understands: years 1900 to 2999.
            "pattern": r"^(19[0-9]{2}|2[0-9]{3})-[0-9]{2}-[0-9]{2}$",
        }
    ),
]
TimeOfDay = Annotated[
    str,
    Strict(),
    AfterValidator(_time_of_day),
    WithJsonSchema({"type": "string", "pattern": r"^([01][0-9]|2[0-3]):[0-5][0-9]$"}),
]

PACKAGING_CODES = frozenset("AE BA BE BG BH BI BK BM BO BX CA CI CN CR CS CT CU JR NA PA PK PU RO SA TU WA ZZ".split())
PALLET = "PX"


def _packaging_code(value: str) -> str:
    if value not in PACKAGING_CODES:
        raise ValueError("is not a known packaging type code (UN/ECE Rec. 21; PX only for bundles)")
    return value


def _bundle_code(value: str) -> str:
    return value if value == PALLET else _packaging_code(value)


PackagingCode = Annotated[
    str, Strict(), AfterValidator(_packaging_code), WithJsonSchema({"type": "string", "enum": sorted(PACKAGING_CODES)})
]
BundleCode = Annotated[
    str,
    Strict(),
    AfterValidator(_bundle_code),
    WithJsonSchema({"type": "string", "enum": sorted(PACKAGING_CODES | {PALLET})}),
]


class Shape(BaseModel):
    """Base of every request shape: unknown fields are refused so typos do not pass silently."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class DeliveryRule(Shape):
    lead_days: Annotated[int, Strict(), Field(ge=0, le=365)]
    cutoff: TimeOfDay | None = None


def _weekday_key(value: str) -> str:
    if value not in {"0", "1", "2", "3", "4", "5", "6"}:
        raise ValueError("is not a weekday number: keys run from 0 (Sunday) to 6 (Saturday)")
    return value


# Keys are checked one by one, so a wrong key is reported together with wrong rules of other keys.
WeekdayKey = Annotated[str, AfterValidator(_weekday_key), WithJsonSchema({"type": "string", "pattern": "^[0-6]$"})]
DeliveryDays = dict[WeekdayKey, DeliveryRule]
# Bounded so a page of 100 customers, each with both at their limit, stays under 5 MiB (limits.py).
DeliveryDateOverrides = Annotated[dict[IsoDate, DeliveryRule], Field(max_length=limits.DATED_RULES)]
DatesWithNoDelivery = Annotated[list[IsoDate], Field(max_length=limits.DATED_RULES)]


def path_of(location: tuple) -> str:
    """('bundles', 1, 'size') -> 'bundles[1].size'."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "body"


def _message(error: dict) -> str:
    if error["type"] == "value_error":
        return str(error["ctx"]["error"]) if "ctx" in error else error["msg"].removeprefix("Value error, ")
    return error["msg"]


def field_errors(error: ValidationError, prefix: tuple = ()) -> list[FieldError]:
    result = []
    for item in error.errors(include_url=False):
        # Drop pydantic's internal step names (function-after[...]) from the path.
        location = tuple(p for p in item["loc"] if not (isinstance(p, str) and "[" in p and p.endswith("]")))
        result.append(FieldError(path_of(prefix + location), _message(item)))
    return result


def parse(model: type[BaseModel], data: Any, prefix: tuple = ()):
    """Validate data against a shape, raising ValidationFailed with every wrong field."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ValidationFailed(field_errors(error, prefix)) from None


def dump(model: BaseModel) -> dict:
    """The stored form: only what was given, numbers kept as Decimal/int."""
    return model.model_dump(exclude_none=True, by_alias=True)


def well_formed_items(data: Any, model: type[BaseModel], limit: int) -> list[tuple[int, Any]]:
    """The `items` of a refused body that are well formed on their own as `model` (the first `limit`), with their
    positions: what they get wrong beyond their shape is named beside the body's own problems (decisions §3)."""
    raw = data.get("items") if isinstance(data, dict) else None
    found = []
    for i, item in enumerate(raw[:limit] if isinstance(raw, list) else ()):
        try:
            found.append((i, parse(model, item)))
        except ValidationFailed:
            continue
    return found
