"""Accounts (suppliers) and their settings items."""

import datetime as dt

from . import keys, operations, table
from .operations import Operation
from .outcomes import Taken


def create(account: str, name: str, created: dt.datetime) -> None | Taken:
    """Create the account (created at `created`) if missing; Taken when it exists already."""
    item = {**keys.account_key(account), "name": name, "created": created.isoformat()}
    put = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    return operations.write(Operation({"Put": put}, Taken()))


def get(account: str) -> dict | None:
    response = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.account_key(account)))
    return table.from_item(response["Item"]) if "Item" in response else None
