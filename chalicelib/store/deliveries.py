"""Deliveries in the single table.

Each delivery is two items:
- the summary, `keys.delivery_key`: `body` = the delivery as the API shows it except `request.items`, as its
  JSON text (store/rendered.py; `doc`, a map, on items written before), plus `status`, `customer_id` and
  `version` (bumped by every change; every change is conditional on it). GSI1 is
  keyed by status and GSI2 by customer, both newest first, so a list page reads only the deliveries it shows
  and never pays for their items;
- the request items, `keys.delivery_items_key`: immutable, read only for the single-delivery view.
Ids come from a per-account counter.

The integration state (decisions §14) lives on the summary beside `body`, not in it: `integration`, its JSON text
as supplier reads show it (one string attribute: a list page appends it without parsing; states stored before as
a map read the same), and `integration_since` (when it entered its status), which also keys GSI3, the worklist of
each state oldest first.
The account's counts of PENDING and FAILED deliveries (`keys.integration_counts_key`) change in the same
transaction as the states, each conditional on the delivery's version, so a write is counted exactly once.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from botocore.exceptions import ClientError

from ..domain.delivery_summary import without_items
from ..domain.deposits import with_deposits
from ..domain.rendering import json_text
from ..domain.field_order import DELIVERY
from ..domain.integration_status import state_text, supplier_text
from ..lazy import lazy
from . import batch, keys, rendered, table
from .paging import Page, query_page

if TYPE_CHECKING:
    from ..domain.feed import Change
    from .idempotency import Completion
    from .outcomes import Contended, LostClaim, ProductsGone, Stale, Taken, TooLarge

# Writes only: a cold read loads none of them.
feed = lazy("chalicelib.store.feed")
products = lazy("chalicelib.store.products")
feed_changes = lazy("chalicelib.domain.feed")
outcomes = lazy("chalicelib.store.outcomes")
idempotency = lazy("chalicelib.store.idempotency")

COUNTER = "DELIVERY"
LEGACY = "doc"  # the summary's map before `body`
DEPOSIT_BASIS = "deposit_basis"  # JSON text: what the delivery's deposits are counted from (decisions §15)
INTEGRATION = "integration"  # the state, beside the document (never in it: customers' lists read the same text)
_READ_NAMES = {"#body": rendered.BODY, "#doc": LEGACY}


@dataclass(frozen=True)
class StoredDelivery:
    delivery: dict  # as the API shows it; request.items only when read in full
    version: int
    integration: dict | None = None  # None: stored before integration states existed (decisions §14)
    integration_since: str | None = None
    feed_head: feed.Head | None = None  # the account's feed head, when read with the delivery
    deposit_basis: dict | None = None  # what its deposits are counted from (domain/deposits.py), beside the document


@dataclass(frozen=True)
class IntegrationWrite:
    """A new integration state to store with a write: `since` orders the state's worklist, `counts` is what the
    write adds to the account's counts (`{"pending": 1, "failed": -1}`)."""

    state: dict
    since: str
    counts: dict


@dataclass(frozen=True)
class IntegrationCounts:
    pending: int
    failed: int
    oldest_pending: tuple[int, str] | None  # (delivery id, since)


def allocate_ids(account: str, count: int) -> list[int]:
    """`count` new ids, unique in the account: one UpdateItem whatever the count."""
    response = table.client().update_item(
        TableName=table.name(),
        Key=table.to_item(keys.counter_key(account, COUNTER)),
        UpdateExpression="ADD #value :n",
        ExpressionAttributeNames={"#value": "value"},
        ExpressionAttributeValues=table.values(n=count),
        ReturnValues="UPDATED_NEW",
    )
    last = int(response["Attributes"]["value"]["N"])
    return list(range(last - count + 1, last + 1))


def _summary_attributes(account: str, delivery: dict) -> dict:
    return {
        rendered.BODY: rendered.pack(without_items(delivery), DELIVERY),
        "status": delivery["status"],
        **keys.delivery_status_gsi(account, delivery["status"], delivery["id"]),
    }


def _integration_attributes(account: str, delivery_id: int, write: IntegrationWrite) -> dict:
    return {
        INTEGRATION: state_text(write.state),
        "integration_since": write.since,
        **keys.delivery_integration_gsi(account, write.state["status"], write.since, delivery_id),
    }


