"""Marks: how a write tells the table's stream the feed changes it makes (decisions §13; docs/feed.md).

The unit of work puts on the item that holds each changed resource (its feed item: `feed_item_key`) one small
attribute, `feed_mark`: the unit's id, the account and the changes (what their entries will say but the sequence).
Nothing else is written for the feed when a write commits. The stream's handler reads the marks back
(`changes_of`): a record whose new image carries a mark its old image did not is a committed unit's changes; a
write that leaves the mark as it was (a claim, a counter, an image's bookkeeping) makes none. A resource's changes
are always marked on the same item, and the stream keeps one item's records in order, so they are numbered in the
order they committed. A delete leaves no item to mark: the REMOVE record of a feed item is its resource's
`<resource>.deleted`, named by the item's key.
"""

import datetime as dt
import re
import uuid

from ..domain.feed import SETTINGS_DELIVERIES, Change, ChangeType, Resource
from ..domain.timestamps import iso
from . import keys, table

MARK = "feed_mark"
_SET = re.compile(r"(?<![#:\w])SET\s+", re.IGNORECASE)
# What a mark adds to its item, per change at most (store/import_chunks.py sizes its transactions with it).
BYTES_PER_CHANGE = 300


def feed_item_key(account: str, change: Change) -> dict:
    """The one item every change of the resource is marked on (the item its GET is first read from)."""
    resource, resource_id = change.resource, change.id
    if resource == Resource.PRODUCT:
        return keys.product_key(account, resource_id)
    if resource == Resource.CATEGORY:
        return keys.category_key(account, resource_id)
    if resource == Resource.CUSTOMER:
        return keys.customer_key(account, resource_id)
    if resource == Resource.CUSTOMER_PRICING:
        return keys.customer_pricing_key(account, resource_id, change.customer_id)
    if resource == Resource.PRICE_GROUPS:
        return keys.price_groups_key(account, resource_id)
    if resource == Resource.SETTINGS:  # (store/settings.py names the delivery settings' item DELIVERIES)
        return (
            keys.settings_key(account, "DELIVERIES")
            if resource_id == SETTINGS_DELIVERIES
            else keys.webhooks_key(account)
        )
    if resource == Resource.DELIVERY:
        return keys.delivery_key(account, int(resource_id))
    if resource == Resource.DEPOSIT:
        return keys.deposit_types_key(account)
    if resource == Resource.CUSTOMER_DEPOSITS:
        return keys.deposit_balance_key(account, resource_id)
    if resource == Resource.STANDING_ORDER:  # standing-order.failed too: in order with its other changes
        return keys.standing_order_key(account, change.customer_id, resource_id)
    raise ValueError(f"no feed item for {resource}")


def said(change: Change, now: dt.datetime) -> dict:
    """What the change's entry will say, but its sequence."""
    entry = {"type": str(change.type), "resource": str(change.resource), "id": change.id, "at": iso(now)}
    for name in ("status", "customer_id", "integration", "date", "by"):
        if getattr(change, name) is not None:
            entry[name] = getattr(change, name)
    return entry


def marked(account: str, items: list[dict], changes: list[Change], now: dt.datetime) -> list[dict]:
    """The transaction items with their changes marked: on the feed item's Put or Update; a ConditionCheck of it
    becomes an Update that keeps its condition; a feed item the unit does not write gets an Update of the mark
    alone (it must exist). A delete marks nothing: its REMOVE record says it."""
    by_item: dict[tuple[str, str], tuple[dict, list[Change]]] = {}
    for change in changes:
        key = feed_item_key(account, change)
        by_item.setdefault(table.key_of(key), (key, []))[1].append(change)
    unit = uuid.uuid4().hex[:16]
    items = list(items)
    positions = {table.item_key(item): index for index, item in enumerate(items)}
    for item_key, (key, grouped) in by_item.items():
        mark = {"unit": unit, "account": account, "changes": [said(change, now) for change in grouped]}
        index = positions.get(item_key)
        if index is None:
            items.append(_mark_alone(table.to_item(key), mark))
            continue
        ((kind, request),) = items[index].items()
        if kind == "Delete":
            if not all(change.type == _deleted(change.resource) for change in grouped):
                raise ValueError(f"a delete of {item_key} recorded as {[str(c.type) for c in grouped]}")
            continue
        items[index] = {kind if kind != "ConditionCheck" else "Update": _with_mark(kind, request, mark)}
    return items


