"""Data stored before a later layout, brought to it by one-off migrations run from the command line
(service/migrations.py): never on a request's path. Deliveries stored before integration states existed
(decisions §14) get their first one (store/delivery_writes.py adding_integration, in service/migrations.py's unit
of work); deposit types stored before each had an item of its own get that item."""

from __future__ import annotations

from . import keys, operations, table
from .deliveries import StoredDelivery, from_summary
from .operations import Operation
from .outcomes import Contended, Gone, Taken


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
        put = {
            "TableName": table.name(),
            "Item": table.to_item(item),
            "ConditionExpression": "attribute_not_exists(PK)",
        }
        # Taken: it has its item already; Gone: the type was deleted meanwhile. Either way nothing to give.
        declared = [Operation({"Put": put}, Taken()), Operation({"ConditionCheck": exists}, Gone())]
        refused = operations.commit([op.item for op in declared], declared)
        if isinstance(refused, Contended):
            raise table.WriteFailed("a deposit type's own item", {})  # held by a write: run the migration again
        given += refused is None
    return given
