"""The shapes of GET /changes (decisions §13), for the OpenAPI document; the feed's values come from feed.py."""

from typing import Any, Literal

from pydantic import BaseModel, Field

from .feed import ChangeType, Resource
from .values import literal


class ChangeEntry(BaseModel):
    """One committed change to one resource."""

    sequence: int = Field(ge=1, description="Per account: 1, 2, 3, ... without gaps.")
    type: literal(ChangeType)  # type: ignore[valid-type]
    resource: literal(Resource)  # type: ignore[valid-type]
    id: str = Field(
        description="The resource's id (a delivery's id as a string; `deliveries` or `webhooks` for settings)."
    )
    at: str = Field(description="When the change was committed (ISO 8601, UTC).")
    status: str | None = Field(None, description="Deliveries: the status after the change.")
    by: Literal["supplier", "customer"] | None = Field(
        None,
        description="delivery.delivered entries: who delivered it, the supplier's delivery note or the customer's "
        "receive (decisions §18).",
    )
    integration: str | None = Field(
        None,
        description="delivery.integration entries: the delivery's new integration status (PENDING, IMPORTED, FAILED).",
    )
    customer_id: str | None = Field(
        None,
        description="Customer pricing: whose pricing it is; customer deposits: whose balances; "
        "standing orders: whose it is.",
    )
    date: str | None = Field(None, description="standing-order.failed entries: the date that could not be placed.")
    data: Any = Field(
        None,
        description="With include=data: the resource as its GET answers now, null when it no longer exists. "
        "Webhook settings travel as {url, method, events} only.",
    )


class ChangePage(BaseModel):
    changes: list[ChangeEntry]
    last_sequence: int = Field(ge=0, description="The last entry's sequence (`after` when empty): the next `after`.")
    max_sequence: int = Field(ge=0, description="The newest sequence when the page was read; caught up when equal.")
