"""Use cases that read deliveries, apart from service/deliveries.py (whose changes need the pydantic models of
domain/delivery.py) so that a cold GET of deliveries imports no pydantic (tests/api/test_cold_path.py)."""

from ..domain import integration_status
from ..domain.errors import Busy, NotFound
from ..domain.identifiers import parse_delivery_id
from ..store import deliveries, delivery_lists
from ..store.paging import Page
from .paging import paged


def number(delivery_id: str) -> int:
    """The delivery id of a URL as its number; a malformed one names no delivery."""
    parsed = parse_delivery_id(delivery_id)
    if parsed is None:
        raise NotFound(f"delivery {delivery_id} does not exist")
    return parsed


def read(
    account: str, delivery_id: str, customer_id: str | None = None, consistent: bool = False
) -> deliveries.StoredDelivery:
    """The delivery in full; a customer sees only their own (another's reads as missing)."""
    try:
        stored = deliveries.get(account, number(delivery_id), consistent=consistent)
    except deliveries.KeptChanging:
        raise Busy("the delivery is being changed many times at once; read it again") from None
    if stored is None or (customer_id is not None and stored.delivery["request"].get("customer_id") != customer_id):
        raise NotFound(f"delivery {delivery_id} does not exist")
    return stored


def supplier_view(stored: deliveries.StoredDelivery) -> dict:
    """What supplier reads show: the delivery and its integration state (customers never see the state)."""
    return integration_status.supplier_view(stored.delivery, stored.integration)


def customer_view(stored: deliveries.StoredDelivery) -> dict:
    return stored.delivery


def revision(stored: deliveries.StoredDelivery) -> str:
    """The delivery's version as its ETag names it (decisions §16): the id and the revision every change that both
    parties' reads show moves (not the integration state, which only the supplier sees), both on the item already
    read, so an ETag costs no request."""
    return f"{stored.delivery['id']}-{stored.shown_version}"


def get_delivery(account: str, delivery_id: str, customer_id: str | None = None) -> dict:
    """The delivery in full; a customer's own as customers see it when `customer_id` is given."""
    return get_versioned(account, delivery_id, customer_id)[0]


def get_versioned(account: str, delivery_id: str, customer_id: str | None = None) -> tuple[dict, str]:
    """The delivery in full (as get_delivery) and its revision, for the ETag of single reads."""
    stored = read(account, delivery_id, customer_id)
    return (customer_view(stored) if customer_id is not None else supplier_view(stored)), revision(stored)


@paged
def list_deliveries(
    account: str, limit: int, cursor: str | None, status: str | None, integration: str | None = None
) -> Page:
    """A page of summaries as the JSON texts supplier reads show: newest first (optionally of one status), or the
    worklist of one integration state, oldest first."""
    if integration is not None:
        return delivery_lists.list_integration_page(account, integration, limit, cursor)
    return delivery_lists.list_page(account, limit, cursor, status)


@paged
def list_customer_deliveries(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    """A page of one customer's summaries as their JSON texts (without the integration state), newest first."""
    return delivery_lists.list_customer_page(account, customer_id, limit, cursor)


def integration_overview(account: str) -> dict:
    """GET /account/integration: the exact counts and the first delivery of the PENDING worklist."""
    counts = delivery_lists.integration_counts(account, integration_status.PENDING)
    oldest = counts.oldest_pending
    return {
        "pending": counts.pending,
        "failed": counts.failed,
        "oldest_pending": {"id": oldest[0], "since": oldest[1]} if oldest is not None else None,
    }
