"""Categories: small items under the account partition."""
from botocore.exceptions import ClientError

from . import keys, table
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
