"""Customer pricing and price groups, kept under the product's pricing partition A#<account>#P#<product>.

Writes are a transaction with checks that the product still exists with the `order_by` the pricing was
validated against (and, for customer pricing, that the customer exists), so a product or customer that went
away, or a product switched between vessel and kg, never gets pricing validated against the old state.

Pricing belongs to one product of an id: each pricing item keeps the product's `born` (the revision that created
it) and counts only beside a product born the same (`belongs`). So a product deleted and created again inherits no
pricing, whether or not the delete's purge of the old items (housekeeping, after the delete's transaction) ran.
"""

import json
from dataclasses import dataclass

from ..domain.values import DEFAULT_ORDER_BY
from . import batch, customers, keys, table
from .operations import Operation
from .outcomes import Gone, Stale
from .products import BORN, StoredProduct, belongs, from_item

MAX_DOCUMENT_BYTES = 350_000


@dataclass(frozen=True)
class Read:
    product: StoredProduct | None
    customer: dict | None
    data: dict | None  # the customer's pricing, or the product's price-group map


def _read(account: str, product_id: str, customer_id: str | None, pricing_key: dict) -> Read:
    wanted = [keys.product_key(account, product_id), pricing_key]
    if customer_id is not None:
        wanted.append(keys.customer_key(account, customer_id))
    found = batch.get_items(wanted, consistent=True)
    product = batch.pick(found, wanted[0])
    pricing = batch.pick(found, pricing_key)
    customer = batch.pick(found, wanted[2]) if customer_id is not None else None
    product = from_item(product) if product else None
    return Read(
        product=product,
        customer=customer["data"] if customer else None,
        data=pricing["data"] if product is not None and belongs(pricing, product.born) else None,
    )


def read_customer_pricing(account: str, product_id: str, customer_id: str) -> Read:
    """Product, customer and the customer's pricing of the product: one BatchGetItem."""
    return _read(account, product_id, customer_id, keys.customer_pricing_key(account, product_id, customer_id))


def read_price_groups(account: str, product_id: str) -> Read:
    """Product and its price-group map: one BatchGetItem."""
    return _read(account, product_id, None, keys.price_groups_key(account, product_id))


def _product_check(account: str, product_id: str, order_by: str, born: str | None) -> Operation:
    # order_by beside the product's body (store/rendered.py), or inside `data` on items written before that form.
    same_order_by = "(order_by = :order_by OR #data.order_by = :order_by)"
    if order_by == DEFAULT_ORDER_BY:  # the default: stored products may leave it out
        same_order_by = (
            f"((attribute_not_exists(order_by) AND attribute_not_exists(#data.order_by)) OR {same_order_by})"
        )
    # The very product the pricing was validated against, not one created again with its id meanwhile.
    same_product = "#born = :born" if born is not None else "attribute_not_exists(#born)"
    values = {"order_by": order_by, **({"born": born} if born is not None else {})}
    return Operation(
        {
            "ConditionCheck": {
                "TableName": table.name(),
                "Key": table.to_item(keys.product_key(account, product_id)),
                "ConditionExpression": f"attribute_exists(PK) AND {same_order_by} AND {same_product}",
                "ExpressionAttributeNames": {"#data": "data", "#born": BORN},
                "ExpressionAttributeValues": table.values(**values),
            }
        },
        Stale(),
    )


def _born(read: Read | None) -> str | None:
    return read.product.born if read is not None and read.product is not None else None


def unchanged(read: Read | None, data: dict) -> bool:
    """What was read is `data` already: a write would change nothing (and append no feed entry)."""
    return read is not None and read.data is not None and table.plain(read.data) == table.plain(data)


def too_large(data: dict) -> bool:
    """More than a pricing item holds (MAX_DOCUMENT_BYTES): DynamoDB items hold at most 400 KB, and JSON text is a
    close enough measure of an item's size."""
    return len(json.dumps(data, default=str, separators=(",", ":"))) > MAX_DOCUMENT_BYTES


def _putting(key: dict, data: dict, checks: list[Operation], read: Read | None) -> list[Operation]:
    """The pricing item, written only while every check holds (Stale: the product or customer changed meanwhile,
    read again)."""
    born = _born(read)
    item = {**key, "data": data, **({BORN: born} if born is not None else {})}
    put = Operation({"Put": {"TableName": table.name(), "Item": table.to_item(item)}})
    return [put, *checks]


