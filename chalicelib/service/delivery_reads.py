"""Use cases that read deliveries, apart from service/deliveries.py (whose changes need the pydantic models of
domain/delivery.py) so that a cold GET of deliveries imports no pydantic (tests/api/test_cold_path.py)."""
from ..domain.errors import NotFound
from ..domain.identifiers import parse_delivery_id
from ..store import deliveries
from ..store.paging import Page
from .paging import paged


def number(delivery_id: str) -> int:
    """The delivery id of a URL as its number; a malformed one names no delivery."""
    parsed = parse_delivery_id(delivery_id)
    if parsed is None:
        raise NotFound(f"delivery {delivery_id} does not exist")
    return parsed


def read(account: str, delivery_id: str, customer_id: str | None = None, consistent: bool = False) -> deliveries.StoredDelivery:
    """The delivery in full; a customer sees only their own (another's reads as missing)."""
    stored = deliveries.get(account, number(delivery_id), consistent=consistent)
    if stored is None or (customer_id is not None and stored.delivery["request"].get("customer_id") != customer_id):
        raise NotFound(f"delivery {delivery_id} does not exist")
    return stored


def get_delivery(account: str, delivery_id: str, customer_id: str | None = None) -> dict:
    return read(account, delivery_id, customer_id).delivery


@paged
def list_deliveries(account: str, limit: int, cursor: str | None, status: str | None) -> Page:
    """A page of summaries as their JSON text, newest first."""
    return deliveries.list_page(account, limit, cursor, status)


@paged
def list_customer_deliveries(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    return deliveries.list_customer_page(account, customer_id, limit, cursor)
