"""The CSV order file of a delivery (decisions §8).

Two sections, the order and its items, with the same number of columns and a row of commas only between them.
RFC 4180 quoting, "\\n" line ends; UTF-8 starts with a BOM, latin1 turns what it cannot hold into "?".
The file is opened in spreadsheets and customers write many of its cells, so a text cell that a spreadsheet would
read as a formula gets a leading "'"; ids and numbers are written as they are.
"""

from decimal import Decimal

from .values import price_per_of

ENCODINGS = ("utf-8", "latin1")
BOM = "\ufeff"

ORDER_COLUMNS = (
    "Delivery ID", "Type", "Customer ID", "Company", "Cost Center", "Address", "Zip", "City", "Country",
    "User name", "User email", "Scheduled date", "Scheduled time", "Message",
)  # fmt: skip
ITEM_COLUMNS = (
    "Delivery ID", "Item ID", "Item name", "Vessel size", "Vessel unit", "Vessel type", "Bundle type", "Bundle size",
    "Pallet bundle type", "Pallet bundle size", "Count", "Vessel count", "Price", "Price per", "Message",
)  # fmt: skip
WIDTH = max(len(ORDER_COLUMNS), len(ITEM_COLUMNS))
# Ids are written as they are: their characters (identifiers.py) cannot form a call.
ID_COLUMNS = frozenset({"Delivery ID", "Customer ID", "Item ID"})
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_GUARD = "'"


def _text(value) -> str:
    """A cell: empty for missing values, numbers as written (2 not 2.0, 1.5 not 1.50000)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return f"{value.normalize():f}"
    return str(value)


def _cell(value, column: str | None = None) -> str:
    text = _text(value)
    if isinstance(value, str) and column not in ID_COLUMNS and text.startswith(FORMULA_STARTS):
        text = FORMULA_GUARD + text  # numbers are never strings here, so they stay numbers
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _row(values, columns=()) -> str:
    names = [*columns, *[None] * (len(values) - len(columns))]
    cells = [_cell(value, name) for value, name in zip(values, names)]
    return ",".join(cells + [""] * (WIDTH - len(cells))) + "\n"


def _address(address: dict | None) -> str:
    if not address:
        return ""
    return ", ".join(part for part in (address.get("address1"), address.get("address2")) if part)


def _order_row(delivery: dict) -> list:
    request = delivery["request"]
    address = request.get("address") or {}
    user = request.get("user") or {}
    scheduled = request.get("scheduled") or {}
    return [
        delivery["id"], delivery["type"], request.get("customer_id"), request.get("company"),
        request.get("cost_center"), _address(address), address.get("zip"), address.get("city"),
        address.get("country"), user.get("name"), user.get("email"), scheduled.get("date"),
        scheduled.get("time"), request.get("message"),
    ]  # fmt: skip


def _item_row(delivery_id, item: dict) -> list:
    vessel = item.get("vessel") or {}
    bundle = item.get("bundle") or {}
    pallet_bundle = bundle.get("pallet_bundle") or {}
    return [
        delivery_id, item["id"], item["name"], vessel.get("size"), vessel.get("unit"), vessel.get("type"),
        bundle.get("type"), bundle.get("size"), pallet_bundle.get("type"), pallet_bundle.get("size"),
        item["count"], item["vessel_count"], item.get("price"), price_per_of(item), item.get("message"),
    ]  # fmt: skip


def _deposit_rows(delivery: dict) -> list[list]:
    """After the items (decisions §15): one row per charged deposit type, then one per returned type with a
    negative count; the item columns they do not use stay empty."""
    deposits = delivery.get("deposits") or {}
    rows = []
    for key, sign, message in (("charged", 1, "deposit"), ("returned", -1, "empties")):
        for entry in deposits.get(key, ()):
            rows.append([delivery["id"], entry["id"], entry["name"], *[None] * 7, sign * entry["count"], None,
                         entry["price"], None, message])  # fmt: skip
    return rows


def order_file_text(delivery: dict) -> str:
    rows = [_row(ORDER_COLUMNS), _row(_order_row(delivery), ORDER_COLUMNS), _row([])]
    rows.append(_row(ITEM_COLUMNS))
    rows += [_row(_item_row(delivery["id"], item), ITEM_COLUMNS) for item in delivery["request"]["items"]]
    rows += [_row(row, ITEM_COLUMNS) for row in _deposit_rows(delivery)]
    return "".join(rows)


def order_file(delivery: dict, encoding: str = "utf-8") -> bytes:
    """The order file of a full delivery (with request items) in utf-8 (with BOM) or latin1."""
    text = order_file_text(delivery)
    if encoding == "latin1":
        return text.encode("latin-1", errors="replace")
    if encoding == "utf-8":
        return (BOM + text).encode("utf-8")
    raise ValueError(f"unknown encoding {encoding!r}; use one of {', '.join(ENCODINGS)}")
