"""Products: one item each, the product document in `body` as GET answers it (store/rendered.py), a revision for
ETags and conditional writes, and `order_by` beside it for the pricing writes' condition."""

from __future__ import annotations

import datetime as dt
import functools
from typing import TYPE_CHECKING

from ..domain.field_order import PRODUCT
from ..domain.values import ORDERABLE_STATUSES
from . import keys, rendered, table
from .paging import Page, query_page

if TYPE_CHECKING:
    from .operations import Operation
    from .outcomes import Gone, InUse, Stale

# The writes import the unit of work, images, batch, deposits and outcomes where they use them: a cold read loads
# none.
BORN = "born"  # the revision that created the product, kept on it and on its pricing items


def belongs(pricing_item: dict | None, product_born: str | None) -> bool:
    """Whether a pricing item (decoded) is the pricing of the product born `product_born`, not of an earlier product
    of the same id (deleted, then created again): such pricing counts as none (store/pricing.py)."""
    return pricing_item is not None and pricing_item.get(BORN) == product_born


# What a page fetches: every attribute of a Query's items costs botocore a parse, so a page asks for the document
# alone (and the index keys where they are not made from the id). A single GetItem asks for the whole item: the few
# index attributes of one item cost less to parse than a projection costs to send (bench/README.md).
_READ_PAGE = "#body, #data, #born"
_READ_NAMES = {"#body": rendered.BODY, "#data": rendered.LEGACY, "#born": BORN}


class StoredProduct:
    """A plain class, not a dataclass: its class is built on every cold start (a dataclass's costs ~0.6 ms)."""

    def __init__(self, text: str, revision: str | None, used: bool = False, born: str | None = None):
        self.text = text  # the product's JSON as GET answers it
        self.revision = revision  # None on list pages, which show no ETag
        self.used = used
        # The revision that created it (None for products created before `born` was kept): pricing belongs to one
        # product of an id, so a product created again after a delete inherits none (store/pricing.py).
        self.born = born

    @functools.cached_property
    def data(self) -> dict:
        """The document, numbers as Decimal (for validation, pricing, imports); decoded on first use only."""
        return rendered.parse(self.text)

    def document(self) -> dict:
        """The document as a JSON body parses: int when whole (strict integer fields refuse Decimal('2'))."""
        return table.json_numbers(self.data)

    def same_as(self, data: dict) -> bool:
        """Storing `data` would change nothing a GET shows (no write, no feed entry)."""
        return table.plain(self.data) == table.plain(data)


def from_item(item: dict) -> StoredProduct:
    """A product item decoded by table.from_item, in either stored form."""
    stored = StoredProduct(rendered.text(item, PRODUCT), item["rev"], bool(item.get("used")), item.get(BORN))
    if rendered.BODY not in item:
        stored.__dict__["data"] = item[rendered.LEGACY]  # already decoded: spare parsing it back
    return stored


def _from_low_level(item: dict) -> StoredProduct:
    """A product item as the low-level client answers it: no TypeDeserializer, no Decimal, no re-rendering."""
    revision, used, born = item.get("rev"), item.get("used"), item.get(BORN)
    return StoredProduct(
        rendered.low_level_text(item, PRODUCT),
        revision and revision["S"],
        bool(used and used.get("BOOL")),
        born and born["S"],
    )


def get(account: str, product_id: str, consistent: bool = False) -> StoredProduct | None:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.product_key(account, product_id)), ConsistentRead=consistent
    )
    item = response.get("Item")
    return _from_low_level(item) if item is not None else None


def get_for_write(account: str, product_id: str) -> tuple[StoredProduct | None, dict]:
    """The product and the account's deposit types, read consistently in one BatchGetItem (what a write starts
    from)."""
    from . import batch, deposits

    product_key, types_key = keys.product_key(account, product_id), keys.deposit_types_key(account)
    found = batch.get_items([product_key, types_key], consistent=True)
    item = batch.pick(found, product_key)
    deposit_types = deposits.types_of(batch.pick(found, types_key))
    return (from_item(item) if item is not None else None), deposit_types


def list_page(account: str, limit: int, cursor: str | None) -> Page:
    return query_page(
        account,
        "products",
        limit,
        cursor,
        decode=_from_low_level,
        last_key=lambda product: table.to_item(keys.product_key(account, rendered.id_of(product.text)[1:-1])),
        KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
        ProjectionExpression=_READ_PAGE,
        ExpressionAttributeNames=_READ_NAMES,
        ExpressionAttributeValues=table.values(pk=keys.account_pk(account), prefix=keys.PRODUCT_PREFIX),
    )


def _update_expression(sets: dict, removals: list[str]) -> tuple[str, dict, dict]:
    """SET/REMOVE expression, attribute names and values for the given attributes (names in #n, values in :v)."""
    expression = "SET " + ", ".join(f"#s{i} = :s{i}" for i in range(len(sets)))
    if removals:
        expression += f" REMOVE {', '.join(f'#r{i}' for i in range(len(removals)))}"
    names = {**{f"#s{i}": name for i, name in enumerate(sets)}, **{f"#r{i}": name for i, name in enumerate(removals)}}
    values = table.values(**{f"s{i}": value for i, value in enumerate(sets.values())})
    return expression, names, values