def _counts_operation(account: str, delivery_id: int, counts: dict) -> dict | None:
    """The transaction item that adds `counts` to the account's integration counts, in the shard of `delivery_id`
    (so writes of other deliveries rarely share it); None when nothing changes. It is unconditional: the
    delivery's own conditional item in the same transaction makes it count once."""
    counts = {name: n for name, n in counts.items() if n}
    if not counts:
        return None
    names = {f"#{name}": name for name in counts}
    return {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.integration_counts_key(account, delivery_id % keys.INTEGRATION_COUNT_SHARDS)),
            "UpdateExpression": "ADD " + ", ".join(f"#{name} :{name}" for name in counts),
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": table.values(**counts),
        }
    }


def _create_operations(
    account: str, delivery: dict, integration: IntegrationWrite | None, basis: dict | None = None
) -> list[dict]:
    """Transaction items that create a delivery (given in full, with its request items)."""
    delivery_id = delivery["id"]
    customer_id = delivery["request"].get("customer_id")
    summary = {
        **keys.delivery_key(account, delivery_id),
        **_summary_attributes(account, delivery),
        "customer_id": customer_id,
        "version": 0,
    }
    if integration is not None:
        summary.update(_integration_attributes(account, delivery_id, integration))
    if basis is not None:  # beside the document, never in it: lists do not show deposits (decisions §15)
        summary[DEPOSIT_BASIS] = json_text(basis)
    if customer_id is not None:
        summary.update(keys.delivery_customer_gsi(account, customer_id, delivery_id))
    items = {**keys.delivery_items_key(account, delivery_id), "items": delivery["request"]["items"]}
    return [
        {"Put": {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}}
        for item in (summary, items)
    ]


def place(
    account: str,
    deliveries: list[dict],
    used_products: list[str],
    claim: Completion | None = None,
    integration: IntegrationWrite | None = None,
    *,
    changes: list[Change] | None = None,
    now: dt.datetime,
    bases: list[dict | None] | None = None,
) -> None | Stale | ProductsGone | LostClaim | TooLarge | Contended:
    """Create the deliveries of one order, in one transaction with the "used" flags of their products, the
    integration counts, the Idempotency-Key answer and their feed entries (which make their events); None when
    written. `integration` is each new delivery's state, its `counts` those of the whole order."""
    bases = bases or [None] * len(deliveries)
    operations = [
        op for delivery, basis in zip(deliveries, bases) for op in _create_operations(account, delivery, integration, basis)
    ]
    counts = _counts_operation(account, deliveries[0]["id"], integration.counts) if integration is not None else None
    operations += [counts] if counts is not None else []
    first_product = len(operations)
    operations += [products.mark_used_operation(account, product_id) for product_id in used_products]
    if changes is None:
        changes = [feed_changes.delivery_change(feed_changes.ChangeType.DELIVERY_REQUESTED, delivery) for delivery in deliveries]
    outcome = _transact(account, operations, claim, changes, now)
    if not isinstance(outcome, list):
        return outcome
    codes = outcome
    product_codes = codes[first_product : first_product + len(used_products)]
    gone = frozenset(pid for pid, code in zip(used_products, product_codes) if code == table.CONDITION_FAILED)
    if gone:
        return outcomes.ProductsGone(gone)
    if table.CONDITION_FAILED in codes[: len(deliveries) * 2]:
        return outcomes.Stale()
    if table.TRANSACTION_CONFLICT in codes:
        return outcomes.Contended()
    raise RuntimeError(f"placing the order failed: {codes}")


def _stored(summary: dict, items: list | None) -> StoredDelivery:
    """The delivery of a summary item; read in full (with its items), with its `deposits` (decisions §15)."""
    delivery = rendered.document(summary, LEGACY)
    basis = json.loads(summary[DEPOSIT_BASIS]) if DEPOSIT_BASIS in summary else None
    if items is not None:
        delivery = with_deposits({**delivery, "request": {**delivery["request"], "items": items}}, basis)
    return StoredDelivery(
        delivery, int(summary["version"]), _state(summary), summary.get("integration_since"), deposit_basis=basis
    )


def _state(summary: dict) -> dict | None:
    """The integration state of a decoded summary: its stored text parsed, or a map stored before the text."""
    state = summary.get(INTEGRATION)
    return json.loads(state) if isinstance(state, str) else state


