"""The change feed's words (decisions §13): entry types, resources, and the one entry a change appends.

Pure: the store writes entries, the service says which change it made."""

from dataclasses import dataclass
from enum import StrEnum

from .event_policy import EventType

MAX_PAGE = 1000
DEFAULT_PAGE = 100
RETENTION_DAYS = 35  # kept at least 30 days (§13); TTL deletes up to a few days late, never early


class Resource(StrEnum):
    PRODUCT = "product"
    CATEGORY = "category"
    CUSTOMER = "customer"
    CUSTOMER_PRICING = "customer-pricing"
    PRICE_GROUPS = "price-groups"
    SETTINGS = "settings"
    DELIVERY = "delivery"
    DEPOSIT = "deposit"  # decisions §15
    CUSTOMER_DEPOSITS = "customer-deposits"  # `id` the customer id
    STANDING_ORDER = "standing-order"  # decisions §17: `id` the standing order's, with `customer_id`
    CLAIM = "claim"  # decisions §18: `id` "<delivery id>:<number>", with `customer_id` and the claim's `status`


class ChangeType(StrEnum):
    PRODUCT_CREATED = "product.created"
    PRODUCT_UPDATED = "product.updated"
    PRODUCT_DELETED = "product.deleted"
    CATEGORY_CREATED = "category.created"
    CATEGORY_UPDATED = "category.updated"
    CATEGORY_DELETED = "category.deleted"
    CUSTOMER_CREATED = "customer.created"
    CUSTOMER_UPDATED = "customer.updated"
    CUSTOMER_PRICING_UPDATED = "customer-pricing.updated"
    CUSTOMER_PRICING_DELETED = "customer-pricing.deleted"
    PRICE_GROUPS_UPDATED = "price-groups.updated"
    SETTINGS_UPDATED = "settings.updated"
    DELIVERY_REQUESTED = "delivery.requested"
    DELIVERY_ACCEPTED = "delivery.accepted"
    DELIVERY_UPDATED = "delivery.updated"
    DELIVERY_REJECTED = "delivery.rejected"
    DELIVERY_CANCELLED = "delivery.cancelled"
    DELIVERY_DELIVERED = "delivery.delivered"
    DELIVERY_INTEGRATION = "delivery.integration"  # PUT /deliveries/:id/integration (§14)
    DELIVERY_AMENDED = "delivery.amended"  # POST /customer/deliveries/:id/amendments (§16)
    DEPOSIT_CREATED = "deposit.created"  # decisions §15
    DEPOSIT_UPDATED = "deposit.updated"
    DEPOSIT_DELETED = "deposit.deleted"
    CUSTOMER_DEPOSITS_UPDATED = "customer-deposits.updated"  # an adjustment of a customer's balance
    STANDING_ORDER_CREATED = "standing-order.created"  # decisions §17
    STANDING_ORDER_UPDATED = "standing-order.updated"
    STANDING_ORDER_DELETED = "standing-order.deleted"
    STANDING_ORDER_FAILED = "standing-order.failed"  # an occurrence could not be placed
    CLAIM_OPENED = "claim.opened"  # decisions §18
    CLAIM_ANSWERED = "claim.answered"
    CLAIM_WITHDRAWN = "claim.withdrawn"

    @property
    def resource(self) -> Resource:
        return Resource(self.value.rsplit(".", 1)[0])


SETTINGS_DELIVERIES, SETTINGS_WEBHOOKS = "deliveries", "webhooks"  # the ids of the `settings` resource
# The entry of a change the numbering could not read (a malformed mark: docs/feed.md): `id` names the stream record,
# `reason` says why. It makes no webhook event and is no type a webhook selects.
UNREADABLE_TYPE, UNREADABLE_RESOURCE = "feed.unreadable", "feed"

# A supplier response's type -> the entry it makes (a repeated ACCEPT included).
RESPONSE_CHANGE = {
    "ACCEPT": ChangeType.DELIVERY_ACCEPTED,
    "UPDATE": ChangeType.DELIVERY_UPDATED,
    "REJECT": ChangeType.DELIVERY_REJECTED,
}

# A delivery's status after a change -> the entry it makes, for writers that only know the result.
STATUS_CHANGE = {
    "REQUESTED": ChangeType.DELIVERY_REQUESTED,
    "ACCEPTED": ChangeType.DELIVERY_ACCEPTED,
    "REJECTED": ChangeType.DELIVERY_REJECTED,
    "CANCELLED": ChangeType.DELIVERY_CANCELLED,
    "DELIVERED": ChangeType.DELIVERY_DELIVERED,
}


@dataclass(frozen=True)
class Change:
    """One committed change to one resource: what one feed entry says."""

    type: ChangeType
    id: str
    status: str | None = None  # deliveries, claims: the status after the change
    customer_id: str | None = None  # customer pricing, customer deposits, standing orders, claims: whose
    integration: str | None = None  # delivery.integration: the new integration status
    date: str | None = None  # standing-order.failed: the date that could not be placed (decisions §17)
    by: str | None = None  # delivery.delivered: "supplier" (a delivery note) or "customer" (a receive), §18

    @property
    def resource(self) -> Resource:
        return self.type.resource


def product_change(kind: str, product_id: str) -> Change:
    return Change(ChangeType(f"product.{kind}"), product_id)


SUPPLIER_BY, CUSTOMER_BY = "supplier", "customer"  # who delivered: the supplier's note, or the customer's receive


def delivery_change(change_type: ChangeType, delivery: dict, by: str | None = None) -> Change:
    return Change(change_type, str(delivery["id"]), status=delivery["status"], by=by)


# Webhooks on the feed (§13): which event, if any, an entry makes under the account's selection of types.
LEGACY_TWINS = {
    str(EventType.REQUEST_DELIVERY): ChangeType.DELIVERY_REQUESTED,
    str(EventType.CANCEL_DELIVERY): ChangeType.DELIVERY_CANCELLED,
    str(EventType.RECEIVE_DELIVERY): ChangeType.DELIVERY_DELIVERED,
}
DEFAULT_EVENTS = tuple(str(t) for t in EventType)  # what a webhook configured without `events` sends (as before)
EVENT_TYPES = DEFAULT_EVENTS + tuple(str(t) for t in ChangeType)


def events_of(settings: dict) -> list[str]:
    """The event types webhook settings send: without `events` (a PUT without it, settings stored before it
    existed) the legacy default; an empty selection sends none."""
    selected = settings.get("events")
    return list(DEFAULT_EVENTS if selected is None else selected)


def event_selection_errors(selected: list[str]) -> list[str]:
    """Why a selection of event types cannot be stored (empty when it can)."""
    problems = [f"{name!r} is not an event type" for name in selected if name not in EVENT_TYPES]
    problems += [
        f"{legacy!r} and {str(twin)!r} are the same event; select one of them"
        for legacy, twin in LEGACY_TWINS.items()
        if legacy in selected and str(twin) in selected
    ]
    return problems


def event_type_of(change_type: ChangeType, selected: tuple[str, ...] | None, by: str | None = None) -> str | None:
    """The type of the event the entry makes, None when the selection (None: the default) takes none of it. The
    legacy `receive-delivery` is the customer's confirmation: a supplier's delivery note never makes it (§18)."""
    chosen = DEFAULT_EVENTS if selected is None else selected
    for legacy, twin in LEGACY_TWINS.items():
        if twin == change_type and legacy in chosen:
            return None if by == SUPPLIER_BY and legacy == EventType.RECEIVE_DELIVERY else legacy
    return str(change_type) if str(change_type) in chosen else None
