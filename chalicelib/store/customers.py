"""Customers: one item each, the customer document (profile and settings) in `data`."""

import datetime as dt

from ..domain.feed import Change, ChangeType
from . import documents, keys, table
from .outcomes import Gone
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


def _entry(account: str, customer_id: str) -> documents.Entry:
    return documents.Entry(
        account, Change(ChangeType.CUSTOMER_CREATED, customer_id), Change(ChangeType.CUSTOMER_UPDATED, customer_id)
    )


def put_profile(account: str, customer_id: str, profile: dict, omitted: tuple[str, ...], now: dt.datetime) -> dict:
    """Create the customer or replace its profile, keeping its settings; returns the whole customer."""
    return documents.update(
        keys.customer_key(account, customer_id),
        profile,
        omitted,
        create_with=profile,
        entry=_entry(account, customer_id),
        now=now,
    )


def update_settings(
    account: str, customer_id: str, set_fields: dict, remove_fields: tuple[str, ...], now: dt.datetime
) -> dict | Gone:
    """Change settings of an existing customer; Gone (nothing written) when there is no such customer."""
    return documents.update(
        keys.customer_key(account, customer_id), set_fields, remove_fields, entry=_entry(account, customer_id), now=now
    )


def exists_check(account: str, customer_id: str) -> dict:
    """A TransactWriteItems element that holds only while the customer exists."""
    return {
        "ConditionCheck": {
            "TableName": table.name(),
            "Key": table.to_item(keys.customer_key(account, customer_id)),
            "ConditionExpression": "attribute_exists(PK)",
        }
    }
