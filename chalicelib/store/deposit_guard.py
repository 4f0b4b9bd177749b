"""What keeps a deposit type from being deleted besides the products naming it (decisions §15): the deliveries
that are not final (REQUESTED, ACCEPTED) and name it (charge it, announce or collect it, or order a product whose
packaging names it, which a response's items may then charge), read from the status index."""

from ..domain.delivery import ACCEPTED, REQUESTED
from . import keys, table
from .deliveries import from_summary

OPEN = (REQUESTED, ACCEPTED)


def names(delivery: dict, basis: dict | None, deposit_id: str) -> bool:
    """Whether a delivery names the type in any of its lists, or its basis (the packaging it was ordered in)."""
    request = delivery["request"]
    lists = [request.get("deposits"), request.get("empties")] + [
        r.get("empties") for r in delivery.get("responses") or ()
    ]
    if any(entry["id"] == deposit_id for entry_list in lists for entry in entry_list or ()):
        return True
    return deposit_id in ((basis or {}).get("types") or {})


def open_delivery_names(account: str, deposit_id: str) -> bool:
    """Whether a delivery that is not final names the type: Queries of the status index, read until one does."""
    for status in OPEN:
        request = {
            "TableName": table.name(),
            "IndexName": keys.GSI1,
            "KeyConditionExpression": "GSI1PK = :pk",
            "ExpressionAttributeValues": table.values(pk=keys.deliveries_by_status_pk(account, status)),
        }
        while True:
            response = table.client().query(**request)
            for raw in response.get("Items", []):
                stored = from_summary(table.from_item(raw), None)
                if names(stored.delivery, stored.deposit_basis, deposit_id):
                    return True
            if "LastEvaluatedKey" not in response:
                break
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    return False
