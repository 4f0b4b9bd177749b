"""The integration states of a delivery (decisions §14) as a StrEnum, and how supplier reads show the state.
Pure and free of pydantic: routes read it on a cold start; the shapes in integration.py derive their `Literal`s
(and so the OpenAPI enums) from it."""
from enum import StrEnum

from .field_order import INTEGRATION, ordered
from .rendering import json_text


class IntegrationStatus(StrEnum):
    PENDING = "PENDING"
    IMPORTED = "IMPORTED"
    FAILED = "FAILED"


PENDING, IMPORTED, FAILED = IntegrationStatus
STATUSES = tuple(IntegrationStatus)

REQUESTED_STATE = {"status": PENDING.value}  # a new delivery: nothing set yet, so no `updated`


def state_of(stored: dict | None) -> dict:
    """The state a delivery shows. Deliveries stored before integration states existed have none: they read as
    a new delivery does, PENDING (the `migrate-integration` command stores it, counted and listed)."""
    return dict(stored) if stored is not None else dict(REQUESTED_STATE)


def supplier_view(delivery: dict, stored: dict | None) -> dict:
    """The delivery as supplier reads show it: with its integration state, after the interface's fields."""
    return {**delivery, "integration": state_of(stored)}


def supplier_text(delivery_text: str, stored: dict | None) -> str:
    """supplier_view of a delivery kept as its JSON text (a list page's item, store/rendered.py): the state is
    appended before the closing brace, so the delivery's text is never parsed."""
    return f'{delivery_text[:-1]},"integration":{json_text(ordered(state_of(stored), INTEGRATION))}}}'