def get(account: str, delivery_id: int, consistent: bool = False, with_feed_head: bool = False) -> StoredDelivery | None:
    """The delivery in full: summary and items in one BatchGetItem; `with_feed_head`: the account's feed head
    too (consistent), so a write that follows needs no read of its own."""
    summary_key = keys.delivery_key(account, delivery_id)
    items_key = keys.delivery_items_key(account, delivery_id)
    head_key = feed.head_key(account) if with_feed_head else None
    found = batch.get_items([summary_key, items_key] + ([head_key] if head_key else []), consistent=consistent)
    summary = batch.pick(found, summary_key)
    if summary is None:
        return None
    items = (batch.pick(found, items_key) or {}).get("items", [])
    stored = _stored(summary, items)
    if head_key is not None:
        stored = dataclasses.replace(stored, feed_head=feed.head_of(batch.pick(found, head_key)))
    return stored


def _update_operation(
    account: str, delivery_id: int, expected_version: int, delivery: dict | None, integration: IntegrationWrite | None
) -> dict:
    """A transaction item that stores the changed delivery and/or its new integration state if nobody changed
    the delivery since `expected_version`.

    The status index moves with the status, the integration worklist with the state, in the same write.
    """
    changes = {}
    if delivery is not None:
        attributes = _summary_attributes(account, delivery)
        # The document as its JSON text; a summary stored before as a map (`doc`) loses the map (REMOVE below).
        changes.update(
            {rendered.BODY: attributes[rendered.BODY], "status": attributes["status"], "GSI1PK": attributes["GSI1PK"]}
        )
    if integration is not None:
        changes.update(_integration_attributes(account, delivery_id, integration))
    names = {f"#a{i}": name for i, name in enumerate(changes)}
    values = {f"a{i}": value for i, value in enumerate(changes.values())}
    sets = ", ".join(f"#a{i} = :a{i}" for i in range(len(changes)))
    return {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.delivery_key(account, delivery_id)),
            "UpdateExpression": f"SET {sets}, #version = :next" + (" REMOVE #doc" if delivery is not None else ""),
            "ConditionExpression": "#version = :expected",
            "ExpressionAttributeNames": {**names, "#version": "version", **({"#doc": LEGACY} if delivery else {})},
            "ExpressionAttributeValues": table.values(**values, next=expected_version + 1, expected=expected_version),
        }
    }


def change(
    account: str,
    delivery: dict,
    expected_version: int,
    claim: Completion | None = None,
    integration: IntegrationWrite | None = None,
    *,
    change: Change | None = None,
    now: dt.datetime,
    head: feed.Head | None = None,
    also: dict | None = None,
) -> StoredDelivery | Stale | LostClaim | TooLarge:
    """Store the changed delivery if nobody changed it since `expected_version`; with its new integration state
    and counts, its Idempotency-Key answer and its feed entry (and the event it makes) in the same write. Lost to
    another write (its version or a transaction): Stale. `also`: one more transaction item that belongs to the
    change (a receive's move of the customer's deposit balances)."""
    change = change or feed_changes.delivery_change(feed_changes.STATUS_CHANGE[delivery["status"]], delivery)
    return _write(account, delivery["id"], expected_version, delivery, integration, claim, [change], now, head, also=also)


def set_integration(
    account: str,
    stored: StoredDelivery,
    integration: IntegrationWrite,
    *,
    changes: list[Change] = (),
    now: dt.datetime,
    head: feed.Head | None = None,
) -> StoredDelivery | Stale | TooLarge:
    """Store a new integration state (and its counts and the feed entries of `changes`) if nobody changed the
    delivery since it was read. `head`: the feed head read with the delivery."""
    return _write(
        account, stored.delivery["id"], stored.version, None, integration, None, list(changes), now, head, stored.delivery
    )


