"""The statement of a customer's balances (decisions §15; domain/deposit_statement.py): one record item per move,
put in the move's own transaction, so the counts of the records add up to the balances whatever runs at once.

A record's sort key is the customer's prefix, the time of the move, then a tie-breaker (the wall clock in
nanoseconds and a random part), so a Query reads the records newest first and a new record never sorts behind
a page already read. A page is counted in movements (one per type a record moved): the cursor names the record
to resume in and how many of its movements were shown.
"""

import datetime as dt
import time
import uuid

from ..domain.deposit_statement import movements_of
from ..domain.timestamps import iso
from . import cursor as cursors
from . import keys, table
from .operations import Operation
from .paging import Page

HIGHEST = "~"  # sorts after every character of a sort key (ids are [a-zA-Z0-9_-])


def record_operation(
    account: str,
    customer_id: str,
    now: dt.datetime,
    moves: dict[str, dict],
    delivery_id: int | None = None,
    message: str | None = None,
) -> Operation:
    """The Put of one record: `moves` {deposit id: {"name", "price", "count"}}, a receive's delivery id or an
    adjustment's message (its key is new: its condition fails only for a fault)."""
    at = iso(now)
    sort_key = f"{keys.deposit_movements_prefix(customer_id)}{at}#{time.time_ns():020d}{uuid.uuid4().hex[:8]}"
    item = {
        "PK": keys.account_pk(account),
        "SK": sort_key,
        "at": at,
        "moves": moves,
        "delivery_id": delivery_id,
        "message": message,
    }
    put = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    return Operation({"Put": put})


def read_page(account: str, customer_id: str, deposit: str | None, limit: int, cursor: str | None, reader: str) -> Page:
    """A page of the customer's movements, newest first (only `deposit`'s when given), as `reader` (the route's
    role) pages them. Raises BadCursor."""
    query = f"deposit-movements:{reader}:{customer_id}:{deposit or ''}"
    start = cursors.decode(account, query, cursor) if cursor else None
    prefix = keys.deposit_movements_prefix(customer_id)
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND SK BETWEEN :low AND :high",
        "ExpressionAttributeValues": table.values(
            pk=keys.account_pk(account), low=prefix, high=start["sk"] if start else prefix + HIGHEST
        ),
        "ScanIndexForward": False,
        "ConsistentRead": True,
    }
    if deposit is not None:
        request["FilterExpression"] = "attribute_exists(#m.#d)"
        request["ExpressionAttributeNames"] = {"#m": "moves", "#d": deposit}
    shown: list[dict] = []
    while True:
        response = table.client().query(Limit=limit + 1, **request)
        for raw in response.get("Items", []):
            record = table.from_item(raw)
            first = start["skip"] if start and record["SK"] == start["sk"] else 0
            for index, movement in enumerate(movements_of(record, deposit)[first:], start=first):
                if len(shown) == limit:
                    return Page(shown, cursors.encode(account, query, {"sk": record["SK"], "skip": index}))
                shown.append(movement)
        if "LastEvaluatedKey" not in response:
            return Page(shown, None)
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
