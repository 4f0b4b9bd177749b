"""Deliveries in the single table, two items each:
- the summary (`keys.delivery_key`): `body`, the delivery as the API shows it but `request.items`, as JSON text
  (store/rendered.py; `doc`, a map, on items written before), with `status`, `customer_id` and `version` (bumped
  by every change, each conditional on it). GSI1 (by status) and GSI2 (by customer), newest first, let a list page
  read only the deliveries it shows, never their items;
- the request items (`keys.delivery_items_key`), with `amendments` (JSON text; only an amendment rewrites them,
  decisions §16), read only for the single-delivery view.
Ids come from a per-account counter.

The integration state (decisions §14) sits beside `body`: `integration`, its JSON text as supplier reads show it
(a list page appends it unparsed; a map stored before reads the same), and `integration_since`, which also keys
GSI3, each state's worklist oldest first. The account's PENDING and FAILED counts (`keys.integration_counts_key`,
16 shards) change in the same transaction, conditional on the delivery's version: each write counted once. Lists
and the counts' overview are read in store/delivery_lists.py.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from ..domain.delivery_summary import without_items
from ..domain.deposits import with_deposits
from ..domain.field_order import DELIVERY
from ..domain.integration_status import state_text
from ..domain.rendering import json_text
from . import batch, keys, rendered, table

if TYPE_CHECKING:
    from ..domain.feed import Change
    from .idempotency import Completion
    from .outcomes import Contended, LostClaim, ProductsGone, Stale, TooLarge

# The writes import the feed, products, outcomes and idempotency where they use them: a cold read loads none.
COUNTER = "DELIVERY"
LEGACY = "doc"  # the summary's map before `body`
DEPOSIT_BASIS = "deposit_basis"  # JSON text: what the delivery's deposits are counted from (decisions §15)
INTEGRATION = "integration"  # the state, beside the document (never in it: customers' lists read the same text)
AMENDMENTS = "amendments"  # JSON text on the items item: what each amendment changed (decisions §16)
READ_NAMES = {"#body": rendered.BODY, "#doc": LEGACY}


@dataclass(frozen=True)
class StoredDelivery:
    delivery: dict  # as the API shows it; request.items only when read in full
    version: int
    integration: dict | None = None  # None: stored before integration states existed (decisions §14)
    integration_since: str | None = None
    deposit_basis: dict | None = None  # what its deposits are counted from (domain/deposits.py), beside the document


@dataclass(frozen=True)
class IntegrationWrite:
    """A new integration state to store with a write: `since` orders the state's worklist, `counts` is what the
    write adds to the account's counts (`{"pending": 1, "failed": -1}`)."""

    state: dict
    since: str
    counts: dict


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
        {
            "Put": {
                "TableName": table.name(),
                "Item": table.to_item(item),
                "ConditionExpression": "attribute_not_exists(PK)",
            }
        }
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
    guards: list[dict] = (),
    pinned: dict[str, str] | None = None,
) -> None | Stale | ProductsGone | LostClaim | TooLarge | Contended:
    """Create the deliveries of one order, in one transaction with the "used" flags of their products, the
    integration counts, the Idempotency-Key answer and their feed entries (which make their events); None when
    written. `integration` is each new delivery's state, its `counts` those of the whole order; `guards`: checks;
    `pinned`: products (id -> revision) that must still be as read (ProductsGone names them otherwise)."""
    from ..domain import feed as feed_changes
    from . import outcomes, products

    bases = bases or [None] * len(deliveries)
    creates = [
        op
        for delivery, basis in zip(deliveries, bases)
        for op in _create_operations(account, delivery, integration, basis)
    ]
    counts = _counts_operation(account, deliveries[0]["id"], integration.counts) if integration is not None else None
    pinned = pinned or {}
    used = {pid: products.mark_used_operation(account, pid, pinned.get(pid)) for pid in used_products}
    if changes is None:
        changes = [
            feed_changes.delivery_change(feed_changes.ChangeType.DELIVERY_REQUESTED, delivery)
            for delivery in deliveries
        ]
    operations = creates + ([counts] if counts is not None else []) + list(used.values()) + list(guards)
    reasons = _transact(account, operations, claim, changes, now)
    if not isinstance(reasons, dict):
        return reasons
    gone = frozenset(pid for pid, operation in used.items() if _failed(reasons, operation))
    if gone:
        return outcomes.ProductsGone(gone)
    if any(_failed(reasons, operation) for operation in creates):
        return outcomes.Stale()
    if table.TRANSACTION_CONFLICT in reasons.values():
        return outcomes.Contended()
    raise table.WriteFailed("placing the order", reasons)


def _failed(reasons: dict[tuple[str, str], str], operation: dict) -> bool:
    """Whether the condition of `operation` is what cancelled the transaction."""
    return reasons.get(table.item_key(operation)) == table.CONDITION_FAILED