def _write(
    account, delivery_id, expected_version, delivery, integration, claim, changes, now, head, unchanged=None, also=None
):
    update = _update_operation(account, delivery_id, expected_version, delivery, integration)
    written = StoredDelivery(
        delivery if delivery is not None else unchanged,
        expected_version + 1,
        integration.state if integration is not None else None,
        integration.since if integration is not None else None,
        deposit_basis=None,
    )
    counts = _counts_operation(account, delivery_id, integration.counts) if integration is not None else None
    others = [counts] if counts is not None else []
    others += [also] if also is not None else []
    if not others and claim is None and not changes:
        try:
            table.client().update_item(**update["Update"])
        except ClientError as error:
            if table.is_conditional_failure(error) or table.is_transaction_conflict(error):
                return outcomes.Stale()
            if table.is_too_large(error):
                return outcomes.TooLarge()
            raise
        return written
    outcome = _transact(account, [update] + others, claim, changes, now, head)
    if outcome is None:
        return written
    if isinstance(outcome, list):
        if outcome[0] == table.CONDITION_FAILED or table.TRANSACTION_CONFLICT in outcome:
            return outcomes.Stale()
        raise RuntimeError(f"changing the delivery failed: {outcome}")
    return outcome


def _transact(
    account: str,
    operations: list[dict],
    claim: Completion | None,
    changes: list[Change],
    now: dt.datetime,
    head: feed.Head | None = None,
) -> None | list[str] | LostClaim | TooLarge:
    """Run a transaction (with the feed entries of `changes`) whose last own item records the Idempotency-Key
    answer, if any: None when written, LostClaim when only the claim's condition failed, else the per-item
    cancellation codes to read."""
    try:
        answer = [idempotency.complete_operation(claim)] if claim is not None else []
        feed.commit(account, operations + answer, changes, now, head)
    except ClientError as error:
        codes = table.cancellation_codes(error)
        if not codes:
            if table.is_too_large(error):
                return outcomes.TooLarge()
            raise
        if claim is not None and codes[-1] == table.CONDITION_FAILED and table.CONDITION_FAILED not in codes[:-1]:
            return outcomes.LostClaim()
        return codes[: len(operations)]
    return None


def refresh(account: str, stored: StoredDelivery) -> StoredDelivery | None:
    """The delivery as it is now, read consistently; only its summary is read again (items never change)."""
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.delivery_key(account, stored.delivery["id"])), ConsistentRead=True
    )
    if "Item" not in response:
        return None
    return _stored(table.from_item(response["Item"]), stored.delivery["request"].get("items"))


def _summary_text(item: dict) -> str:
    """A summary as the low-level client answers it, as the JSON a list shows: no parsing, no re-rendering."""
    return rendered.low_level_text(item, DELIVERY, LEGACY)


_REQUESTED_TEXT = state_text(None)


def _low_level_state_text(item: dict) -> str:
    """The integration state's text of a low-level item, without botocore's deserializer: the stored text, or
    rendered from a map of strings stored before it."""
    state = item.get(INTEGRATION)
    if state is None:
        return _REQUESTED_TEXT
    if "S" in state:
        return state["S"]
    return state_text({name: value["S"] for name, value in state["M"].items()})


def _supplier_text(item: dict) -> str:
    """A summary as supplier lists show it: its stored JSON text with the integration state's text (kept beside
    the summary's, never in it, so customers' lists of the same text never show it) appended."""
    return supplier_text(_summary_text(item), _low_level_state_text(item))


def _listed(
    account: str,
    query: str,
    limit: int,
    cursor: str | None,
    pk: str,
    index: str | None,
    forward: bool,
    supplier: bool,
    key_of: Callable[[int], dict] | None,
) -> Page:
    """A page of summaries as their JSON text, from one partition of the table or an index; on supplier pages
    with the integration state. Only the document (and the state) are read: every attribute of a Query's items
    costs botocore a parse. `key_of` gives a delivery's keys in this partition from its id, so the cursor is made
    from the last summary's id; without it (keys not made from the id alone) the keys are read too."""
    key = f"{index}PK" if index else "PK"
    index_keys = f", {index}PK, {index}SK" if index else ""
    read_keys = "" if key_of is not None else f"PK, SK{index_keys}, "
    decode = _supplier_text if supplier else _summary_text
    return query_page(
        account,
        query,
        limit,
        cursor,
        index=index,
        decode=decode,
        last_key=(lambda text: table.to_item(key_of(int(rendered.id_of(text))))) if key_of is not None else None,
        KeyConditionExpression=f"{key} = :pk",
        ExpressionAttributeValues=table.values(pk=pk),
        ProjectionExpression=f"{read_keys}#body, #doc" + (", #integration" if supplier else ""),
        ExpressionAttributeNames={**_READ_NAMES, **({"#integration": INTEGRATION} if supplier else {})},
        ScanIndexForward=forward,
    )