def _with_mark(kind: str, request: dict, mark: dict) -> dict:
    request = dict(request)
    if kind == "Put":
        request["Item"] = {**request["Item"], MARK: table.to_attr(mark)}
        return request
    expression = request.get("UpdateExpression", "")
    found = _SET.search(expression)
    if found:
        expression = f"{expression[: found.end()]}#feed_mark = :feed_mark, {expression[found.end() :]}"
    else:
        expression = f"SET #feed_mark = :feed_mark {expression}".strip()
    request["UpdateExpression"] = expression
    request["ExpressionAttributeNames"] = {**request.get("ExpressionAttributeNames", {}), "#feed_mark": MARK}
    request["ExpressionAttributeValues"] = {
        **request.get("ExpressionAttributeValues", {}),
        ":feed_mark": table.to_attr(mark),
    }
    return request


def _mark_alone(key: dict, mark: dict) -> dict:
    return {
        "Update": {
            "TableName": table.name(),
            "Key": key,
            "UpdateExpression": "SET #feed_mark = :feed_mark",
            "ConditionExpression": "attribute_exists(PK)",
            "ExpressionAttributeNames": {"#feed_mark": MARK},
            "ExpressionAttributeValues": {":feed_mark": table.to_attr(mark)},
        }
    }


def _deleted(resource: Resource) -> ChangeType | None:
    try:
        return ChangeType(f"{resource}.deleted")
    except ValueError:
        return None


# Reading marks back from the stream.


def _mark_of(image: dict | None) -> dict | None:
    if not image or MARK not in image:
        return None
    return table.from_item({MARK: image[MARK]})[MARK]


def changes_of(
    event_name: str, new_image: dict | None, old_image: dict | None, at: dt.datetime
) -> tuple[str, list[dict]] | None:
    """(account, the changes) a stream record shows, in the order its unit recorded them, or None; `at`: when a
    deletion happened (what its entry says)."""
    if event_name in ("INSERT", "MODIFY"):
        new, old = _mark_of(new_image), _mark_of(old_image)
        if new is None or (old is not None and old.get("unit") == new.get("unit")):
            return None
        return new["account"], list(new.get("changes", []))
    if event_name == "REMOVE" and old_image and table.TTL_ATTRIBUTE not in old_image:  # an expiry is no change
        deleted = deleted_change(table.from_item({"PK": old_image["PK"], "SK": old_image["SK"]}))
        if deleted is not None:
            account, change = deleted
            return account, [said(change, at)]
    return None


def deleted_change(key: dict) -> tuple[str, Change] | None:
    """(account, change) of the deletion of a feed item that a delete removes, by its key; None for any other."""
    pk, sk = key["PK"], key["SK"]
    if not pk.startswith(keys.ACCOUNT_PREFIX):
        return None
    account_part = pk.removeprefix(keys.ACCOUNT_PREFIX)
    if "#P#" in account_part and sk.startswith(keys.CUSTOMER_PREFIX):
        account, product_id = account_part.split("#P#", 1)
        customer_id = sk.removeprefix(keys.CUSTOMER_PREFIX)
        return account, Change(ChangeType.CUSTOMER_PRICING_DELETED, product_id, customer_id=customer_id)
    if "#" in account_part:
        return None
    account = account_part
    if sk.startswith(keys.PRODUCT_PREFIX):
        return account, Change(ChangeType.PRODUCT_DELETED, sk.removeprefix(keys.PRODUCT_PREFIX))
    if sk.startswith(keys.CATEGORY_PREFIX):
        return account, Change(ChangeType.CATEGORY_DELETED, sk.removeprefix(keys.CATEGORY_PREFIX))
    standing = keys.standing_order_of(sk)
    if standing is not None:
        customer_id, standing_id = standing
        return account, Change(ChangeType.STANDING_ORDER_DELETED, standing_id, customer_id=customer_id)
    return None


def change_of(said_change: dict) -> Change:
    """The Change an entry's text says (of a type this release knows)."""
    return Change(
        ChangeType(said_change["type"]),
        said_change["id"],
        said_change.get("status"),
        said_change.get("customer_id"),
        said_change.get("integration"),
        said_change.get("date"),
        said_change.get("by"),
    )
