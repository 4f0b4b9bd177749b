"""Claims in the single table (decisions §18; store/claim_keys.py has their keys):

- the claims item of a delivery: `claims`, the JSON text of all its claims as single reads show them, and `version`,
  the delivery version whose write last wrote it. The summary keeps the same number as `claims_version`, so a read
  of the two that finds them apart read them across a claim's write, and reads them again (one version per read,
  decisions §16). Written whole in each claim's unit of work, beside the summary's update, which carries the
  condition on the version read: at most ten claims of 36,000 bytes (domain/limits.py), so it stays one item.
- a claim's worklist entry: the JSON text of what `GET /claims` shows of it, its status, and its places in the
  worklists (index keys), rewritten whole (it is small) with every change of the claim, whose feed change it carries.
- the account's count of OPEN claims, one shard per delivery id % 16, moved in the same writes; read together with
  the oldest OPEN claim's entry in one TransactGetItems (a serialisable snapshot: exact).
"""

from ..domain.field_order import BY_MODEL, ordered
from ..domain.rendering import json_text
from . import batch, claim_keys, keys, products, settings, table
from .claim_reads import CLAIMS, ENTRY, SUMMARY_VERSION
from .unit_of_work import Operation

_ENTRY = BY_MODEL["ClaimList"].nested["claims"]


def summary_attributes(version: int) -> dict:
    """What the summary's update of a claim's write sets beside its document."""
    return {SUMMARY_VERSION: version}


def recording(account: str, delivery_id: int, claims: list[dict], version: int) -> Operation:
    """Keep all claims of the delivery, as written by the delivery's `version` (its summary update, in the same
    unit of work, holds the condition)."""
    item = {**claim_keys.delivery_claims_key(account, delivery_id), CLAIMS: json_text(claims), "version": version}
    return Operation({"Put": {"TableName": table.name(), "Item": table.to_item(item)}})


def entry_of(delivery_id: int, customer_id: str, claim: dict, since: str) -> dict:
    """A claim as the worklist shows it."""
    entry = {"delivery_id": delivery_id, "customer_id": customer_id, "number": claim["number"]}
    return ordered({**entry, "status": claim["status"], "opened_at": claim["opened_at"], "since": since}, _ENTRY)


def entering(account: str, delivery_id: int, customer_id: str, claim: dict, since: str) -> Operation:
    """The claim's worklist entry as it now stands: in its status's worklists from `since`."""
    number, status = claim["number"], claim["status"]
    item = {
        **claim_keys.claim_key(account, delivery_id, number),
        ENTRY: json_text(entry_of(delivery_id, customer_id, claim, since)),
        "status": status,
        "since": since,
        **claim_keys.worklist_gsi(account, status, customer_id, since, delivery_id, number),
    }
    return Operation({"Put": {"TableName": table.name(), "Item": table.to_item(item)}})


def counting(account: str, delivery_id: int, opened: int) -> Operation | None:
    """Add `opened` (+1, -1) to the account's OPEN count, in the delivery's shard; unconditional: the summary's
    conditional update in the same unit of work makes it count once."""
    if not opened:
        return None
    update = {
        "TableName": table.name(),
        "Key": table.to_item(claim_keys.counts_key(account, delivery_id % claim_keys.COUNT_SHARDS)),
        "UpdateExpression": "ADD #open :n",
        "ExpressionAttributeNames": {"#open": "open"},
        "ExpressionAttributeValues": table.values(n=opened),
    }
    return Operation({"Update": update})


def context(account: str, product_ids: list[str]) -> tuple[dict, dict[str, dict]]:
    """What a claim or an answer is checked against, in one BatchGetItem: the account's delivery settings (its claim
    window and time zone) and the products of `product_ids` that exist (substitutes: whether they go by kg)."""
    wanted = [settings.deliveries_key(account)] + [keys.product_key(account, pid) for pid in product_ids]
    found = batch.get_items(wanted)
    stored = batch.pick(found, wanted[0])
    named = {pid: batch.pick(found, key) for pid, key in zip(product_ids, wanted[1:])}
    shown = {pid: products.from_item(item).data for pid, item in named.items() if item is not None}
    return settings.with_defaults(stored.get("data") if stored else None), shown
