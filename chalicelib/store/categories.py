"""Categories: small items under the account partition."""
from botocore.exceptions import ClientError

from . import batch, keys, table
from .paging import Page, query_page


def _public(item: dict) -> dict:
    return {"id": keys.category_id_of(item), "name": item["name"]}


def put(account: str, category_id: str, name: str) -> dict:
    item = {**keys.category_key(account, category_id), "name": name}
    table.client().put_item(TableName=table.name(), Item=table.to_item(item))
    return _public(item)


class Taken:
    """The outcome of create when a category with that id already exists."""


TAKEN = Taken()


class Gone:
    """The outcome of delete when there is no such category."""


GONE = Gone()


def create(account: str, category_id: str, name: str) -> dict | Taken:
    item = {**keys.category_key(account, category_id), "name": name}
    try:
        table.client().put_item(
            TableName=table.name(), Item=table.to_item(item), ConditionExpression="attribute_not_exists(PK)"
        )
    except ClientError as error:
        if table.is_conditional_failure(error):
            return TAKEN
        raise
    return _public(item)


def get(account: str, category_id: str) -> dict | None:
    response = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.category_key(account, category_id)))
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


def delete(account: str, category_id: str) -> Gone | None:
    try:
        table.client().delete_item(
            TableName=table.name(),
            Key=table.to_item(keys.category_key(account, category_id)),
            ConditionExpression="attribute_exists(PK)",
        )
    except ClientError as error:
        if table.is_conditional_failure(error):
            return GONE
        raise
    return None


def existing(account: str, category_ids: list[str]) -> set[str]:
    """Which of these categories exist, read consistently (the catalogue import reads its chunk's at once)."""
    found = batch.get_items([keys.category_key(account, c) for c in category_ids], consistent=True)
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
