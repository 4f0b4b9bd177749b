"""Standing orders (decisions §17): the standing order items, the per-customer count that bounds them, the
recorded outcome of each date, and the queue of standing orders whose placing moment has come.

A standing order item holds the document (`data`), `first_day` (the local day it was first written: earlier
dates never count), `skips` (dates still to come), `version` (every write is conditional on the one it read) and,
while something is to be done, its place in the due queue (GSI3, sharded per account like the other queues). The
outcome of each date lives in a partition per customer and standing order id, which a delete leaves in place, so
a standing order written again under the id sees the dates placed before.
"""

import datetime as dt
import uuid
from dataclasses import dataclass

from ..domain.standing_orders import MAX_PER_CUSTOMER
from ..domain.timestamps import iso
from . import keys, operations, table
from .operations import Operation
from .outcomes import Changed, Contended, Full, Gone, Stale, Taken
from .paging import Page, query_page


@dataclass(frozen=True)
class Stored:
    data: dict
    first_day: str
    skips: list[str]
    version: int
    due: str | None
    content: int | None = None  # the version whose write last changed `data` or `skips` (None: this one)

    @property
    def content_version(self) -> int:
        return self.version if self.content is None else self.content


@dataclass(frozen=True)
class Due:
    """A queue entry: a standing order whose placing moment (or look again) has come, or, with an empty customer
    and id, an account whose delivery rules changed (`recheck`)."""

    account: str
    customer_id: str
    standing_id: str
    due: str

    @property
    def recheck(self) -> bool:
        return not self.customer_id


def _stored(item: dict) -> Stored:
    content = int(item["content"]) if "content" in item else None
    return Stored(
        item["data"], item["first_day"], sorted(item.get("skips") or []), int(item["version"]), item.get("due"), content
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


def _item(account: str, customer_id: str, standing_id: str, stored: Stored) -> dict:
    item = {
        **keys.standing_order_key(account, customer_id, standing_id),
        "data": stored.data,
        "first_day": stored.first_day,
        "version": stored.version,
        "content": stored.content_version,
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
    """Delete it, conditional on the version read (Stale: it changed since `previous` was read). Its dates' outcomes
    stay: a standing order written again under the id never places them again (decisions §17)."""
    key = keys.standing_order_key(account, customer_id, standing_id)
    delete_request = {"TableName": table.name(), "Key": table.to_item(key), **_version_condition(previous)}
    return [Operation({"Delete": delete_request}, Stale()), Operation(_count_update(account, customer_id, -1))]


def unchanged_check(account: str, customer_id: str, standing_id: str, stored: Stored) -> Operation:
    """In the write that places a date: the standing order's document and skips are still as read (a skip, pause or
    replacement written meanwhile wins: Changed); its place in the queue may have moved."""
    check = {
        "TableName": table.name(),
        "Key": table.to_item(keys.standing_order_key(account, customer_id, standing_id)),
        "ConditionExpression": "content = :content",
        "ExpressionAttributeValues": table.values(content=stored.content_version),
    }
    return Operation({"ConditionCheck": check}, Changed())


def update(
    account: str, customer_id: str, standing_id: str, previous: Stored, skips: list[str], due: str | None
) -> Stored | Stale | Contended:
    """Its skips and its place in the due queue (nothing a feed reader sees), conditional on the version read."""
    content = previous.version + 1 if sorted(skips) != sorted(previous.skips) else previous.content_version
    changed = Stored(previous.data, previous.first_day, skips, previous.version + 1, due, content)
    request = {"TableName": table.name(), "Item": table.to_item(_item(account, customer_id, standing_id, changed))}
    request.update(_version_condition(previous))
    request["ConditionExpression"] = "attribute_exists(PK) AND " + request["ConditionExpression"]
    refused = operations.write(Operation({"Put": request}, Stale(), oversized=Stale()))
    return changed if refused is None else refused


# The outcome of each date.

KEPT_DAYS = 400  # a date's outcome is kept this long after the date (TTL), so no partition grows without bound
RECORDED = ("status", "delivery_ids", "left_out", "errors")


def _expires_at(date: str) -> int:
    day = dt.datetime.fromisoformat(date).replace(tzinfo=dt.timezone.utc)
    return int(day.timestamp()) + KEPT_DAYS * 86400


def records(account: str, customer_id: str, standing_id: str, first: str, last: str) -> dict[str, dict]:
    """date -> {status, delivery_ids?, left_out?, errors?} for the recorded dates from `first` to `last`."""
    partition = keys.standing_occurrence_key(account, customer_id, standing_id, "")["PK"]
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
            found[item["SK"]] = {name: item[name] for name in RECORDED if name in item}
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def recording(
    account: str,
    customer_id: str,
    standing_id: str,
    date: str,
    outcome: dict,
    now: dt.datetime,
    shown: dict | None = None,
    pinned: int | None = None,
) -> list[Operation]:
    """Record a date's outcome once: Taken when it is recorded already (another placer was first). `shown`: the
    failed date as reads show it, kept for its feed entry's `data` in the same transaction; its change is marked on
    the standing order's own item (store/feed_marks.py), which must still exist (Gone), so the feed keeps it in
    order with the standing order's other changes. `pinned`: the content version the failure was decided under,
    which the standing order must still have (Changed: a replacement may have opened the date again)."""
    key = keys.standing_occurrence_key(account, customer_id, standing_id, date)
    expires = _expires_at(date)
    item = {**key, **outcome, "at": iso(now), table.TTL_ATTRIBUTE: expires}
    put = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    operations = [Operation({"Put": put}, Taken(), rank=1)]
    if shown is not None:
        copy = {
            **keys.standing_failed_key(account, customer_id, standing_id, date),
            "data": shown,
            table.TTL_ATTRIBUTE: expires,
        }
        operations.append(Operation({"Put": {"TableName": table.name(), "Item": table.to_item(copy)}}))
        exists = {
            "TableName": table.name(),
            "Key": table.to_item(keys.standing_order_key(account, customer_id, standing_id)),
            "ConditionExpression": "attribute_exists(PK)",
        }
        if pinned is not None:
            exists["ConditionExpression"] = "content = :content"
            exists["ExpressionAttributeValues"] = table.values(content=pinned)
        operations.append(Operation({"ConditionCheck": exists}, Gone() if pinned is None else Changed()))
    return operations


def reopening(account: str, customer_id: str, standing_id: str, date: str, scope: str, key: str) -> list[Operation]:
    """In a replacement's write: a FAILED date stops counting (decisions §17: a replacement applies to dates not yet
    placed), so the replacement places it. Its outcome goes, conditional on it being FAILED (Stale otherwise: a placed
    date's outcome is never removed), and so does its placing key's answer (`scope`, `key`), which would replay the
    failure. Its `standing-order.failed` copy stays for the feed entry that reads it."""
    outcome = {
        "TableName": table.name(),
        "Key": table.to_item(keys.standing_occurrence_key(account, customer_id, standing_id, date)),
        "ConditionExpression": "#status = :failed",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": table.values(failed="FAILED"),
    }
    answer = {"TableName": table.name(), "Key": table.to_item(keys.idempotency_key(account, scope, key))}
    return [Operation({"Delete": outcome}, Stale()), Operation({"Delete": answer})]


# The queue.


def due(now: dt.datetime, limit: int) -> list[Due]:
    """Standing orders whose placing moment (or look again) has come, and accounts whose rules changed, earliest
    first, at most `limit` a shard."""
    found = table.due_items(keys.GSI3, keys.STANDING_DUE, keys.due_bound(iso(now)), limit)
    result = []
    for item in found:
        moment, account, customer_id, standing_id = item["GSI3SK"].split("#", 3)
        result.append(Due(account, customer_id, standing_id, moment))
    return result


def rechecking(account: str, now: dt.datetime) -> Operation:
    """In a write that changes the account's delivery rules: look at its standing orders again now (decisions §17:
    a placing moment the change brings forward is acted on within a minute). Each such write puts a new token."""
    item = {
        **keys.standing_recheck_key(account),
        **keys.standing_due(iso(now), account, "", ""),
        "token": uuid.uuid4().hex,
    }
    return Operation({"Put": {"TableName": table.name(), "Item": table.to_item(item)}})


def recheck_token(account: str) -> str | None:
    """The token of the account's pending look again, None when there is none."""
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.standing_recheck_key(account)), ConsistentRead=True
    )
    return response["Item"]["token"]["S"] if "Item" in response else None


