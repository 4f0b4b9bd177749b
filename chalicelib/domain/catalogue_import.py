"""Catalogue import from CSV (decisions §12): turning a row of people's files into a product body, deciding its
category, and the import as the API shows it. Reading the file is domain/import_file.py's.

Pure: no storage, no clock. The product rules are not repeated here: a mapped row is checked by
domain/product.validate_product, the same function PUT /products/:id uses, and its field paths are turned back
into the file's column names.
"""

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, Field

from .category import CategoryBody
from .common import parse as parse_shape
from .errors import ValidationFailed
from .identifiers import ID_MAX_LENGTH
from .import_file import (
    BUNDLE_GTIN,
    BUNDLE_SIZE,
    BUNDLE_TYPE,
    CATEGORY_ID,
    CATEGORY_NAME,
    DESCRIPTIVE_COLUMNS,
    GTIN,
    IMAGE,
    ITEM_ID,
    ITEM_NAME,
    LIST_COLUMNS,
    MIN_ORDER,
    ORDER_BY,
    PRICE,
    PRICE_PER,
    STATUS,
    VESSEL_SIZE,
    VESSEL_TYPE,
    VESSEL_UNIT,
    Record,
    RowError,
    property_name,
    row_errors,
)
from .values import ProductStatus


class ImportStatus(StrEnum):
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"


class Outcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    INVALID = "invalid"


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


def _exact(value: Decimal):
    """A context that holds every digit of `value` and a hundredfold: a cell may hold hundreds of digits, and the
    default 28 would round them (or raise), where the product's bounds are what should refuse them."""
    return localcontext(prec=max(28, len(value.as_tuple().digits) + 3))


def cents(amount: Decimal) -> int:
    """Currency units to cents, rounded half up: 2.505 -> 251."""
    with _exact(amount):
        return int((amount * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _number(value: Decimal) -> int | Decimal:
    with _exact(value):
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
    # A bad row's body from the cells that could be read: the product rules name its other problems (one entry per
    # problem, decisions §12); None when nothing of the row can be read (a whole-row problem).
    partial: dict | None = None


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
        """The row's product body without its category, or the problems that stop it (the category's among them)."""
        row = map_record(self.record)
        if self.category_error is not None and not self.record.problem:
            row.partial = row.body if row.body is not None else row.partial
            row.body, row.errors = None, [*row.errors, self.category_error]
        return row


def map_record(record: Record) -> MappedRow:
    """The product body a row describes, or the problems that stop it, each with its column."""
    cells, line = record.cells, record.line
    errors: list[RowError] = []
    if record.problem:
        return MappedRow(
            line, cells.get(ITEM_ID), None, CategoryRef(None, None), [RowError(line, None, record.problem)]
        )

    def number(column: str) -> int | Decimal | None:
        if column not in cells:
            return None
        value = decimal(cells[column])
        if value is None:
            errors.append(RowError(line, column, "must be a decimal number such as 12.90 or 12,90"))
            return None
        return _number(value)

    body: dict = {
        "id": cells.get(ITEM_ID),
        "status": cells.get(STATUS, ProductStatus.ACTIVE).upper(),
        "name": cells.get(ITEM_NAME),
    }
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
    vessel = {
        "size": number(VESSEL_SIZE),
        "unit": cells.get(VESSEL_UNIT, "").lower(),
        "type": cells.get(VESSEL_TYPE, "").upper(),
    }
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
    return MappedRow(line, cells.get(ITEM_ID), None if errors else body, category, errors, body if errors else None)


def problems(row: MappedRow, category: str | None) -> list[RowError]:
    """Every problem of a bad row, one entry each (decisions §12): the mapping's, then what the product rules say of
    its readable cells in columns not named already. Its category is taken as `category` (None: none was found, and
    that is among the row's problems), so only the row's own cells are judged."""
    from .product import validate_product

    if row.partial is None:
        return row.errors
    try:
        validate_product({**row.partial, **({"category": category} if category is not None else {})})
    except ValidationFailed as failed:
        named = {error.column for error in row.errors} | {CATEGORY_ID, CATEGORY_NAME}
        return [*row.errors, *(e for e in row_errors(row.line, failed, row.partial) if e.column not in named)]
    return row.errors


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
