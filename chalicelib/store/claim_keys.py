"""The claims' part of the single-table key scheme (decisions §18; keys.py holds the rest, and is full).

- All claims of a delivery in one item beside its summary and items: single reads, the feed's data and webhook
  bodies read it in the BatchGetItem they make anyway, by a key known from the delivery id alone.
- One small entry per claim for the worklists (GSI1: by status; GSI2: by status and customer; both in the order
  claims entered the status), on which the claim's feed changes are marked (one item per claim: its changes stay in
  order, as the stream keeps them per item).
- The account's count of OPEN claims in 16 shards (delivery id % 16), as the integration counts are kept.
"""

from .keys import account_pk, padded_id

COUNT_SHARDS = 16


def delivery_claims_key(account: str, delivery_id: int) -> dict:
    return {"PK": f"{account_pk(account)}#DCLAIMS", "SK": padded_id(delivery_id)}


def claim_key(account: str, delivery_id: int, number: int) -> dict:
    return {"PK": f"{account_pk(account)}#CLAIM", "SK": f"{padded_id(delivery_id)}#{int(number):02d}"}


def by_status_pk(account: str, status: str, customer_id: str | None = None) -> str:
    """A worklist's index partition: one status, or one status of one customer (ids hold no '#')."""
    return f"{account_pk(account)}#CLAIMS#{status}" + (f"#C#{customer_id}" if customer_id is not None else "")


def worklist_gsi(account: str, status: str, customer_id: str, since_iso: str, delivery_id: int, number: int) -> dict:
    """A claim's place in its status's worklist and in its customer's: in the order claims entered the status."""
    sort = f"{since_iso}#{padded_id(delivery_id)}#{int(number):02d}"
    return {
        "GSI1PK": by_status_pk(account, status),
        "GSI1SK": sort,
        "GSI2PK": by_status_pk(account, status, customer_id),
        "GSI2SK": sort,
    }


def counts_key(account: str, shard: int) -> dict:
    return {"PK": account_pk(account), "SK": f"CLAIMS#COUNTS#{shard}"}


def counts_keys(account: str) -> list[dict]:
    return [counts_key(account, shard) for shard in range(COUNT_SHARDS)]