def rechecked(account: str, token: str) -> None:
    """The look again is done, unless a rule changed again since `token` was read (then it stays due)."""
    delete = {
        "TableName": table.name(),
        "Key": table.to_item(keys.standing_recheck_key(account)),
        "ConditionExpression": "#token = :token",
        "ExpressionAttributeNames": {"#token": "token"},
        "ExpressionAttributeValues": table.values(token=token),
    }
    operations.write(Operation({"Delete": delete}, Stale()))  # Stale: a rule changed again, it stays due


def queued(account: str) -> list[tuple[str, str, str]]:
    """(customer id, standing order id, due) of each of the account's standing orders that has a place in the
    queue (not paused, not ended): the keys and the moment only."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
        "FilterExpression": "attribute_exists(#due)",
        "ProjectionExpression": "SK, #due",
        "ExpressionAttributeNames": {"#due": "due"},
        "ExpressionAttributeValues": table.values(pk=keys.account_pk(account), prefix="STANDING#"),
        "ConsistentRead": True,
    }
    found = []
    while True:
        response = table.client().query(**request)
        for raw in response.get("Items", []):
            item = table.from_item(raw)
            named = keys.standing_order_of(item["SK"])
            if named is not None:
                found.append((*named, item["due"]))
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def look_now(account: str, customer_id: str, standing_id: str, now: dt.datetime) -> None:
    """Move a queued standing order to the front of the queue (its turn recomputes its moments), and its version on,
    so a turn that computed its next moment from the rules before is not written over this (Stale). One due already
    (a turn may be placing it now, with the rules before) only has its version moved on: that turn's next moment is
    refused, and it stays due for the next run to compute. Nothing when it is no longer queued."""
    moment = iso(now)
    queue = keys.standing_due(moment, account, customer_id, standing_id)
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.standing_order_key(account, customer_id, standing_id)),
        "UpdateExpression": "SET #due = :due, GSI3PK = :pk, GSI3SK = :sk ADD #version :one",
        "ConditionExpression": "attribute_exists(#due) AND #due > :due",
        "ExpressionAttributeNames": {"#due": "due", "#version": "version"},
        "ExpressionAttributeValues": table.values(due=moment, pk=queue["GSI3PK"], sk=queue["GSI3SK"], one=1),
    }
    # Both tried in this order whatever the queue's index showed the caller: it lags, and a turn may have just
    # queued a later moment from the rules before (the first write moves it; a due one refuses it and is bumped).
    if operations.write(Operation({"Update": update}, Stale())) is None:  # Stale: not queued, or due already
        return
    update["UpdateExpression"] = "ADD #version :one"
    update["ConditionExpression"] = "attribute_exists(#due)"
    update["ExpressionAttributeNames"] = {"#due": "due", "#version": "version"}
    update["ExpressionAttributeValues"] = table.values(one=1)
    operations.write(Operation({"Update": update}, Stale()))  # Stale: not queued; Contended: a write holds it
