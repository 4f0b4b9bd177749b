"""Use cases that read claims (decisions §18), apart from service/claims.py (whose changes need pydantic): the
claims worklist and its overview, exact at the time of the read."""

from ..store import claim_reads as claim_store
from ..store.paging import Page
from .paging import paged


@paged
def list_claims(account: str, status: str, customer_id: str | None, limit: int, cursor: str | None) -> Page:
    """A page of one status's worklist (of one customer, when given) as JSON texts, oldest first."""
    return claim_store.worklist_page(account, status, customer_id, limit, cursor)


def claims_overview(account: str) -> dict:
    """GET /account/claims: the OPEN claims now, and the first of the OPEN worklist."""
    count, oldest = claim_store.overview(account)
    shown = {name: oldest[name] for name in ("delivery_id", "number", "since")} if oldest is not None else None
    return {"open": count, "oldest_open": shown}
