"""Deliveries in the single table.

Each delivery is two items:
- the summary, `keys.delivery_key`: `doc` = the delivery as the API shows it except `request.items`, plus
  `status`, `customer_id` and `version` (bumped by every change; every change is conditional on it). GSI1 is
  keyed by status and GSI2 by customer, both newest first, so a list page reads only the deliveries it shows
  and never pays for their items;
- the request items, `keys.delivery_items_key`: immutable, read only for the single-delivery view.
Ids come from a per-account counter.
"""
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.delivery import without_items
from ..domain.errors import invalid
from . import batch, keys, table
from .paging import Page, query_page

COUNTER = "DELIVERY"
MAX_ID = 10**keys.ID_WIDTH - 1


@dataclass(frozen=True)
class StoredDelivery:
    delivery: dict  # as the API shows it; request.items only when read in full
    version: int


def parse_id(text: str) -> int | None:
    """A delivery id from a URL: a positive integer, else None (reads as 404)."""
    if not text or not text.isdigit() or text.startswith("0") or len(text) > keys.ID_WIDTH:
        return None
    return int(text)


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
        "doc": without_items(delivery),
        "status": delivery["status"],
        **keys.delivery_status_gsi(account, delivery["status"], delivery["id"]),
    }


def create_operations(account: str, delivery: dict) -> list[dict]:
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


def _stored(summary: dict, items: list | None) -> StoredDelivery:
    delivery = summary["doc"]
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


def get_summary(account: str, delivery_id: int) -> StoredDelivery | None:
    """The summary alone, read consistently: what a retried change re-reads (the items never change)."""
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.delivery_key(account, delivery_id)), ConsistentRead=True
    )
    return _stored(table.from_item(response["Item"]), None) if "Item" in response else None


def update_operation(account: str, delivery: dict, expected_version: int) -> dict:
    """A transaction item that stores the changed delivery if nobody changed it since `expected_version`.

    The status index moves with the status in the same write.
    """
    attributes = _summary_attributes(account, delivery)
    return {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.delivery_key(account, delivery["id"])),
            "UpdateExpression": "SET #doc = :doc, #status = :status, #version = :next, GSI1PK = :gpk",
            "ConditionExpression": "#version = :expected",
            "ExpressionAttributeNames": {"#doc": "doc", "#status": "status", "#version": "version"},
            "ExpressionAttributeValues": table.values(
                doc=attributes["doc"],
                status=attributes["status"],
                gpk=attributes["GSI1PK"],
                next=expected_version + 1,
                expected=expected_version,
            ),
        }
    }


def _too_large(error: ClientError) -> bool:
    """DynamoDB refuses items over 400 KB; a delivery with very many large responses could get there."""
    details = error.response.get("Error", {})
    return details.get("Code") == "ValidationException" and "size" in details.get("Message", "").lower()


TOO_LARGE = "the delivery cannot hold more responses: it has reached the storage limit of one delivery"


def update(operation: dict) -> bool:
    """Run an `update_operation` alone, as one UpdateItem; False when the delivery changed since it was read."""
    try:
        table.client().update_item(**operation["Update"])
    except ClientError as error:
        if table.is_conditional_failure(error):
            return False
        if _too_large(error):
            raise invalid("body", TOO_LARGE) from None
        raise
    return True


def transact(operations: list[dict]) -> list[str] | None:
    """Run a transaction; None on success, else the per-item cancellation codes."""
    try:
        table.client().transact_write_items(TransactItems=operations)
    except ClientError as error:
        codes = table.cancellation_codes(error)
        if codes:
            return codes
        if _too_large(error):
            raise invalid("body", TOO_LARGE) from None
        raise
    return None


def _newest_first(account: str, query: str, limit: int, cursor: str | None, pk: str, index: str | None = None) -> Page:
    key = f"{index}PK" if index else "PK"
    page = query_page(
        account,
        query,
        limit,
        cursor,
        index=index,
        KeyConditionExpression=f"{key} = :pk",
        ExpressionAttributeValues=table.values(pk=pk),
        ScanIndexForward=False,
    )
    return Page([_stored(item, None).delivery for item in page.items], page.cursor)


def list_page(account: str, limit: int, cursor: str | None, status: str | None = None) -> Page:
    """Newest first; with a status, only deliveries in it (read from the status index)."""
    if status is None:
        return _newest_first(account, "deliveries", limit, cursor, keys.delivery_key(account, 0)["PK"])
    pk = keys.delivery_status_gsi(account, status, 0)["GSI1PK"]
    return _newest_first(account, f"deliveries?status={status}", limit, cursor, pk, keys.GSI1)


def list_customer_page(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    """One customer's deliveries, newest first."""
    pk = keys.delivery_customer_gsi(account, customer_id, 0)["GSI2PK"]
    return _newest_first(account, f"customer-deliveries?customer={customer_id}", limit, cursor, pk, keys.GSI2)
