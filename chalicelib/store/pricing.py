"""Customer pricing and price groups, kept under the product's pricing partition A#<account>#P#<product>.

Writes are a transaction with checks that the product still exists with the `order_by` the pricing was
validated against (and, for customer pricing, that the customer exists), so a product or customer that went
away, or a product switched between vessel and kg, never gets pricing validated against the old state.
"""
import datetime as dt
import json
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.feed import Change, ChangeType
from ..domain.values import DEFAULT_ORDER_BY
from . import batch, customers, feed, keys, table
from .outcomes import Gone, Stale, TooLarge
from .products import StoredProduct, from_item

MAX_DOCUMENT_BYTES = 350_000


@dataclass(frozen=True)
class Read:
    product: StoredProduct | None
    customer: dict | None
    data: dict | None  # the customer's pricing, or the product's price-group map
    head: feed.Head | None = None  # the account's feed head, for the write that follows the read


def _read(account: str, product_id: str, customer_id: str | None, pricing_key: dict) -> Read:
    head_key = feed.head_key(account)
    wanted = [keys.product_key(account, product_id), pricing_key, head_key]
    if customer_id is not None:
        wanted.append(keys.customer_key(account, customer_id))
    found = batch.get_items(wanted, consistent=True)
    product = batch.pick(found, wanted[0])
    pricing = batch.pick(found, pricing_key)
    customer = batch.pick(found, wanted[3]) if customer_id is not None else None
    return Read(
        product=from_item(product) if product else None,
        customer=customer["data"] if customer else None,
        data=pricing["data"] if pricing else None,
        head=feed.head_of(batch.pick(found, head_key)),
    )


def read_customer_pricing(account: str, product_id: str, customer_id: str) -> Read:
    """Product, customer and the customer's pricing of the product: one BatchGetItem."""
    return _read(account, product_id, customer_id, keys.customer_pricing_key(account, product_id, customer_id))


def read_price_groups(account: str, product_id: str) -> Read:
    """Product and its price-group map: one BatchGetItem."""
    return _read(account, product_id, None, keys.price_groups_key(account, product_id))


def _product_check(account: str, product_id: str, order_by: str) -> dict:
    # order_by beside the product's body (store/rendered.py), or inside `data` on items written before that form.
    same_order_by = "(order_by = :order_by OR #data.order_by = :order_by)"
    if order_by == DEFAULT_ORDER_BY:  # the default: stored products may leave it out
        same_order_by = (
            f"((attribute_not_exists(order_by) AND attribute_not_exists(#data.order_by)) OR {same_order_by})"
        )
    return {
        "ConditionCheck": {
            "TableName": table.name(),
            "Key": table.to_item(keys.product_key(account, product_id)),
            "ConditionExpression": f"attribute_exists(PK) AND {same_order_by}",
            "ExpressionAttributeNames": {"#data": "data"},
            "ExpressionAttributeValues": table.values(order_by=order_by),
        }
    }


def _put(
    account: str, key: dict, data: dict, checks: list[dict], change: Change, now: dt.datetime, read: Read | None
) -> None | Stale | TooLarge:
    """Write the pricing item if every check holds (None); Stale when one did not (the product or customer
    changed meanwhile: read again), TooLarge for data an item cannot hold (MAX_DOCUMENT_BYTES). What was read
    equal to `data` is done without a write (and without a feed entry)."""
    if read is not None and read.data is not None and table.plain(read.data) == table.plain(data):
        return None
    # DynamoDB items hold at most 400 KB; JSON text is a close enough measure of an item's size.
    if len(json.dumps(data, default=str, separators=(",", ":"))) > MAX_DOCUMENT_BYTES:
        return TooLarge()
    put = {"Put": {"TableName": table.name(), "Item": table.to_item({**key, "data": data})}}
    try:
        feed.commit(account, [put, *checks], [change], now, read.head if read is not None else None)
    except ClientError as error:
        if table.CONDITION_FAILED in table.cancellation_codes(error):
            return Stale()
        raise
    return None


def put_customer_pricing(
    account: str, product_id: str, customer_id: str, level: dict, order_by: str, now: dt.datetime, read: Read | None = None
) -> None | Stale | TooLarge:
    return _put(
        account,
        keys.customer_pricing_key(account, product_id, customer_id),
        level,
        [_product_check(account, product_id, order_by), customers.exists_check(account, customer_id)],
        Change(ChangeType.CUSTOMER_PRICING_UPDATED, product_id, customer_id=customer_id),
        now,
        read,
    )


def put_price_groups(
    account: str, product_id: str, groups: dict, order_by: str, now: dt.datetime, read: Read | None = None
) -> None | Stale | TooLarge:
    return _put(
        account,
        keys.price_groups_key(account, product_id),
        groups,
        [_product_check(account, product_id, order_by)],
        Change(ChangeType.PRICE_GROUPS_UPDATED, product_id),
        now,
        read,
    )


def delete_customer_pricing(
    account: str, product_id: str, customer_id: str, now: dt.datetime
) -> None | Gone:
    """Gone when the customer had no pricing of this product."""
    doomed = {
        "TableName": table.name(),
        "Key": table.to_item(keys.customer_pricing_key(account, product_id, customer_id)),
        "ConditionExpression": "attribute_exists(PK)",
    }
    change = Change(ChangeType.CUSTOMER_PRICING_DELETED, product_id, customer_id=customer_id)
    try:
        feed.commit(account, [{"Delete": doomed}], [change], now)
    except ClientError as error:
        if table.CONDITION_FAILED in table.cancellation_codes(error):
            return Gone()
        raise
    return None


def delete_all_of_product(account: str, product_id: str) -> None:
    """Remove every customer pricing and the price groups of a deleted product, so a product later created with
    the same id does not inherit them. Pricing writes check the product exists, so none can slip in after."""
    pk = keys.product_pricing_pk(account, product_id)
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": table.values(pk=pk),
        "ProjectionExpression": "PK, SK",
    }
    while True:
        response = table.client().query(**request)
        doomed = [{"DeleteRequest": {"Key": item}} for item in response.get("Items", [])]
        for start in range(0, len(doomed), 25):  # BatchWriteItem's limit
            pending = {table.name(): doomed[start : start + 25]}
            while pending:
                pending = table.client().batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
        if "LastEvaluatedKey" not in response:
            return
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
