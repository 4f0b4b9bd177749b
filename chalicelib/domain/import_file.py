"""Reading a catalogue file (decisions §12): its charset and delimiter, its header's columns, its records, and
how an error names a cell (RowError, quoted) and puts the product rules' verdict in the file's words (row_errors).
Pure: no storage, no clock. What a row becomes is
domain/catalogue_import.py's.
"""

import csv
import io
import re
from dataclasses import dataclass, field

from .errors import FieldError, ValidationFailed
from .limits import (
    CHARSETS,
    IMPORT_CHARSET_NAMES,
    IMPORT_ERROR_BYTES,
    IMPORT_FILE_BYTES,
    IMPORT_LISTED_ERRORS,
    IMPORT_QUOTED_CHARS,
    IMPORT_ROWS,
)
from .rendering import size_in_bytes

MAX_FILE_BYTES = IMPORT_FILE_BYTES
MAX_ROWS = IMPORT_ROWS
# What a row's read columns may hold together: far below DynamoDB's 400 KB item, whatever the cells are. Columns the
# import ignores do not count: a long note beside a valid product leaves it valid (decisions §12).
MAX_ROW_CHARS = 32_768
MAX_LISTED_ERRORS = IMPORT_LISTED_ERRORS  # errors listed by GET /imports/products/:id; error_count counts all
CHARSET_NAMES = IMPORT_CHARSET_NAMES
BOM = "\ufeff"


# --- columns -------------------------------------------------------------------------------------------------

ITEM_ID, ITEM_NAME, CATEGORY_ID, CATEGORY_NAME = "Item ID", "Item name", "Category ID", "Category name"
ORDER_BY, PRICE, PRICE_PER, MIN_ORDER, STATUS, IMAGE, GTIN = (
    "Order by", "Price", "Price per", "Minimum order count", "Status", "Image", "GTIN",
)  # fmt: skip
VESSEL_SIZE, VESSEL_UNIT, VESSEL_TYPE = "Vessel size", "Vessel unit", "Vessel type"
BUNDLE_SIZE, BUNDLE_TYPE, BUNDLE_GTIN = "Bundle size", "Bundle type", "Bundle GTIN"
LIST_COLUMNS = ("Labels", "Allergens", "Dietary labels")
# Descriptive columns of the barmate v1-v4 templates; each lands in custom_properties under its snake_case name.
DESCRIPTIVE_COLUMNS = (
    "Description", "Manufacturer", "Brand", "Region", "Country", "Vintage", "Ingredients", "Storage advice",
    "Nutritional values", "Alcohol content", "Color", "Grape variety", "Wine-making", "Material", "Producer",
    "Appellation", "Taste", "Food pairing", "Serving temperature", "Closure", "Origin", "Shelf life",
)  # fmt: skip
COLUMNS = (
    CATEGORY_NAME, CATEGORY_ID, ITEM_ID, ITEM_NAME, ORDER_BY, VESSEL_SIZE, VESSEL_UNIT, VESSEL_TYPE, BUNDLE_SIZE,
    BUNDLE_TYPE, BUNDLE_GTIN, PRICE, PRICE_PER, MIN_ORDER, STATUS, IMAGE, GTIN, *LIST_COLUMNS, *DESCRIPTIVE_COLUMNS,
)  # fmt: skip
_BY_KEY = {name.casefold(): name for name in COLUMNS}


def property_name(column: str) -> str:
    """`Storage advice` -> `storage_advice`, `Wine-making` -> `wine_making`."""
    return re.sub(r"[^a-z0-9]+", "_", column.lower()).strip("_")


# Where a product rule's field path came from in the file.
PATH_COLUMNS = {
    "id": ITEM_ID, "name": ITEM_NAME, "category": CATEGORY_ID, "order_by": ORDER_BY, "price": PRICE,
    "price_per": PRICE_PER, "min_order_count": MIN_ORDER, "status": STATUS, "image": IMAGE, "gtin": GTIN,
    "vessel": VESSEL_SIZE, "vessel.size": VESSEL_SIZE, "vessel.unit": VESSEL_UNIT, "vessel.type": VESSEL_TYPE,
    "bundles": BUNDLE_TYPE, "bundles[0]": BUNDLE_TYPE, "bundles[0].type": BUNDLE_TYPE, "bundles[0].size": BUNDLE_SIZE,
    **{f"custom_properties.{property_name(c)}": c for c in (*LIST_COLUMNS, *DESCRIPTIVE_COLUMNS)},
    f"custom_properties.{property_name(BUNDLE_GTIN)}": BUNDLE_GTIN,
}  # fmt: skip


def quoted(cell: str) -> str:
    """A cell as a message quotes it: its first IMPORT_QUOTED_CHARS characters (decisions §12)."""
    if len(cell) <= IMPORT_QUOTED_CHARS:
        return cell
    return cell[:IMPORT_QUOTED_CHARS] + f"… ({len(cell):,} characters)"


