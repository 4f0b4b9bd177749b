"""Deliveries in the single table.

Each delivery is two items:
- the summary, `keys.delivery_key`: `body` = the delivery as the API shows it except `request.items`, as its
  JSON text (store/rendered.py; `doc`, a map, on items written before), plus `status`, `customer_id` and
  `version` (bumped by every change; every change is conditional on it). GSI1 is
  keyed by status and GSI2 by customer, both newest first, so a list page reads only the deliveries it shows
  and never pays for their items;
- the request items, `keys.delivery_items_key`: immutable, read only for the single-delivery view.
Ids come from a per-account counter.
"""
from dataclasses import dataclass

from botocore.exceptions import ClientError

import datetime as dt

from ..domain.delivery_summary import without_items
from ..domain.feed import STATUS_CHANGE, Change, ChangeType, delivery_change
from ..domain.field_order import DELIVERY
from . import batch, feed, keys, products, rendered, table
from .paging import Page, query_page

COUNTER = "DELIVERY"
LEGACY = "doc"  # the summary's map before `body`
_READ_NAMES = {"#body": rendered.BODY, "#doc": LEGACY}


@dataclass(frozen=True)
class StoredDelivery:
    delivery: dict  # as the API shows it; request.items only when read in full
    version: int


# Outcomes of a write that did not happen.
@dataclass(frozen=True)
class Stale:
    """The delivery changed since it was read (or, when creating, exists already)."""


@dataclass(frozen=True)
class LostClaim:
    """The Idempotency-Key claim written with the change was taken over by a retry."""


@dataclass(frozen=True)
class TooLarge:
    """DynamoDB refused an item as too large. The domain's limits keep deliveries far below; a safety net."""


@dataclass(frozen=True)
class ProductsGone:
    """Products of an order were deleted between the read and the write."""

    product_ids: frozenset


def allocate_ids(account: str, count: int) -> list[int]:
    """`count` new ids, unique in the account: one UpdateItem whatever the count."""
    response = table.client().update_item(
        TableName=table.name(),
        Key=table.to_item(keys.counter_key(account, COUNTER)),
        UpdateExpression="ADD #value :n",
        ExpressionAttributeNames={"#value": "value"},
        ExpressionAttributeValues=table.values(n=count),
        ReturnValues="UPDATED_NEW",
    )
    last = int(response["Attributes"]["value"]["N"])
    return list(range(last - count + 1, last + 1))


def _summary_attributes(account: str, delivery: dict) -> dict:
    return {
        rendered.BODY: rendered.pack(without_items(delivery), DELIVERY),
        "status": delivery["status"],
        **keys.delivery_status_gsi(account, delivery["status"], delivery["id"]),
    }


def _create_operations(account: str, delivery: dict) -> list[dict]:
    """Transaction items that create a delivery (given in full, with its request items)."""
    delivery_id = delivery["id"]
    customer_id = delivery["request"].get("customer_id")
    summary = {
        **keys.delivery_key(account, delivery_id),
        **_summary_attributes(account, delivery),
        "customer_id": customer_id,
        "version": 0,
    }
    if customer_id is not None:
        summary.update(keys.delivery_customer_gsi(account, customer_id, delivery_id))
    items = {**keys.delivery_items_key(account, delivery_id), "items": delivery["request"]["items"]}
    return [
        {"Put": {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}}
        for item in (summary, items)
    ]


def place(
    account: str,
    deliveries: list[dict],
    new_events: list[dict],
    used_products: list[str],
    claim: dict | None = None,
    *,
    changes: list[Change] | None = None,
    now: dt.datetime | None = None,
) -> None | Stale | ProductsGone | LostClaim | TooLarge:
    """Create the deliveries of one order, in one transaction with their events (opaque transaction items), the
    "used" flags of their products, the Idempotency-Key record and their feed entries; None when written."""
    operations = [operation for delivery in deliveries for operation in _create_operations(account, delivery)]
    operations += new_events
    first_product = len(operations)
    operations += [products.mark_used_operation(account, product_id) for product_id in used_products]
    if changes is None:
        changes = [delivery_change(ChangeType.DELIVERY_REQUESTED, delivery) for delivery in deliveries]
    outcome = _transact(account, operations, claim, changes, now or feed.wall_clock())
    if not isinstance(outcome, list):
        return outcome
    codes = outcome
    product_codes = codes[first_product : first_product + len(used_products)]
    gone = frozenset(pid for pid, code in zip(used_products, product_codes) if code == table.CONDITION_FAILED)
    if gone:
        return ProductsGone(gone)
    if table.CONDITION_FAILED in codes[: len(deliveries) * 2]:
        return Stale()
    raise RuntimeError(f"placing the order failed: {codes}")


def _stored(summary: dict, items: list | None) -> StoredDelivery:
    delivery = rendered.document(summary, LEGACY)
    if items is not None:
        delivery = {**delivery, "request": {**delivery["request"], "items": items}}
    return StoredDelivery(delivery, int(summary["version"]))


