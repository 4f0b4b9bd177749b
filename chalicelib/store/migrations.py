"""Data stored before a later layout, brought to it by one-off migrations run from the command line
(service/migrations.py): never on a request's path. Deliveries stored before integration states existed
(decisions §14) get their first one; deposit types stored before each had an item of its own get that item."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from . import keys, table
from .deliveries import (
    IntegrationWrite,
    StoredDelivery,
    _counts_operation,
    _failed,
    _integration_attributes,
    _transact,
    from_summary,
)

if TYPE_CHECKING:
    from .outcomes import Contended, Taken


def without_integration(
    account: str, limit: int, start: dict | None = None
) -> tuple[list[StoredDelivery], dict | None]:
    """Deliveries stored before integration states existed (a one-off migration reads them; a filtered Query,
    never on a request's path); and where to continue."""
    request = {"ExclusiveStartKey": start} if start else {}
    response = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk",
        FilterExpression="attribute_not_exists(integration)",
        ExpressionAttributeValues=table.values(pk=keys.deliveries_pk(account)),
        Limit=limit,
        **request,
    )
    return [from_summary(table.from_item(item), None) for item in response.get("Items", [])], response.get(
        "LastEvaluatedKey"
    )


def add_integration(
    account: str, stored: StoredDelivery, integration: IntegrationWrite, now: dt.datetime
) -> None | Taken | Contended:
    """Give a delivery stored before integration states its first one, counted; Taken when it has one already
    (a second run of the migration, or a PUT in between); Contended when another write held the counts for a
    moment (try again). The version moves too, so a PUT or a customer change that read the delivery without a
    state writes nothing over it and is evaluated again (counted once)."""
    from . import outcomes

    delivery_id = stored.delivery["id"]
    attributes = _integration_attributes(account, delivery_id, integration)
    names = {f"#a{i}": name for i, name in enumerate(attributes)}
    values = {f"a{i}": value for i, value in enumerate(attributes.values())}
    update = {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.delivery_key(account, delivery_id)),
            "UpdateExpression": "SET "
            + ", ".join(f"#a{i} = :a{i}" for i in range(len(attributes)))
            + " ADD #version :one",
            "ConditionExpression": "attribute_exists(PK) AND attribute_not_exists(#integration)",
            "ExpressionAttributeNames": {**names, "#integration": "integration", "#version": "version"},
            "ExpressionAttributeValues": table.values(**values, one=1),
        }
    }
    counts = _counts_operation(account, delivery_id, integration.counts)
    # No feed entry: a GET showed PENDING before (a missing state reads PENDING) and shows it after.
    outcome = _transact(account, [update] + ([counts] if counts is not None else []), None, [], now)
    if outcome is None:
        return None
    reasons = outcome if isinstance(outcome, dict) else {}  # TooLarge: no plan for it, as for an unknown code
    if _failed(reasons, update):
        return outcomes.Taken()
    if table.TRANSACTION_CONFLICT in reasons.values():
        return outcomes.Contended()
    raise table.WriteFailed("adding the integration state", reasons)


# Deposit types stored before each type had its own item (issue 25).


def give_types_their_items(account: str) -> int:
    """Give each deposit type that has no item of its own one, with the reference count the types item kept for
    it (exact: until then no product write naming the type commits, as its item is missing); how many it gave
    one. Each is conditional on the item still missing and the type still existing, so a second run, or a run
    beside other writes, changes nothing twice."""
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.deposit_types_key(account)), ConsistentRead=True
    )
    legacy = (table.from_item(response["Item"]) if "Item" in response else {}).get("types") or {}
    given = 0
    for deposit_id, entry in sorted(legacy.items()):
        item = {**keys.deposit_type_key(account, deposit_id), "refs": int(entry.get("refs", 0))}
        exists = {
            "TableName": table.name(),
            "Key": table.to_item(keys.deposit_types_key(account)),
            "ConditionExpression": "attribute_exists(#t.#d)",
            "ExpressionAttributeNames": {"#t": "types", "#d": deposit_id},
        }
        try:
            table.client().transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": table.name(),
                            "Item": table.to_item(item),
                            "ConditionExpression": "attribute_not_exists(PK)",
                        }
                    },
                    {"ConditionCheck": exists},
                ]
            )
        except ClientError as error:
            if table.CONDITION_FAILED not in table.cancellation_codes(error):
                raise
            continue
        given += 1
    return given
