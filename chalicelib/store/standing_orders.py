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

from botocore.exceptions import ClientError

from ..domain.feed import Change
from ..domain.standing_orders import MAX_PER_CUSTOMER
from ..domain.timestamps import iso
from . import feed, keys, table
from .outcomes import Contended, Refusal, Stale, Taken
from .paging import Page, query_page


@dataclass(frozen=True)
class Full(Refusal):
    """The customer already has MAX_PER_CUSTOMER standing orders."""


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


def _refusal(error: ClientError, operations: list[dict], item_key: dict, count_key: dict | None):
    reasons = table.cancellation_reasons(error, operations)
    if count_key is not None and reasons.get(table.key_of(count_key)) == table.CONDITION_FAILED:
        return Full()
    if reasons.get(table.key_of(item_key)) == table.CONDITION_FAILED:
        return Stale()
    if table.TRANSACTION_CONFLICT in reasons.values():
        return Contended()  # another write held the count or the item for a moment
    raise error


def put(
    account: str,
    customer_id: str,
    standing_id: str,
    stored: Stored,
    previous: Stored | None,
    change: Change,
    now: dt.datetime,
) -> Stored | Stale | Contended | Full:
    """Create or replace, conditional on the version read (`previous`, None: it must not exist); a creation
    counts against the customer's MAX_PER_CUSTOMER in the same transaction."""
    key = keys.standing_order_key(account, customer_id, standing_id)
    put_request = {"TableName": table.name(), "Item": table.to_item(_item(account, customer_id, standing_id, stored))}
    put_request.update(_version_condition(previous))
    operations = [{"Put": put_request}]
    count_key = None
    if previous is None:
        count_key = keys.standing_count_key(account, customer_id)
        operations.append(_count_update(account, customer_id, 1))
    try:
        feed.commit(account, operations, [change], now)
    except ClientError as error:
        return _refusal(error, operations, key, count_key)
    return stored


def delete(account: str, customer_id: str, standing_id: str, previous: Stored, change: Change, now: dt.datetime):
    """None, or Stale when it changed since `previous` was read (Contended: held for a moment)."""
    key = keys.standing_order_key(account, customer_id, standing_id)
    delete_request = {"TableName": table.name(), "Key": table.to_item(key), **_version_condition(previous)}
    operations = [{"Delete": delete_request}, _count_update(account, customer_id, -1)]
    try:
        feed.commit(account, operations, [change], now)
    except ClientError as error:
        return _refusal(error, operations, key, None)
    return None


def update(
    account: str, customer_id: str, standing_id: str, previous: Stored, skips: list[str], due: str | None
) -> Stored | Stale | Contended:
    """Its skips and its place in the due queue (nothing a feed reader sees), conditional on the version read."""
    changed = Stored(previous.data, previous.born, previous.first_day, skips, previous.version + 1, due)
    request = {"TableName": table.name(), "Item": table.to_item(_item(account, customer_id, standing_id, changed))}
    request.update(_version_condition(previous))
    request["ConditionExpression"] = "attribute_exists(PK) AND " + request["ConditionExpression"]
    try:
        table.client().put_item(**request)
    except ClientError as error:
        if table.is_transaction_conflict(error):
            return Contended()
        return table.refusal(error, Stale(), Stale())
    return changed


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


def record(
    account: str,
    customer_id: str,
    standing_id: str,
    born: str,
    date: str,
    outcome: dict,
    changes: list[Change],
    now: dt.datetime,
    shown: dict | None = None,
) -> None | Taken:
    """Record a date's outcome once: Taken when it is recorded already (another placer was first). `shown`: the
    failed date as reads show it, kept for its feed entry's `data` in the same transaction."""
    key = keys.standing_occurrence_key(account, customer_id, standing_id, born, date)
    expires = _expires_at(date)
    item = {**key, **outcome, "at": iso(now), table.TTL_ATTRIBUTE: expires}
    put = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    try:
        if changes:
            operations = [{"Put": put}]
            if shown is not None:
                copy = {
                    **keys.standing_failed_key(account, customer_id, standing_id, date),
                    "data": shown,
                    table.TTL_ATTRIBUTE: expires,
                }
                operations.append({"Put": {"TableName": table.name(), "Item": table.to_item(copy)}})
            feed.commit(account, operations, changes, now)
        else:  # a placed date: one plain write (a transaction costs twice)
            table.client().put_item(**put)
    except ClientError as error:
        if table.is_conditional_failure(error) or table.CONDITION_FAILED in table.cancellation_codes(error):
            return Taken()
        raise
    return None


# The queue.


def due(now: dt.datetime, limit: int) -> list[Due]:
    """Standing orders whose placing moment (or look again) has come, earliest first, at most `limit` a shard."""
    found = table.due_items(keys.GSI3, keys.STANDING_DUE, keys.due_bound(iso(now)), limit)
    result = []
    for item in found:
        moment, account, customer_id, standing_id = item["GSI3SK"].split("#", 3)
        result.append(Due(account, customer_id, standing_id, moment))
    return result
