"""Items whose document is one `data` map (customers, settings): changed field by field in one UpdateItem.

Setting top-level fields of `data` instead of rewriting it lets two writers own different fields of the same
document (the profile and the settings of a customer) without reading it first.
"""
from botocore.exceptions import ClientError

from . import table

CREATE_ATTEMPTS = 3


class Contended(Exception):
    """Other writers kept creating and changing the document between our update and our create."""


def _update_request(key: dict, set_fields: dict, remove_fields: tuple[str, ...]) -> dict:
    names = {"#data": "data"}
    values = {}
    sets, removes = [], []
    for i, (field, value) in enumerate(set_fields.items()):
        names[f"#s{i}"] = field
        values[f":s{i}"] = table.to_attr(value)
        sets.append(f"#data.#s{i} = :s{i}")
    for i, field in enumerate(remove_fields):
        names[f"#r{i}"] = field
        removes.append(f"#data.#r{i}")
    clauses = [("SET", sets), ("REMOVE", removes)]
    expression = " ".join(f"{verb} {', '.join(paths)}" for verb, paths in clauses if paths)
    request = {
        "TableName": table.name(),
        "Key": table.to_item(key),
        "UpdateExpression": expression,
        "ConditionExpression": "attribute_exists(#data)",
        "ExpressionAttributeNames": names,
        "ReturnValues": "ALL_NEW",
    }
    if values:
        request["ExpressionAttributeValues"] = values
    return request


def get(key: dict, consistent: bool = False) -> dict | None:
    response = table.client().get_item(TableName=table.name(), Key=table.to_item(key), ConsistentRead=consistent)
    return table.from_item(response["Item"])["data"] if "Item" in response else None


def update(key: dict, set_fields: dict, remove_fields: tuple[str, ...] = (), create_with: dict | None = None):
    """Set and remove fields of the document in one conditional UpdateItem; returns the new document.

    A missing item stays missing and gives None, unless create_with is given: then the item is created holding
    create_with (which should already include set_fields). Creating costs a second request, only that once.
    """
    if not set_fields and not remove_fields:
        # Nothing to change, so nothing to create either: a missing item still reads as create_with.
        current = get(key, consistent=True)
        return current if current is not None or create_with is None else create_with
    for _ in range(CREATE_ATTEMPTS):
        try:
            response = table.client().update_item(**_update_request(key, set_fields, remove_fields))
            return table.from_item(response["Attributes"])["data"]
        except ClientError as error:
            if not table.is_conditional_failure(error):
                raise
        if create_with is None:
            return None
        try:
            table.client().put_item(
                TableName=table.name(),
                Item=table.to_item({**key, "data": create_with}),
                ConditionExpression="attribute_not_exists(PK)",
            )
            return create_with
        except ClientError as error:
            if not table.is_conditional_failure(error):
                raise
        # Created by someone else between our two requests: update what they created.
    raise Contended()
