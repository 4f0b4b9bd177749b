"""Customers: one item each, the customer document (profile and settings) in `data`."""

from . import documents, keys, table
from .paging import Page, query_page


def get(account: str, customer_id: str) -> dict | None:
    return documents.get(keys.customer_key(account, customer_id))


def list_page(account: str, limit: int, cursor: str | None) -> Page:
    page = query_page(
        account,
        "customers",
        limit,
        cursor,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues=table.values(pk=keys.account_pk(account), prefix=keys.CUSTOMER_PREFIX),
    )
    return Page([item["data"] for item in page.items], page.cursor)


def key(account: str, customer_id: str) -> dict:
    """The customer's item, as service/documents.py changes it."""
    return keys.customer_key(account, customer_id)


def exists_check(account: str, customer_id: str) -> dict:
    """A TransactWriteItems element that holds only while the customer exists."""
    return {
        "ConditionCheck": {
            "TableName": table.name(),
            "Key": table.to_item(keys.customer_key(account, customer_id)),
            "ConditionExpression": "attribute_exists(PK)",
        }
    }