def get(account: str, delivery_id: int, consistent: bool = False) -> StoredDelivery | None:
    """The delivery in full: summary and items in one BatchGetItem."""
    summary_key = keys.delivery_key(account, delivery_id)
    items_key = keys.delivery_items_key(account, delivery_id)
    found = batch.get_items([summary_key, items_key], consistent=consistent)
    summary = batch.pick(found, summary_key)
    if summary is None:
        return None
    items = (batch.pick(found, items_key) or {}).get("items", [])
    return _stored(summary, items)


def _update_operation(account: str, delivery: dict, expected_version: int) -> dict:
    """A transaction item that stores the changed delivery if nobody changed it since `expected_version`.

    The status index moves with the status in the same write.
    """
    attributes = _summary_attributes(account, delivery)
    return {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.delivery_key(account, delivery["id"])),
            "UpdateExpression": "SET #body = :body, #status = :status, #version = :next, GSI1PK = :gpk REMOVE #doc",
            "ConditionExpression": "#version = :expected",
            "ExpressionAttributeNames": {**_READ_NAMES, "#status": "status", "#version": "version"},
            "ExpressionAttributeValues": table.values(
                body=attributes[rendered.BODY],
                status=attributes["status"],
                gpk=attributes["GSI1PK"],
                next=expected_version + 1,
                expected=expected_version,
            ),
        }
    }


def change(
    account: str,
    delivery: dict,
    expected_version: int,
    event: dict | None = None,
    claim: dict | None = None,
    *,
    change: Change | None = None,
    now: dt.datetime | None = None,
) -> StoredDelivery | Stale | LostClaim | TooLarge:
    """Store the changed delivery if nobody changed it since `expected_version`; with its event, its
    Idempotency-Key record (opaque transaction items) and its feed entry in the same write."""
    update = _update_operation(account, delivery, expected_version)
    written = StoredDelivery(delivery, expected_version + 1)
    change = change or delivery_change(STATUS_CHANGE[delivery["status"]], delivery)
    outcome = _transact(account, [update] + ([event] if event is not None else []), claim, [change], now or feed.wall_clock())
    if outcome is None:
        return written
    if isinstance(outcome, list):
        if outcome[0] == table.CONDITION_FAILED:
            return Stale()
        raise RuntimeError(f"changing the delivery failed: {outcome}")
    return outcome


def _transact(
    account: str, operations: list[dict], claim: dict | None, changes: list[Change], now: dt.datetime
) -> None | list[str] | LostClaim | TooLarge:
    """Run a transaction (with the feed entries of `changes`) whose last own item is the claim, if any: None when
    written, LostClaim when only the claim's condition failed, else the per-item cancellation codes to read."""
    try:
        feed.commit(account, operations + ([claim] if claim is not None else []), changes, now)
    except ClientError as error:
        codes = table.cancellation_codes(error)
        if not codes:
            if table.is_too_large(error):
                return TooLarge()
            raise
        if claim is not None and codes[-1] == table.CONDITION_FAILED and table.CONDITION_FAILED not in codes[:-1]:
            return LostClaim()
        return codes[: len(operations)]
    return None


def refresh(account: str, stored: StoredDelivery) -> StoredDelivery | None:
    """The delivery as it is now, read consistently; only its summary is read again (items never change)."""
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.delivery_key(account, stored.delivery["id"])), ConsistentRead=True
    )
    if "Item" not in response:
        return None
    return _stored(table.from_item(response["Item"]), stored.delivery["request"].get("items"))


def _summary_text(item: dict) -> str:
    """A summary as the low-level client answers it, as the JSON a list shows: no parsing, no re-rendering."""
    return rendered.low_level_text(item, DELIVERY, LEGACY)


def _newest_first(account: str, query: str, limit: int, cursor: str | None, pk: str, index: str | None = None) -> Page:
    """A page of summaries as their JSON text. Only the document and the keys are read: every attribute of a
    Query's items costs botocore a parse."""
    key = f"{index}PK" if index else "PK"
    index_keys = f", {index}PK, {index}SK" if index else ""
    return query_page(
        account,
        query,
        limit,
        cursor,
        index=index,
        decode=_summary_text,
        KeyConditionExpression=f"{key} = :pk",
        ExpressionAttributeValues=table.values(pk=pk),
        ProjectionExpression=f"PK, SK{index_keys}, #body, #doc",
        ExpressionAttributeNames=_READ_NAMES,
        ScanIndexForward=False,
    )


def list_page(account: str, limit: int, cursor: str | None, status: str | None = None) -> Page:
    """Newest first, as JSON texts; with a status, only deliveries in it (read from the status index)."""
    if status is None:
        return _newest_first(account, "deliveries", limit, cursor, keys.deliveries_pk(account))
    pk = keys.deliveries_by_status_pk(account, status)
    return _newest_first(account, f"deliveries?status={status}", limit, cursor, pk, keys.GSI1)


def list_customer_page(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    """One customer's deliveries, newest first, as JSON texts."""
    pk = keys.deliveries_by_customer_pk(account, customer_id)
    return _newest_first(account, f"customer-deliveries?customer={customer_id}", limit, cursor, pk, keys.GSI2)