def list_page(account: str, limit: int, cursor: str | None, status: str | None = None) -> Page:
    """Newest first, as the JSON texts supplier reads show; with a status, only deliveries in it (read from the
    status index)."""
    if status is None:
        pk = keys.deliveries_pk(account)
        return _listed(account, "deliveries", limit, cursor, pk, None, False, True, lambda i: keys.delivery_key(account, i))
    pk = keys.deliveries_by_status_pk(account, status)
    return _listed(
        account, f"deliveries?status={status}", limit, cursor, pk, keys.GSI1, False, True,
        lambda i: {**keys.delivery_key(account, i), **keys.delivery_status_gsi(account, status, i)},
    )


def list_customer_page(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    """One customer's deliveries, newest first, as JSON texts."""
    pk = keys.deliveries_by_customer_pk(account, customer_id)
    return _listed(
        account, f"customer-deliveries?customer={customer_id}", limit, cursor, pk, keys.GSI2, False, False,
        lambda i: {**keys.delivery_key(account, i), **keys.delivery_customer_gsi(account, customer_id, i)},
    )


def list_integration_page(account: str, status: str, limit: int, cursor: str | None) -> Page:
    """The deliveries in one integration state, in the order they entered it (oldest first), as the JSON texts
    supplier reads show: full pages from the state's own index partition, no filter. Its index key holds when the
    delivery entered the state, which the summary does not show, so the keys are read."""
    pk = keys.deliveries_by_integration_pk(account, status)
    return _listed(account, f"deliveries?integration={status}", limit, cursor, pk, keys.GSI3, True, True, None)


def integration_counts(account: str, oldest_of: str) -> IntegrationCounts:
    """The account's counts (its shards summed, read in one TransactGetItems: one serialisable snapshot, so the sum
    is exact) and the oldest delivery of state `oldest_of` (one Query of its index partition, Limit 1)."""
    counts = {"pending": 0, "failed": 0}
    for shard in table.read_together(keys.integration_counts_keys(account)):
        for name in counts:
            counts[name] += int(shard.get(name, 0))
    oldest = table.first_in_index(keys.GSI3, keys.deliveries_by_integration_pk(account, oldest_of))
    first = _stored(oldest, None) if oldest is not None else None
    return IntegrationCounts(
        int(counts.get("pending", 0)),
        int(counts.get("failed", 0)),
        (int(first.delivery["id"]), first.integration_since) if first is not None else None,
    )


def without_integration(account: str, limit: int, start: dict | None = None) -> tuple[list[StoredDelivery], dict | None]:
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
    return [_stored(table.from_item(item), None) for item in response.get("Items", [])], response.get("LastEvaluatedKey")


def add_integration(account: str, stored: StoredDelivery, integration: IntegrationWrite, now: dt.datetime) -> None | Taken:
    """Give a delivery stored before integration states its first one, counted; Taken when it has one already
    (a second run of the migration, or a PUT in between). The version moves too, so a PUT or a customer change
    that read the delivery without a state writes nothing over it and is evaluated again (counted once)."""
    delivery_id = stored.delivery["id"]
    attributes = _integration_attributes(account, delivery_id, integration)
    names = {f"#a{i}": name for i, name in enumerate(attributes)}
    values = {f"a{i}": value for i, value in enumerate(attributes.values())}
    update = {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.delivery_key(account, delivery_id)),
            "UpdateExpression": "SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(attributes))) + " ADD #version :one",
            "ConditionExpression": "attribute_exists(PK) AND attribute_not_exists(#integration)",
            "ExpressionAttributeNames": {**names, "#integration": "integration", "#version": "version"},
            "ExpressionAttributeValues": table.values(**values, one=1),
        }
    }
    counts = _counts_operation(account, delivery_id, integration.counts)
    for attempt in range(10):  # a conflict means another write held the counts for a moment
        # No feed entry: a GET showed PENDING before (a missing state reads PENDING) and shows it after.
        outcome = _transact(account, [update] + ([counts] if counts is not None else []), None, [], now)
        if outcome is None:
            return None
        if isinstance(outcome, list) and outcome[0] == table.CONDITION_FAILED:
            return outcomes.Taken()
        if not (isinstance(outcome, list) and table.TRANSACTION_CONFLICT in outcome):
            break
        time.sleep(0.01 * 2**attempt)
    raise RuntimeError(f"adding the integration state failed: {outcome}")