@dataclass(frozen=True)
class RowError:
    row: int
    column: str | None
    message: str

    def __post_init__(self):
        # Whatever a message holds, one entry renders within IMPORT_ERROR_BYTES, so 1,000 of them fit the report.
        message = self.message
        while size_in_bytes(self.as_dict() | {"message": message}) > IMPORT_ERROR_BYTES:
            message = message[: len(message) * 3 // 4] + "…"
        object.__setattr__(self, "message", message)

    def as_dict(self) -> dict:
        return {"row": self.row, "column": self.column, "message": self.message}

    def as_json(self) -> list:
        return [self.row, self.column, self.message]

    @classmethod
    def from_json(cls, value: list) -> "RowError":
        return cls(value[0], value[1], value[2])


@dataclass
class Record:
    """One data row: the line it starts on and its cells by canonical column name (empty cells left out)."""

    line: int
    cells: dict[str, str]
    problem: str | None = None  # a whole-row problem found while reading (too long, duplicate id, ...)


@dataclass
class ParsedFile:
    encoding: str
    delimiter: str
    records: list[Record] = field(default_factory=list)


def _file_error(message: str, path: str = "body") -> ValidationFailed:
    return ValidationFailed([FieldError(path, message)], detail=message)


class UnknownCharset(ValueError):
    """The file comes in a charset the import does not read."""


def decode(body: bytes, charset: str | None) -> tuple[str, str]:
    """(text, encoding name); charset None means utf-8. A utf-8 BOM is dropped."""
    encoding = CHARSETS.get((charset or "utf-8").strip().strip('"').lower())
    if encoding is None:
        raise UnknownCharset(charset)
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as error:
        line = body[: error.start].count(b"\n") + 1
        raise _file_error(
            f"the file cannot be decoded as {encoding}: byte {error.start} (line {line}) is not valid; "
            "send Content-Type: text/csv; charset=latin1 if the file is latin1"
        ) from None
    return text.removeprefix(BOM), encoding


def _delimiter(text: str) -> str:
    """`,` or `;`, whichever the header line holds more of outside quotes (`,` when it holds neither)."""
    header, quoted = [], False
    for char in text.lstrip(" \t\r\n"):
        if char == '"':
            quoted = not quoted
        elif char in "\r\n" and not quoted:
            break
        elif not quoted:
            header.append(char)
    return ";" if header.count(";") > header.count(",") else ","


def _header(names: list[str]) -> list[str | None]:
    columns, seen = [], set()
    for name in names:
        column = _BY_KEY.get(name.strip().casefold())
        if column is not None and column in seen:
            raise _file_error(f"the column {column} appears twice in the header")
        seen.add(column)
        columns.append(column)
    if ITEM_ID not in seen:
        raise _file_error("the header line has no Item ID column (header names are matched ignoring case)")
    return columns


def parse(body: bytes, charset: str | None = None) -> ParsedFile:
    """Read the file; ValidationFailed naming the reason when it is not a CSV file we can read.

    UnknownCharset when the charset is not one we read.
    """
    text, encoding = decode(body, charset)
    if not text.strip():
        raise _file_error("the file is empty")
    if "\x00" in text:
        raise _file_error("the file is not CSV text: it contains NUL characters")
    delimiter = _delimiter(text)
    parsed = ParsedFile(encoding, delimiter)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    csv.field_size_limit(MAX_FILE_BYTES)
    columns: list[str | None] | None = None
    seen_ids: dict[str, int] = {}
    consumed = 0  # lines the reader had taken before the current record
    try:
        for cells in reader:
            start, consumed = consumed + 1, reader.line_num
            if not any(cell.strip() for cell in cells):
                continue  # blank lines, and lines of delimiters only
            if columns is None:
                columns = _header(cells)
                continue
            parsed.records.append(_record(start, cells, columns, seen_ids))
            if len(parsed.records) > MAX_ROWS:
                raise _file_error(f"the file has more than {MAX_ROWS} rows")
    except csv.Error as error:
        raise _file_error(f"the file is not CSV: line {consumed + 1}: {error}") from None
    if columns is None:
        raise _file_error("the file has no header line")
    return parsed


def _record(line: int, cells: list[str], columns: list[str | None], seen_ids: dict[str, int]) -> Record:
    if sum(len(cell) for column, cell in zip(columns, cells) if column) > MAX_ROW_CHARS:
        return Record(line, {}, f"the row's known columns hold more than {MAX_ROW_CHARS} characters")
    if len(cells) > len(columns) and any(cell.strip() for cell in cells[len(columns) :]):
        return Record(
            line,
            {},
            f"the row has {len(cells)} cells but the header has {len(columns)}; quote cells that hold the delimiter",
        )
    values = {column: cell.strip() for column, cell in zip(columns, cells) if column and cell.strip()}
    product_id = values.get(ITEM_ID)
    problem = None
    if product_id is not None:
        if product_id in seen_ids:
            problem = (
                f"Item ID {quoted(product_id)} already appears on line {seen_ids[product_id]}; list each product once"
            )
        else:
            seen_ids[product_id] = line
    return Record(line, values, problem)


# --- the rules' verdict in the file's words ----------------------------------------------------------------------


def column_of(path: str) -> str | None:
    """The file's column for a product rule's field path; None for data the file does not hold (kept fields)."""
    while path:
        if path in PATH_COLUMNS:
            return PATH_COLUMNS[path]
        path = path.rpartition(".")[0] if "." in path else ""
    return None


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def row_errors(line: int, failed: ValidationFailed, body: dict | None = None) -> list[RowError]:
    """The product rules' verdict on a row, in the file's words: one entry per problem, with its column. A
    message that repeats a long cell of the row quotes only its start."""
    long_cells = sorted((s for s in _strings(body or {}) if len(s) > IMPORT_QUOTED_CHARS), key=len, reverse=True)
    result = []
    for error in failed.errors:
        column = column_of(error.path)
        message = error.message if column else f"{error.path} (kept from the stored product) {error.message}"
        for cell in long_cells:
            message = message.replace(cell, quoted(cell))
        result.append(RowError(line, column, message))
    return result
