"""Documents stored as the JSON text their GET answers, so a read does no work between DynamoDB and the response.

A document (a product, a delivery's summary) is kept in one binary attribute `body`: its JSON in the field order
of decisions §3 with numbers as written (§5), deflated. One attribute instead of a map of maps spares botocore
parsing every nested attribute value and us the Decimal and field-order round trip on each read (bench/README.md
measures both); deflate keeps the item no larger than the map it replaces, so writes cost no more capacity and
list pages less.
Items written before hold the document as a map (`data`, `doc`); they read through the same functions (`text`,
`document`), rendered on the way, until their next write stores them as `body`.
"""

import json
import zlib
from decimal import Decimal
from typing import Any

from ..domain.field_order import PRODUCT, Order, ordered
from ..domain.rendering import json_text
from . import table

BODY, LEGACY = "body", "data"
_RAW_DEFLATE = -15  # no zlib header or checksum: DynamoDB stores the bytes intact


def pack(document: dict, order: Order) -> bytes:
    """The `body` attribute's value for a document."""
    return zlib.compress(json_text(ordered(document, order)).encode("utf-8"), 9, wbits=_RAW_DEFLATE)


def unpack(blob: bytes) -> str:
    return zlib.decompress(blob, wbits=_RAW_DEFLATE).decode("utf-8")


def parse(text: str) -> dict:
    """The document as the store's other readers know it: numbers as Decimal, as TypeDeserializer gives them."""
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


def _blob(value: Any) -> bytes:
    return value.value if hasattr(value, "value") else value  # boto3's Binary, or bytes from a low-level item


def text(item: dict, order: Order, legacy: str = LEGACY) -> str:
    """The response JSON of an item decoded by table.from_item. `legacy` names the map attribute that held the
    document before (`data`; `doc` for deliveries)."""
    if BODY in item:
        return unpack(_blob(item[BODY]))
    return json_text(ordered(item[legacy], order))


def document(item: dict, legacy: str = LEGACY) -> dict:
    """The document of an item decoded by table.from_item, whichever form it was stored in."""
    if BODY in item:
        return parse(unpack(_blob(item[BODY])))
    return item[legacy]


def id_of(text: str) -> str:
    """The `id` a stored document's text starts with (decisions §3: `id` first), as its JSON: digits, or a quoted
    identifier (ids need no escapes). A page makes its cursor from it, so it reads no key attributes."""
    if not text.startswith('{"id":'):
        raise ValueError(f"a stored document that does not start with its id: {text[:40]!r}")
    return text[6 : text.index(",", 6)]


def low_level_text(item: dict, order: Order, legacy: str = LEGACY) -> str:
    """The response JSON of an item as the low-level client answers it ({"body": {"B": ...}}): the list fast path."""
    body = item.get(BODY)
    if body is not None:
        return unpack(body["B"])
    return json_text(ordered(table.from_item({legacy: item[legacy]})[legacy], order))


PRODUCT_CONDITION_FIELDS = ("order_by",)  # read by the condition of pricing writes (store/pricing.py)


def product_attributes(data: dict) -> tuple[dict, list[str]]:
    """(to set, to remove) to store a product document: `body`, the fields conditions read beside it, and no
    legacy `data` any more."""
    sets: dict = {BODY: pack(data, PRODUCT)}
    removals = [LEGACY]
    for name in PRODUCT_CONDITION_FIELDS:
        if data.get(name) is not None:
            sets[name] = data[name]
        else:
            removals.append(name)
    return sets, removals
