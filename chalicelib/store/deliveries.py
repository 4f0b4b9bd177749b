"""Deliveries in the single table, two items each:
- the summary (`keys.delivery_key`): `body`, the delivery as the API shows it but `request.items`, as JSON text
  (store/rendered.py; `doc`, a map, on items written before), with `status`, `customer_id` and `version` (bumped
  by every change, each conditional on it). GSI1 (by status) and GSI2 (by customer), newest first, let a list page
  read only the deliveries it shows, never their items;
- the request items (`keys.delivery_items_key`), with `amendments` (JSON text; only an amendment rewrites them,
  decisions §16) and `delivery_note` (JSON text, written once by the note, decisions §18), read only for the
  single-delivery view;
- the claims (decisions §18), an item of their own (store/claims.py), read with the other two.
Ids come from a per-account counter.

The integration state (decisions §14) sits beside `body`: `integration`, its JSON text as supplier reads show it
(a list page appends it unparsed; a map stored before reads the same), and `integration_since`, which also keys
GSI3, each state's worklist oldest first. The account's PENDING and FAILED counts (`keys.integration_counts_key`,
16 shards) change in the same transaction, conditional on the delivery's version: each write counted once.

This module is the items' codec and the single reads; the write operations are store/delivery_writes.py's, lists
and the counts' overview store/delivery_lists.py's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..domain.deposits import with_deposits
from . import batch, claim_keys, claim_reads, keys, operations, rendered, table

COUNTER = "DELIVERY"
LEGACY = "doc"  # the summary's map before `body`
DEPOSIT_BASIS = "deposit_basis"  # JSON text: what the delivery's deposits are counted from (decisions §15)
INTEGRATION = "integration"  # the state, beside the document (never in it: customers' lists read the same text)
AMENDMENTS = "amendments"  # JSON text on the items item: what each amendment changed (decisions §16)
# The version both parties' reads show (the ETag, decisions §16): every change moves it but a new integration state,
# which only the supplier sees. A summary without one (written before) shows its `version`.
REVISION = "revision"
# The version whose write last wrote the items item, on the summary and (as `version`) on the items item: a read of
# the two that finds them apart read them across an amendment or a delivery note, and reads them again.
ITEMS_VERSION = "items_version"
READ_ATTEMPTS = 10
NOTE = "delivery_note"  # JSON text on the items item: the driver's delivery note (decisions §18)
CLAIMS = "claims"  # the claims of decisions §18, from their own item
READ_NAMES = {"#body": rendered.BODY, "#doc": LEGACY}


@dataclass(frozen=True)
class StoredDelivery:
    delivery: dict  # as the API shows it; request.items only when read in full
    version: int
    integration: dict | None = None  # None: stored before integration states existed (decisions §14)
    integration_since: str | None = None
    deposit_basis: dict | None = None  # what its deposits are counted from (domain/deposits.py), beside the document
    revision: int | None = None  # REVISION; None: the summary has none yet, and shows its version

    @property
    def shown_version(self) -> int:
        """The version of what both parties' reads show (decisions §16)."""
        return self.version if self.revision is None else self.revision


class KeptChanging(Exception):
    """A delivery's summary and its items or claims were read apart READ_ATTEMPTS times in a row (amendments, notes
    or claims kept committing between the reads)."""


@dataclass(frozen=True)
class IntegrationWrite:
    """A new integration state to store with a write: `since` orders the state's worklist, `counts` is what the
    write adds to the account's counts (`{"pending": 1, "failed": -1}`)."""

    state: dict
    since: str
    counts: dict


def allocate_ids(account: str, count: int) -> list[int]:
    """`count` new ids, unique in the account: one UpdateItem whatever the count."""
    add = {
        "TableName": table.name(),
        "Key": table.to_item(keys.counter_key(account, COUNTER)),
        "UpdateExpression": "ADD #value :n",
        "ExpressionAttributeNames": {"#value": "value"},
        "ExpressionAttributeValues": table.values(n=count),
    }
    last = int(operations.write(operations.Operation({"Update": add}), "UPDATED_NEW")["value"])
    return list(range(last - count + 1, last + 1))


def from_summary(summary: dict, held: dict | None, claims_item: dict | None = None) -> StoredDelivery:
    """The delivery of a summary item; read in full when `held` is its items item (its items, `amendments` of
    decisions §16 and `delivery_note` of §18) and `claims_item` its claims (§18), with its `deposits` (§15)."""
    delivery = rendered.document(summary, LEGACY)
    basis = json.loads(summary[DEPOSIT_BASIS]) if DEPOSIT_BASIS in summary else None
    if held is not None:
        delivery = {**delivery, "request": {**delivery["request"], "items": held.get("items", [])}}
        for name in (AMENDMENTS, NOTE):
            if held.get(name):
                delivery[name] = rendered.parse(held[name])
        claims = claim_reads.shown(claims_item)
        if claims:
            delivery[CLAIMS] = claims
        delivery = with_deposits(delivery, basis)
    revision = int(summary[REVISION]) if REVISION in summary else None
    return StoredDelivery(
        delivery,
        int(summary["version"]),
        _state(summary),
        summary.get("integration_since"),
        deposit_basis=basis,
        revision=revision,
    )


def _state(summary: dict) -> dict | None:
    """The integration state of a decoded summary: its stored text parsed, or a map stored before the text."""
    state = summary.get(INTEGRATION)
    return json.loads(state) if isinstance(state, str) else state


def get(account: str, delivery_id: int, consistent: bool = False) -> StoredDelivery | None:
    """The delivery in full: summary, items and claims in one BatchGetItem, of one version (decisions §16: a single
    read's ETag and body go together). Items read apart from their summary (an eventually consistent read, or a write
    committing between the two reads), or claims, are read again, consistently."""
    summary_key = keys.delivery_key(account, delivery_id)
    items_key = keys.delivery_items_key(account, delivery_id)
    claims_key = claim_keys.delivery_claims_key(account, delivery_id)
    for attempt in range(READ_ATTEMPTS):
        found = batch.get_items([summary_key, items_key, claims_key], consistent=consistent or attempt > 0)
        summary = batch.pick(found, summary_key)
        if summary is None:
            return None
        held = batch.pick(found, items_key) or {}
        claims_item = batch.pick(found, claims_key)
        if summary.get(ITEMS_VERSION) == held.get("version") and claim_reads.agree(summary, claims_item):
            return from_summary(summary, held, claims_item)
    raise KeptChanging(f"delivery {delivery_id} of {account}")


def items_attributes(version: int) -> dict:
    """What the summary's update sets beside its document when the same write writes the items item as `version`."""
    return {ITEMS_VERSION: version}


def refresh(account: str, stored: StoredDelivery) -> StoredDelivery | None:
    """The delivery as it is now, read consistently in full (an amendment may have changed its items)."""
    return get(account, stored.delivery["id"], consistent=True)