def putting_customer_pricing(
    account: str, product_id: str, customer_id: str, level: dict, order_by: str, read: Read | None = None
) -> list[Operation]:
    return _putting(
        keys.customer_pricing_key(account, product_id, customer_id),
        level,
        [
            _product_check(account, product_id, order_by, _born(read)),
            Operation(customers.exists_check(account, customer_id), Stale()),
        ],
        read,
    )


def putting_price_groups(
    account: str, product_id: str, groups: dict, order_by: str, read: Read | None = None
) -> list[Operation]:
    return _putting(
        keys.price_groups_key(account, product_id),
        groups,
        [_product_check(account, product_id, order_by, _born(read))],
        read,
    )


def deleting_customer_pricing(account: str, product_id: str, customer_id: str, read: Read) -> Operation:
    """Delete the pricing `read` (Gone: it went meanwhile, or belongs to a product created again)."""
    born = _born(read)
    doomed = {
        "TableName": table.name(),
        "Key": table.to_item(keys.customer_pricing_key(account, product_id, customer_id)),
        "ConditionExpression": "attribute_exists(PK) AND "
        + ("#born = :born" if born is not None else "attribute_not_exists(#born)"),
        "ExpressionAttributeNames": {"#born": BORN},
        **({"ExpressionAttributeValues": table.values(born=born)} if born is not None else {}),
    }
    return Operation({"Delete": doomed}, Gone())


RETIRED = "retired"  # the `born` of a retired pricing item: no product is born so, so it belongs to none


def levels_of(account: str, product_id: str, born: str | None) -> list[tuple[str, dict]]:
    """Every price level of the product born `born`, named as a person would: ("customer <id>", its level) for each
    customer's pricing, ("price group <name>", its level) for each group, numbers as a JSON body has them. Queried
    consistently, page by page."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": table.values(pk=keys.product_pricing_pk(account, product_id)),
        "ConsistentRead": True,
    }
    levels = []
    while True:
        response = table.client().query(**request)
        for item in map(table.from_item, response.get("Items", [])):
            if not belongs(item, born):
                continue
            data = table.json_numbers(item["data"])  # as a body gives it: the rules validate it again
            if item["SK"] == keys.price_groups_key(account, product_id)["SK"]:
                levels += [(f"price group {group}", level) for group, level in sorted(data.items())]
            else:
                levels.append((f"customer {item['SK'].removeprefix(keys.CUSTOMER_PREFIX)}", data))
        if "LastEvaluatedKey" not in response:
            return levels
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def retiring_all_of_product(account: str, product_id: str, born: str | None, now: int) -> list[Operation]:
    """Housekeeping after a product's delete: its customer pricing and price groups are left to the table's TTL.
    Nothing depends on it (a product created again with the id is born anew, so the old items no longer count:
    `belongs`); it only frees their space. Each is set to expire now, conditional on still belonging to the product
    born `born` (a price written meanwhile for the product created again keeps it), and keeping its feed mark as it
    is (the stream shows no change: an item with the TTL attribute is retired, and its expiry is no deletion:
    store/feed_resources.py). One operation per item, each its own write; refused (Stale), it belongs to the product
    created again. `now`: epoch seconds."""
    pk = keys.product_pricing_pk(account, product_id)
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": table.values(pk=pk),
        "ProjectionExpression": "PK, SK, #born",
        "ExpressionAttributeNames": {"#born": BORN},
    }
    operations = []
    while True:
        response = table.client().query(**request)
        for item in response.get("Items", []):
            if table.from_item(item).get(BORN) in (born, None):
                operations.append(_retiring({"PK": item["PK"], "SK": item["SK"]}, born, now))
        if "LastEvaluatedKey" not in response:
            return operations
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _retiring(key: dict, born: str | None, now: int) -> Operation:
    belongs_still = "#born = :born" if born is not None else "attribute_not_exists(#born)"
    values = {"now": now, "retired": RETIRED, **({"born": born} if born is not None else {})}
    update = {
        "TableName": table.name(),
        "Key": key,
        "UpdateExpression": f"SET {table.TTL_ATTRIBUTE} = :now, #born = :retired",
        "ConditionExpression": belongs_still,
        "ExpressionAttributeNames": {"#born": BORN},
        "ExpressionAttributeValues": table.values(**values),
    }
    return Operation({"Update": update}, Stale())