def _index_attributes(account: str, data: dict, image_due: dt.datetime | None) -> tuple[dict, list[str]]:
    """The index attributes a product item carries beside its document: (to set, to remove).

    By category (GSI1); orderable ones in their sparse index (GSI2); a product with an image in the image
    queue (GSI3, see store/product_images.py), due at image_due.
    """
    from . import product_images

    sets = dict(keys.product_category_gsi(account, data["category"], data["id"]))
    removals = []
    if data["status"] in ORDERABLE_STATUSES:
        sets.update(keys.orderable_product_gsi(account, data["id"]))
    else:
        removals += ["GSI2PK", "GSI2SK"]
    if image_due is None:
        return sets, removals
    image_set, image_remove = product_images.marking(account, data, image_due)
    return {**sets, **image_set}, removals + list(image_remove)


def write_operation(
    account: str,
    data: dict,
    revision: str,
    *,
    create_only: bool = False,
    expected_revision: str | None = None,
    image_due: dt.datetime | None = None,
) -> dict:
    """The UpdateItem (as a TransactWriteItems element's body) that creates or replaces a product.

    Update (not Put) keeps attributes other writers own, such as the `used` flag set by deliveries. With
    image_due, the same update queues the product's image for download then, or forgets an image it no
    longer has.
    """
    index_set, removals = _index_attributes(account, data, image_due)
    document_set, document_removals = rendered.product_attributes(data)
    born = {BORN: revision} if create_only else {}
    expression, names, values = _update_expression(
        {**document_set, "rev": revision, **born, **index_set}, removals + document_removals
    )
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.product_key(account, data["id"])),
        "UpdateExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
    if create_only:
        update["ConditionExpression"] = "attribute_not_exists(PK)"
    elif expected_revision is not None:
        update["ConditionExpression"] = "rev = :expected"
        update["ExpressionAttributeValues"].update(table.values(expected=expected_revision))
    return update


class Saving:
    """A product write's own operation (create or replace the product item) and the revision it gives it."""

    def __init__(self, operation: Operation, revision: str):
        self.operation, self.revision = operation, revision


def saving(
    account: str,
    data: dict,
    *,
    create_only: bool = False,
    expected_revision: str | None = None,
    image_due: dt.datetime | None = None,
) -> Saving:
    """Create (create_only: Taken when it exists) or replace the product (with expected_revision: Stale when it
    changed since). Every product write, the catalogue import's too, writes the product item with this."""
    from . import outcomes
    from .operations import Operation

    revision = table.new_revision()
    update = write_operation(
        account, data, revision, create_only=create_only, expected_revision=expected_revision, image_due=image_due
    )
    return Saving(Operation({"Update": update}, outcomes.Taken() if create_only else outcomes.Stale()), revision)


def checks(account: str, data: dict, deposits_before: frozenset = frozenset()) -> list[Operation]:
    """What one product write holds beside the product: its category exists (NoCategory, answered first), and the
    reference counts of the deposit types it names or no longer names move (Stale: a type deleted meanwhile, read
    again and validate again)."""
    from ..domain.product import deposits_named  # the write path only: pydantic stays off a cold read
    from . import categories, deposits

    refs = deposits.product_operations(account, set(deposits_before), deposits_named(data))
    return [categories.exists_check(account, data["category"], rank=2), *refs]


def deleting(account: str, product_id: str, expected_revision: str | None, named: set[str]) -> list[Operation]:
    """Delete an unused product (with expected_revision: only that revision); a product whose packaging names deposit
    types gives their references back. Refused, the product is read to say why: Gone, InUse or Stale."""
    from . import deposits, outcomes
    from .operations import Operation

    condition = "attribute_exists(PK) AND (attribute_not_exists(used) OR used = :false)"
    named_values = {"false": False}
    if expected_revision is not None:
        condition += " AND rev = :expected"
        named_values["expected"] = expected_revision
    doomed = {
        "TableName": table.name(),
        "Key": table.to_item(keys.product_key(account, product_id)),
        "ConditionExpression": condition,
        "ExpressionAttributeValues": table.values(**named_values),
    }

    def why() -> Gone | InUse | Stale:
        current = get(account, product_id, consistent=True)
        if current is None:
            return outcomes.Gone()
        return outcomes.InUse() if current.used else outcomes.Stale()

    refs = deposits.product_operations(account, named, set(), refused=why)
    return [Operation({"Delete": doomed}, why), *refs]


def list_orderable_page(account: str, limit: int, cursor: str | None) -> Page:
    """ACTIVE and OUT_OF_STOCK products by id, from their sparse index: one request per full page."""
    return query_page(
        account,
        "orderable-products",
        limit,
        cursor,
        index=keys.GSI2,
        decode=_from_low_level,
        KeyConditionExpression="GSI2PK = :pk",
        ProjectionExpression=f"PK, SK, GSI2PK, GSI2SK, {_READ_PAGE}",
        ExpressionAttributeNames=_READ_NAMES,
        ExpressionAttributeValues=table.values(pk=keys.orderable_products_pk(account)),
    )


def any_in_category(account: str, category_id: str) -> bool:
    return table.first_in_index(keys.GSI1, keys.products_in_category_pk(account, category_id)) is not None


def unchanged_check(account: str, product_id: str, revision: str) -> Operation:
    """The product is still the revision that was read (a write that depends on it); Changed otherwise."""
    from . import outcomes
    from .operations import Operation

    check = {
        "TableName": table.name(),
        "Key": table.to_item(keys.product_key(account, product_id)),
        "ConditionExpression": "rev = :rev",
        "ExpressionAttributeValues": table.values(rev=revision),
    }
    return Operation({"ConditionCheck": check}, outcomes.Changed())
