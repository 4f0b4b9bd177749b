"""Catalogue import from CSV (decisions §12): reading people's files and turning a row into a product body.

Pure: no storage, no clock. The product rules are not repeated here: a mapped row is checked by
domain/product.validate_product, the same function PUT /products/:id uses, and its field paths are turned back
into the file's column names.
"""
import csv
import hashlib
import io
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, Field

from .category import CategoryBody
from .common import parse as parse_shape
from .errors import FieldError, ValidationFailed
from .identifiers import ID_MAX_LENGTH
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
from .values import ProductStatus

MAX_FILE_BYTES = IMPORT_FILE_BYTES
MAX_ROWS = IMPORT_ROWS
MAX_ROW_CHARS = 32_768  # keeps every row far below DynamoDB's 400 KB item, whatever its cells hold
MAX_LISTED_ERRORS = IMPORT_LISTED_ERRORS  # errors listed by GET /imports/products/:id; error_count counts all
CHARSET_NAMES = IMPORT_CHARSET_NAMES
BOM = "\ufeff"


class ImportStatus(StrEnum):
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"


class Outcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    INVALID = "invalid"


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
_PATH_COLUMNS = {
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
    if sum(len(cell) for cell in cells) > MAX_ROW_CHARS:
        return Record(line, {}, f"the row is longer than {MAX_ROW_CHARS} characters")
    if len(cells) > len(columns) and any(cell.strip() for cell in cells[len(columns) :]):
        return Record(
            line, {}, f"the row has {len(cells)} cells but the header has {len(columns)}; quote cells that hold the delimiter"
        )
    values = {column: cell.strip() for column, cell in zip(columns, cells) if column and cell.strip()}
    product_id = values.get(ITEM_ID)
    problem = None
    if product_id is not None:
        if product_id in seen_ids:
            problem = f"Item ID {quoted(product_id)} already appears on line {seen_ids[product_id]}; list each product once"
        else:
            seen_ids[product_id] = line
    return Record(line, values, problem)


# --- mapping ---------------------------------------------------------------------------------------------------

_DECIMAL = re.compile(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)")


def decimal(text: str) -> Decimal | None:
    """`12.90`, `12,90`, `-1`, `.5`; None for anything else (thousands separators included)."""
    if not _DECIMAL.fullmatch(text):
        return None
    try:
        return Decimal(text.replace(",", "."))
    except InvalidOperation:
        return None


def cents(amount: Decimal) -> int:
    """Currency units to cents, rounded half up: 2.505 -> 251."""
    return int((amount * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _number(value: Decimal) -> int | Decimal:
    return int(value) if value == value.to_integral_value() else value.normalize()


@dataclass(frozen=True)
class CategoryRef:
    """What a row says of its category: an id, a name, or both."""

    id: str | None
    name: str | None


@dataclass(frozen=True)
class CategoryTarget:
    """The category a row's product goes into, decided once when the file is read (decisions §12).

    `existing`: the category the row named when the file was read (by id or by name), if there was one.
    `create_id`, `create_name`: the category the import creates when the one it needs is gone when the row is
    written: a Category ID keeps its id, named by the row's Category name or else by the id; a name gets its
    name-derived id.
    """

    existing: str | None
    create_id: str
    create_name: str

    def as_json(self) -> list:
        return [self.existing, self.create_id, self.create_name]


@dataclass
class MappedRow:
    line: int
    product_id: str | None
    body: dict | None  # the product as a PUT body would give it, without its category; None when the row is bad
    category: CategoryRef
    errors: list[RowError]


@dataclass
class ImportRow:
    """A data row as the import keeps it from upload to write: its cells as read, and its category as decided
    at upload (the row is mapped once, when it is written)."""

    record: Record
    target: CategoryTarget | None = None
    first_use: bool = False  # the first row of the file that needs its category created
    category_error: RowError | None = None  # why no category can be found or made for it

    def as_json(self) -> list:
        target = self.target.as_json() if self.target else None
        error = self.category_error.as_json() if self.category_error else None
        return [self.record.line, self.record.cells, self.record.problem, target, self.first_use, error]

    @classmethod
    def from_json(cls, value: list) -> "ImportRow":
        line, cells, problem, target, first_use, error = value
        return cls(
            Record(line, cells, problem), CategoryTarget(*target) if target else None, first_use,
            RowError.from_json(error) if error else None,
        )  # fmt: skip

    def mapped(self) -> MappedRow:
        """The row's product body without its category, or the problems that stop it (the mapping's first)."""
        row = map_record(self.record)
        if row.body is not None and self.category_error is not None:
            row.body, row.errors = None, [self.category_error]
        return row


def map_record(record: Record) -> MappedRow:
    """The product body a row describes, or the problems that stop it, each with its column."""
    cells, line = record.cells, record.line
    errors: list[RowError] = []
    if record.problem:
        return MappedRow(line, cells.get(ITEM_ID), None, CategoryRef(None, None), [RowError(line, None, record.problem)])

    def number(column: str) -> int | Decimal | None:
        if column not in cells:
            return None
        value = decimal(cells[column])
        if value is None:
            errors.append(RowError(line, column, "must be a decimal number such as 12.90 or 12,90"))
            return None
        return _number(value)

    body: dict = {"id": cells.get(ITEM_ID), "status": cells.get(STATUS, ProductStatus.ACTIVE).upper(), "name": cells.get(ITEM_NAME)}
    if ORDER_BY in cells:
        body["order_by"] = cells[ORDER_BY].lower()
    price = number(PRICE)
    if price is not None:
        body["price"] = cents(Decimal(price))
    if PRICE_PER in cells:
        body["price_per"] = cells[PRICE_PER].lower()
    minimum = number(MIN_ORDER)
    if minimum is not None:
        body["min_order_count"] = minimum
    vessel = {"size": number(VESSEL_SIZE), "unit": cells.get(VESSEL_UNIT, "").lower(), "type": cells.get(VESSEL_TYPE, "").upper()}
    vessel = {k: v for k, v in vessel.items() if v not in (None, "")}
    if vessel:
        body["vessel"] = vessel
    bundle_size = number(BUNDLE_SIZE)
    if BUNDLE_SIZE in cells or BUNDLE_TYPE in cells:
        if BUNDLE_TYPE not in cells:
            errors.append(RowError(line, BUNDLE_TYPE, "is required when Bundle size is given"))
        elif BUNDLE_SIZE not in cells:
            errors.append(RowError(line, BUNDLE_SIZE, "is required when Bundle type is given"))
        elif bundle_size is not None:
            body["bundles"] = [{"type": cells[BUNDLE_TYPE].upper(), "size": bundle_size}]
    if GTIN in cells:
        body["gtin"] = cells[GTIN]
    if IMAGE in cells:
        body["image"] = {"url": cells[IMAGE]}
    properties: dict = {}
    for column in LIST_COLUMNS:
        if column in cells:
            items = [part.strip() for part in cells[column].split(",") if part.strip()]
            if items:
                properties[property_name(column)] = items
    for column in (*DESCRIPTIVE_COLUMNS, BUNDLE_GTIN):
        if column in cells:
            properties[property_name(column)] = cells[column]
    if properties:
        body["custom_properties"] = properties
    body = {k: v for k, v in body.items() if v is not None}
    category = CategoryRef(cells.get(CATEGORY_ID), cells.get(CATEGORY_NAME))
    return MappedRow(line, cells.get(ITEM_ID), None if errors else body, category, errors)


def column_of(path: str) -> str | None:
    """The file's column for a product rule's field path; None for data the file does not hold (kept fields)."""
    while path:
        if path in _PATH_COLUMNS:
            return _PATH_COLUMNS[path]
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


# --- categories --------------------------------------------------------------------------------------------------


def derived_category_id(name: str, taken: set[str], own: str | None = None) -> str:
    """An id made from a category name ("Soft drinks" -> "soft-drinks"), unique among `taken` (apart from
    `own`, the id of the category that has the name already, which it may keep)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:64] or "category"
    if slug == own or slug not in taken:
        return slug
    suffix = hashlib.sha256(name.encode()).hexdigest()[:8]
    candidate, n = f"{slug}-{suffix}", 2
    while candidate != own and candidate in taken:
        candidate, n = f"{slug}-{suffix}-{n}", n + 1
    return candidate[:ID_MAX_LENGTH]


def _category_name_problem(name: str) -> str | None:
    """The category rule of decisions §5 (domain/category.py) on a name the import would create."""
    try:
        parse_shape(CategoryBody, {"name": name})
    except ValidationFailed as failed:
        return failed.errors[0].message
    return None


@dataclass
class CategoryPlan:
    """How each row's category is found when the file is read (decisions §12): by id, else by exact trimmed
    name, else created with an id derived from the name."""

    by_id: set[str]
    by_name: dict[str, str]  # trimmed name -> smallest id
    targets: dict[str, CategoryTarget] = field(default_factory=dict)  # trimmed name -> its target
    refused: dict[str, str] = field(default_factory=dict)  # name -> why no category can have it
    needed: set[str] = field(default_factory=set)  # ids of categories to create that a row already needs
    # Every existing id and every target's id, kept as targets are added: a new name costs the same however
    # many came before it (a 20,000-name file plans in linear time, issue 24.7).
    taken: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.taken |= self.by_id

    @classmethod
    def of(cls, categories: dict[str, str]) -> "CategoryPlan":
        by_name: dict[str, str] = {}
        for category_id in sorted(categories):
            by_name.setdefault(categories[category_id].strip(), category_id)
        return cls(set(categories), by_name)

    def _by_name(self, name: str) -> CategoryTarget | str:
        if name in self.refused:
            return self.refused[name]
        if name not in self.targets:
            problem = _category_name_problem(name)
            if problem:
                self.refused[name] = problem
                return problem
            existing = self.by_name.get(name)
            # Recreated, a found category gets the id its name gives (its own id when that is the one).
            target = CategoryTarget(existing, derived_category_id(name, self.taken, own=existing), name)
            self.targets[name] = target
            self.taken.add(target.create_id)
        return self.targets[name]

    def settle(self, record: Record) -> ImportRow:
        """The row with its category target, or with the error that stops it."""
        row = ImportRow(record)
        if record.problem:
            return row
        category_id, category_name = record.cells.get(CATEGORY_ID), record.cells.get(CATEGORY_NAME)
        name = category_name.strip() if category_name is not None else None
        if category_id is not None and category_id in self.by_id:
            usable = name if name and _category_name_problem(name) is None else category_id
            row.target = CategoryTarget(category_id, category_id, usable)
        elif name is not None:
            found = self._by_name(name)
            if isinstance(found, str):
                row.category_error = RowError(record.line, CATEGORY_NAME, found)
                return row
            row.target = found
            if found.existing is None and found.create_id not in self.needed:
                self.needed.add(found.create_id)
                row.first_use = True
        elif category_id is not None:
            row.category_error = RowError(record.line, CATEGORY_ID, "does not name an existing category")
        return row


# --- the import as the API shows it ---------------------------------------------------------------------------


class RowProblem(BaseModel):
    row: int
    column: str | None
    message: str


_Count = Annotated[int, Field(ge=0)]


class ImportSummary(BaseModel):
    id: str
    status: ImportStatus
    dry_run: bool
    rows: _Count
    processed: _Count
    created: _Count
    updated: _Count
    unchanged: _Count
    invalid: _Count
    categories_created: _Count
    error_count: _Count
    submitted_at: str
    finished_at: str | None = None
    reason: str | None = None


class ImportReport(ImportSummary):
    errors: list[RowProblem]


class ImportList(BaseModel):
    imports: list[ImportSummary]
    cursor: str | None = None
