"""Reading claims (decisions §18; store/claims.py writes them and says how they are kept): a delivery's claims as its
single reads show them, whether a summary and a claims item are of one version, the worklists and the overview. Apart
from the writes, so a cold read of deliveries or claims loads nothing of the unit of work."""

import time

from ..domain import retry
from ..domain.claim_status import OPEN
from . import claim_keys, rendered, table
from .keys import GSI1, GSI2
from .paging import Page, query_page

CLAIMS = "claims"  # the claims item's JSON text
ENTRY = "entry"  # a worklist entry's JSON text
SUMMARY_VERSION = "claims_version"  # on the delivery's summary: the version whose write last wrote the claims item
OVERVIEW_ATTEMPTS = 10


def shown(claims_item: dict | None) -> list[dict] | None:
    """The claims a delivery's single reads show (None while it has none)."""
    if not claims_item or not claims_item.get(CLAIMS):
        return None
    return rendered.parse(claims_item[CLAIMS])


def agree(summary: dict, claims_item: dict | None) -> bool:
    """Whether a summary and a claims item were read at one version of the delivery."""
    return summary.get(SUMMARY_VERSION) == (claims_item or {}).get("version")


def worklist_page(account: str, status: str, customer_id: str | None, limit: int, cursor: str | None) -> Page:
    """One status's claims (of one customer, when given) in the order they entered it, oldest first, as the JSON
    texts the worklist shows: full pages from the worklist's own index partition, no filter."""
    index = GSI1 if customer_id is None else GSI2
    return query_page(
        account,
        f"claims?status={status}&customer_id={customer_id or ''}",
        limit,
        cursor,
        index=index,
        decode=lambda item: item[ENTRY]["S"],
        KeyConditionExpression=f"{index}PK = :pk",
        ExpressionAttributeValues=table.values(pk=claim_keys.by_status_pk(account, status, customer_id)),
        ProjectionExpression=f"PK, SK, {index}PK, {index}SK, #entry",
        ExpressionAttributeNames={"#entry": ENTRY},
        ScanIndexForward=True,
    )


def overview(account: str) -> tuple[int, dict | None]:
    """(OPEN claims, the oldest OPEN claim's entry or None), exact at one moment: the counts' shards and the entry the
    worklist's index shows first, read in one TransactGetItems. An index that still shows a claim answered or
    withdrawn since, or not yet the first claim opened, is read again (a claim enters OPEN as the newest)."""
    open_claims, first = 0, None
    for attempt in range(OVERVIEW_ATTEMPTS):
        if attempt:
            retry.back_off(attempt - 1, time.sleep, first=0.01, cap=0.2)
        first = table.first_in_index(GSI1, claim_keys.by_status_pk(account, OPEN))
        wanted = claim_keys.counts_keys(account) + ([{"PK": first["PK"], "SK": first["SK"]}] if first else [])
        read = table.read_together(wanted)
        open_claims = sum(int(shard.get("open", 0)) for shard in read[: claim_keys.COUNT_SHARDS])
        if first is None and open_claims == 0:
            return 0, None
        if first is not None and read[-1].get("status") == OPEN and read[-1].get("since") == first["since"]:
            return open_claims, rendered.parse(first[ENTRY])
    return open_claims, rendered.parse(first[ENTRY]) if first is not None else None
