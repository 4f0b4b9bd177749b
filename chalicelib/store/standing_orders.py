"""Standing orders (decisions §17): the standing order items, the per-customer count that bounds them, the
recorded outcome of each date, and the queue of standing orders whose placing moment has come.

A standing order item holds the document (`data`), `born` (a token per creation, naming its dates' partition),
`first_day` (the local day it was first written: earlier dates never count), `skips` (dates still to come),
`version` (every write is conditional on the one it read) and, while something is to be done, its place in the
due queue (GSI3, sharded per account like the other queues).
"""

import datetime as dt
import uuid
from dataclasses import dataclass

from ..domain.standing_orders import MAX_PER_CUSTOMER
from ..domain.timestamps import iso
from . import keys, operations, table
from .operations import Operation
from .outcomes import Contended, Full, Stale, Taken
from .paging import Page, query_page


@dataclass(frozen=True)
class Stored:
    data: dict
    born: str
    first_day: str
    skips: list[str]
    version: int
    due: str | None


@dataclass(frozen=True)
class Due:
    account: str
    customer_id: str
    standing_id: str
    due: str


def _stored(item: dict) -> Stored:
    return Stored(
        item["data"],
        item["born"],
        item["first_day"],
        sorted(item.get("skips") or []),
        int(item["version"]),
        item.get("due"),
    )


def get(account: str, customer_id: str, standing_id: str) -> Stored | None:
    response = table.client().get_item(
        TableName=table.name(),
        Key=table.to_item(keys.standing_order_key(account, customer_id, standing_id)),
        ConsistentRead=True,
    )
    return _stored(table.from_item(response["Item"])) if "Item" in response else None


def list_page(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    page = query_page(
        account,
        f"standing-orders:{customer_id}",
        limit,
        cursor,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues=table.values(
            pk=keys.account_pk(account), prefix=keys.standing_orders_prefix(customer_id)
        ),
    )
    return Page([item["data"] for item in page.items], page.cursor)


def new_born() -> str:
    return uuid.uuid4().hex[:16]


def _item(account: str, customer_id: str, standing_id: str, stored: Stored) -> dict:
    item = {
        **keys.standing_order_key(account, customer_id, standing_id),
        "data": stored.data,
        "born": stored.born,
        "first_day": stored.first_day,
        "version": stored.version,
    }
    if stored.skips:
        item["skips"] = list(stored.skips)
    if stored.due is not None:
        item["due"] = stored.due
        item.update(keys.standing_due(stored.due, account, customer_id, standing_id))
    return item


def _version_condition(previous: Stored | None) -> dict:
    if previous is None:
        return {"ConditionExpression": "attribute_not_exists(PK)"}
    return {
        "ConditionExpression": "version = :version",
        "ExpressionAttributeValues": table.values(version=previous.version),
    }


def _count_update(account: str, customer_id: str, step: int) -> dict:
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.standing_count_key(account, customer_id)),
        "UpdateExpression": "ADD standing_orders :step",
        "ExpressionAttributeValues": table.values(step=step),
    }
    if step > 0:
        update["ConditionExpression"] = "attribute_not_exists(standing_orders) OR standing_orders < :most"
        update["ExpressionAttributeValues"] = table.values(step=step, most=MAX_PER_CUSTOMER)
    return {"Update": update}


def putting(
    account: str, customer_id: str, standing_id: str, stored: Stored, previous: Stored | None
) -> list[Operation]:
    """Create or replace, conditional on the version read (`previous`, None: it must not exist: Stale otherwise); a
    creation counts against the customer's MAX_PER_CUSTOMER (Full) in the same transaction."""
    put_request = {"TableName": table.name(), "Item": table.to_item(_item(account, customer_id, standing_id, stored))}
    put_request.update(_version_condition(previous))
    operations = [Operation({"Put": put_request}, Stale())]
    if previous is None:
        operations.append(Operation(_count_update(account, customer_id, 1), Full(), rank=1))
    return operations


def deleting(account: str, customer_id: str, standing_id: str, previous: Stored) -> list[Operation]:
    """Delete it, conditional on the version read (Stale: it changed since `previous` was read)."""
    key = keys.standing_order_key(account, customer_id, standing_id)
    delete_request = {"TableName": table.name(), "Key": table.to_item(key), **_version_condition(previous)}
    return [Operation({"Delete": delete_request}, Stale()), Operation(_count_update(account, customer_id, -1))]


def update(
    account: str, customer_id: str, standing_id: str, previous: Stored, skips: list[str], due: str | None
) -> Stored | Stale | Contended:
    """Its skips and its place in the due queue (nothing a feed reader sees), conditional on the version read."""
    changed = Stored(previous.data, previous.born, previous.first_day, skips, previous.version + 1, due)
    request = {"TableName": table.name(), "Item": table.to_item(_item(account, customer_id, standing_id, changed))}
    request.update(_version_condition(previous))
    request["ConditionExpression"] = "attribute_exists(PK) AND " + request["ConditionExpression"]
    refused = operations.write(Operation({"Put": request}, Stale(), oversized=Stale()))
    return changed if refused is None else refused


# The outcome of each date.

KEPT_DAYS = 400  # a date's outcome is kept this long after the date (TTL), so no partition grows without bound


def _expires_at(date: str) -> int:
    day = dt.datetime.fromisoformat(date).replace(tzinfo=dt.timezone.utc)
    return int(day.timestamp()) + KEPT_DAYS * 86400


def records(account: str, customer_id: str, standing_id: str, born: str, first: str, last: str) -> dict[str, dict]:
    """date -> {status, delivery_ids?, errors?} for the recorded dates from `first` to `last`."""
    partition = keys.standing_occurrence_key(account, customer_id, standing_id, born, "")["PK"]
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND SK BETWEEN :first AND :last",
        "ExpressionAttributeValues": table.values(pk=partition, first=first, last=last),
        "ConsistentRead": True,
    }
    found: dict[str, dict] = {}
    while True:
        response = table.client().query(**request)
        for raw in response.get("Items", []):
            item = table.plain(table.from_item(raw))
            found[item["SK"]] = {name: item[name] for name in ("status", "delivery_ids", "errors") if name in item}
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def recording(
    account: str,
    customer_id: str,
    standing_id: str,
    born: str,
    date: str,
    outcome: dict,
    now: dt.datetime,
    shown: dict | None = None,
) -> list[Operation]:
    """Record a date's outcome once: Taken when it is recorded already (another placer was first). `shown`: the
    failed date as reads show it, kept for its feed entry's `data` in the same transaction."""
    key = keys.standing_occurrence_key(account, customer_id, standing_id, born, date)
    expires = _expires_at(date)
    item = {**key, **outcome, "at": iso(now), table.TTL_ATTRIBUTE: expires}
    put = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    operations = [Operation({"Put": put}, Taken())]
    if shown is not None:
        copy = {
            **keys.standing_failed_key(account, customer_id, standing_id, date),
            "data": shown,
            table.TTL_ATTRIBUTE: expires,
        }
        operations.append(Operation({"Put": {"TableName": table.name(), "Item": table.to_item(copy)}}))
    return operations


# The queue.


def due(now: dt.datetime, limit: int) -> list[Due]:
    """Standing orders whose placing moment (or look again) has come, earliest first, at most `limit` a shard."""
    found = table.due_items(keys.GSI3, keys.STANDING_DUE, keys.due_bound(iso(now)), limit)
    result = []
    for item in found:
        moment, account, customer_id, standing_id = item["GSI3SK"].split("#", 3)
        result.append(Due(account, customer_id, standing_id, moment))
    return result