def from_summary(summary: dict, items: list | None, amendments: str | None = None) -> StoredDelivery:
    """The delivery of a summary item; read in full (with its items and `amendments`, decisions §16), with its
    `deposits` (decisions §15)."""
    delivery = rendered.document(summary, LEGACY)
    basis = json.loads(summary[DEPOSIT_BASIS]) if DEPOSIT_BASIS in summary else None
    if items is not None:
        delivery = {**delivery, "request": {**delivery["request"], "items": items}}
        delivery = with_deposits(
            {**delivery, "amendments": rendered.parse(amendments)} if amendments else delivery, basis
        )
    return StoredDelivery(
        delivery, int(summary["version"]), _state(summary), summary.get("integration_since"), deposit_basis=basis
    )


def _state(summary: dict) -> dict | None:
    """The integration state of a decoded summary: its stored text parsed, or a map stored before the text."""
    state = summary.get(INTEGRATION)
    return json.loads(state) if isinstance(state, str) else state


def get(account: str, delivery_id: int, consistent: bool = False) -> StoredDelivery | None:
    """The delivery in full: summary and items in one BatchGetItem."""
    summary_key = keys.delivery_key(account, delivery_id)
    items_key = keys.delivery_items_key(account, delivery_id)
    found = batch.get_items([summary_key, items_key], consistent=consistent)
    summary = batch.pick(found, summary_key)
    if summary is None:
        return None
    held = batch.pick(found, items_key) or {}
    return from_summary(summary, held.get("items", []), held.get(AMENDMENTS))


def _update_operation(
    account: str,
    delivery_id: int,
    expected_version: int,
    delivery: dict | None,
    integration: IntegrationWrite | None,
    extra: dict | None = None,
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
    changes.update(extra or {})  # an amendment's new deposit basis
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
    also: list[dict] = (),
    extra: dict | None = None,
) -> StoredDelivery | Stale | LostClaim | TooLarge:
    """Store the changed delivery if nobody changed it since `expected_version`; with its new integration state
    and counts, its Idempotency-Key answer and its feed entry (and the event it makes) in the same write. Lost to
    another write (its version or a transaction): Stale. `also`: more transaction items that belong to the
    change (a receive's move of deposit balances and its statement record, an amendment's new items); `extra`:
    attributes of the summary to set too."""
    from ..domain import feed as feed_changes

    change = change or feed_changes.delivery_change(feed_changes.STATUS_CHANGE[delivery["status"]], delivery)
    return _write(
        account, delivery["id"], expected_version, delivery, integration, claim, [change], now, also=also, extra=extra
    )


def set_integration(
    account: str, stored: StoredDelivery, integration: IntegrationWrite, *, changes: list[Change] = (), now: dt.datetime
) -> StoredDelivery | Stale | TooLarge:
    """Store a new integration state (and its counts and the feed entries of `changes`) if nobody changed the
    delivery since it was read."""
    return _write(
        account, stored.delivery["id"], stored.version, None, integration, None, list(changes), now, stored.delivery
    )


def _write(
    account,
    delivery_id,
    expected_version,
    delivery,
    integration,
    claim,
    changes,
    now,
    unchanged=None,
    also=(),
    extra=None,
):
    from . import outcomes

    update = _update_operation(account, delivery_id, expected_version, delivery, integration, extra)
    written = StoredDelivery(
        delivery if delivery is not None else unchanged,
        expected_version + 1,
        integration.state if integration is not None else None,
        integration.since if integration is not None else None,
        deposit_basis=None,
    )
    counts = _counts_operation(account, delivery_id, integration.counts) if integration is not None else None
    others = [counts] if counts is not None else []
    others += list(also)
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
    outcome = _transact(account, [update] + others, claim, changes, now)
    if outcome is None:
        return written
    if isinstance(outcome, outcomes.Contended):
        return outcomes.Stale()  # read again and write with a new time
    if isinstance(outcome, dict):
        if _failed(outcome, update) or table.TRANSACTION_CONFLICT in outcome.values():
            return outcomes.Stale()
        raise table.WriteFailed("changing the delivery", outcome)
    return outcome


def _transact(
    account: str, operations: list[dict], claim: Completion | None, changes: list[Change], now: dt.datetime
) -> None | dict[tuple[str, str], str] | LostClaim | TooLarge | Contended:
    """Run a transaction (with the feed entries of `changes`) whose last own item records the Idempotency-Key
    answer, if any: None when written, LostClaim when only the claim's condition failed, else the cancellation
    code of each item by its key (table.cancellation_reasons) to read."""
    from . import feed, idempotency, outcomes

    answer = [idempotency.complete_operation(claim)] if claim is not None else []
    try:
        # Not retried here: the items hold the worklist's `since`, taken by the attempt that commits (§14).
        feed.commit(account, operations + answer, changes, now, retry_held=False)
    except feed.Held:
        return outcomes.Contended()
    except ClientError as error:
        reasons = table.cancellation_reasons(error, operations + answer)
        if not reasons:
            if table.is_too_large(error):
                return outcomes.TooLarge()
            raise
        failed = [key for key, code in reasons.items() if code == table.CONDITION_FAILED]
        if answer and failed == [table.item_key(answer[0])]:
            return outcomes.LostClaim()
        return reasons
    return None


def refresh(account: str, stored: StoredDelivery) -> StoredDelivery | None:
    """The delivery as it is now, read consistently in full (an amendment may have changed its items)."""
    return get(account, stored.delivery["id"], consistent=True)
