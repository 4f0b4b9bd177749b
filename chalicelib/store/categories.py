"""Categories: small items under the account partition."""

import datetime as dt

from botocore.exceptions import ClientError

from ..domain.feed import Change, ChangeType
from . import batch, feed, keys, table
from .outcomes import Contended, Gone, Taken
from .paging import Page, query_page


def _public(item: dict) -> dict:
    return {"id": keys.category_id_of(item), "name": item["name"]}


PUT_ATTEMPTS = 5


def put(account: str, category_id: str, name: str, now: dt.datetime) -> dict | Contended:
    """Create or rename; the same name again writes nothing (and appends no feed entry). Contended: others kept
    changing it between our read and our write, PUT_ATTEMPTS times."""
    key = keys.category_key(account, category_id)
    item = {**key, "name": name}
    for _ in range(PUT_ATTEMPTS):
        current = batch.pick(batch.get_items([key], consistent=True), key)
        if current is not None and current["name"] == name:
            return _public(item)
        kind = ChangeType.CATEGORY_UPDATED if current is not None else ChangeType.CATEGORY_CREATED
        condition = "attribute_exists(PK)" if current is not None else "attribute_not_exists(PK)"
        write = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": condition}
        try:
            feed.commit(account, [{"Put": write}], [Change(kind, category_id)], now)
            return _public(item)
        except ClientError as error:
            if table.CONDITION_FAILED not in table.cancellation_codes(error):
                raise
    return Contended()


def create(account: str, category_id: str, name: str, now: dt.datetime) -> dict | Taken:
    item = {**keys.category_key(account, category_id), "name": name}
    write = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    try:
        feed.commit(account, [{"Put": write}], [Change(ChangeType.CATEGORY_CREATED, category_id)], now)
    except ClientError as error:
        if table.CONDITION_FAILED in table.cancellation_codes(error):
            return Taken()
        raise
    return _public(item)


def get(account: str, category_id: str) -> dict | None:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.category_key(account, category_id))
    )
    return _public(table.from_item(response["Item"])) if "Item" in response else None


def list_page(account: str, limit: int, cursor: str | None) -> Page:
    page = query_page(
        account,
        "categories",
        limit,
        cursor,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues=table.values(pk=keys.account_pk(account), prefix=keys.CATEGORY_PREFIX),
    )
    return Page([_public(item) for item in page.items], page.cursor)


def delete(account: str, category_id: str, now: dt.datetime) -> Gone | None:
    doomed = {
        "TableName": table.name(),
        "Key": table.to_item(keys.category_key(account, category_id)),
        "ConditionExpression": "attribute_exists(PK)",
    }
    try:
        feed.commit(account, [{"Delete": doomed}], [Change(ChangeType.CATEGORY_DELETED, category_id)], now)
    except ClientError as error:
        if table.CONDITION_FAILED in table.cancellation_codes(error):
            return Gone()
        raise
    return None


def existing(account: str, category_ids: list[str], clock: batch.Clock | None = None) -> set[str]:
    """Which of these categories exist, read consistently (the catalogue import reads its chunk's at once)."""
    found = batch.get_items([keys.category_key(account, c) for c in category_ids], consistent=True, clock=clock)
    return {keys.category_id_of(item) for item in found.values()}


def create_operation(account: str, category_id: str, name: str) -> dict:
    """A transaction's Put that creates a category which must not exist yet."""
    return {
        "Put": {
            "TableName": table.name(),
            "Item": table.to_item({**keys.category_key(account, category_id), "name": name}),
            "ConditionExpression": "attribute_not_exists(PK)",
        }
    }


def exists_check(account: str, category_id: str) -> dict:
    """A transaction's ConditionCheck that the category exists when the transaction commits."""
    return {
        "ConditionCheck": {
            "TableName": table.name(),
            "Key": table.to_item(keys.category_key(account, category_id)),
            "ConditionExpression": "attribute_exists(PK)",
        }
    }


def all_names(account: str) -> dict[str, str]:
    """Every category of the account, id -> name (the catalogue import reads them once, when a file comes)."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
        "ExpressionAttributeValues": table.values(pk=keys.account_pk(account), prefix=keys.CATEGORY_PREFIX),
        "ConsistentRead": True,
    }
    found = {}
    while True:
        response = table.client().query(**request)
        for raw in response.get("Items", []):
            item = table.from_item(raw)
            found[keys.category_id_of(item)] = item["name"]
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
