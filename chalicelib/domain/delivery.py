"""Deliveries: their shapes (bodies in and out), vessel counts, responses and their size limits (decisions §8).
The status machine is domain/delivery_status.py; its names are importable from here too.

A delivery is a plain dict as the API shows it. Numbers are int or Decimal; time is always a parameter.
"""

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, Field, Strict

from . import limits
from .common import Cents, FieldError, Number, Shape, ShortText, Text, ValidationFailed, dump, is_whole, parse
from .customer import Address

# The status machine has its own module; its names stay importable from here.
from .delivery_status import (  # noqa: F401
    ACCEPT,
    ACCEPTED,
    CANCELLED,
    DELIVERED,
    DELIVERY,
    FINAL,
    REJECT,
    REJECTED,
    REQUESTED,
    RETURN,
    STATUSES,
    UPDATE,
    DeliveryStatus,
    DeliveryType,
    LineAction,
    ResponseReason,
    ResponseType,
    status_after_cancel,
    status_after_receive,
    status_after_response,
)
from .delivery_summary import without_items

# The shapes deliveries are shown in live in delivery_views.py; their names stay importable from here.
from .delivery_views import (  # noqa: F401
    CustomerAction,
    Delivery,
    DeliveryCustomer,
    DeliveryList,
    DeliveryRequest,
    DeliveryRequestSummary,
    DeliveryResponse,
    DeliverySummary,
    PlacedDeliveries,
    RequestItem,
    ResponseItem,
    Scheduled,
    SupplierDelivery,
    SupplierDeliveryList,
    SupplierDeliverySummary,
    User,
)
from .deposit_types import Empties
from .identifiers import DELIVERY_ID_DIGITS
from .item_shapes import SUBSTITUTIONS_DESCRIPTION, BundleChoice, SubstitutionBody, Substitutions  # noqa: F401
from .product import ItemBundle, bundle_size_errors, pallet_bundle_errors
from .product import vessel_count as product_vessel_count
from .rendering import size_in_bytes
from .timestamps import iso
from .values import is_by_kg, literal

# --- shared value shapes ---

# --- request bodies ---


# `substitute: true` is the default, kept as absent: an item shows `substitute` only when it is false (§18).
SubstituteFlag = Annotated[bool, Strict(), AfterValidator(lambda allowed: None if allowed else False)]


class OrderItem(Shape):
    id: ShortText
    count: Number
    bundle: BundleChoice | None = None
    message: Text | None = None
    substitute: SubstituteFlag | None = Field(
        default=None, description="false: this line may not be substituted (decisions §18); shown back only when false"
    )


class OrderBody(Shape):
    """POST /customer/deliveries."""

    type: literal(DeliveryType) = DELIVERY.value
    scheduled: Scheduled | None = None
    items: Annotated[list[OrderItem], Field(max_length=limits.ORDER_ITEMS)] = Field(
        default_factory=list, description="At least one item, unless a RETURN carries only empties"
    )
    message: Text | None = None
    cost_center: ShortText | None = None
    company: ShortText | None = None
    address: Address | None = None
    user: User
    empties: Empties | None = Field(default=None, description="What the customer will hand back (decisions §15)")


class ResponseItemBody(Shape):
    id: ShortText
    count: Number | None = None
    bundle: ItemBundle | None = None
    price: Cents | None = None
    reason: literal(ResponseReason) | None = Field(
        default=None, description="Why the line differs from the order (decisions §16)"
    )


class ResponseBody(Shape):
    """POST /deliveries/:id/responses."""

    type: literal(ResponseType)
    reference: ShortText | None = None
    scheduled: Scheduled | None = None
    items: Annotated[list[ResponseItemBody], Field(max_length=limits.ORDER_ITEMS)] | None = None
    user: User | None = None
    message: Text | None = None
    empties: Empties | None = Field(
        default=None, description="ACCEPT and UPDATE: what the supplier collects, replacing what was announced"
    )
    substitutions: Substitutions | None = Field(default=None, description=SUBSTITUTIONS_DESCRIPTION)


class CustomerActionBody(Shape):
    """POST /customer/deliveries/:id/cancel and /receive: who did it and why, both optional."""

    user: User | None = None
    message: Text | None = None


# --- values ---


def timestamp(now: dt.datetime) -> str:
    """When a request, response or customer action happened, in the service's timestamp format."""
    return iso(now)


def shown_bundle(bundle: dict | None) -> dict | None:
    """The product bundle as an item shows it: id_override is already the item id."""
    if bundle is None:
        return None
    return {k: v for k, v in bundle.items() if k != "id_override"}


def vessel_count(count, bundle: dict | None):
    """count x bundle size (x pallet bundle size); a whole result is kept as an int."""
    total = product_vessel_count(Decimal(count), bundle)
    return int(total) if is_whole(total) else total


def whole_count_errors(count, product_or_item: dict, path: str) -> list[FieldError]:
    """Counts are whole numbers unless the product is ordered by kg (orders and responses alike)."""
    if not is_by_kg(product_or_item) and not is_whole(count):
        return [FieldError(path, "must be a whole number unless the product is ordered by kg")]
    return []


def customer_action(now: dt.datetime, body: CustomerActionBody, fallback_user: dict | None) -> dict:
    """The `cancelled` (or `received`) object: when, who (the customer contact unless named) and why."""
    user = dump(body.user) if body.user is not None else fallback_user
    return {"timestamp": timestamp(now), "user": user, "message": body.message or None}


# --- supplier responses ---


def check_response_allowed(status: str, data: Any) -> None:
    """InvalidTransition when §8 forbids the response in `data` on a delivery in `status`, whatever else its body
    says: a final delivery takes none, and an UPDATE waits for an ACCEPT (decisions §8 and §3)."""
    kind = data.get("type") if isinstance(data, dict) else None
    if status in FINAL or kind in set(ResponseType):
        status_after_response(status, kind)


def parse_response(data: Any) -> ResponseBody:
    response = parse(ResponseBody, data)
    errors = []
    if response.type == REJECT and response.scheduled is not None:
        errors.append(FieldError("scheduled", "is not allowed with a REJECT response"))
    if response.type == REJECT and response.empties is not None:
        errors.append(FieldError("empties", "is not allowed with a REJECT response"))
    if response.type == REJECT and response.substitutions is not None:
        errors.append(FieldError("substitutions", "is not allowed with a REJECT response"))
    if errors:
        raise ValidationFailed(errors)
    return response


def answered_line_errors(item, line: dict, path: str) -> list[FieldError]:
    """What a response or a delivery note says of a line (`item.count`, `item.bundle`): a count of 0 or more, whole
    unless by kg, and a bundle named outright."""
    errors = []
    if item.count is not None:
        if item.count < 0:
            errors.append(FieldError(f"{path}.count", "must be 0 or more"))
        else:
            errors += whole_count_errors(item.count, line, f"{path}.count")
    if item.bundle is not None:
        errors += item_bundle_errors(item.bundle, f"{path}.bundle")
    return errors


def item_bundle_errors(bundle: ItemBundle, path: str) -> list[FieldError]:
    """A response names the bundle outright: a pallet must say what it stacks (nothing chooses it)."""
    return pallet_bundle_errors(bundle, path, required=True) + bundle_size_errors(bundle, path)


def response_items(body: ResponseBody, request_items: list[dict]) -> list[dict] | None:
    """The response's items with vessel_count computed, or ValidationFailed naming every wrong field.

    An item names a request item by the id the delivery shows. An omitted count or bundle means the requested
    one, so vessel_count is always what the supplier will actually deliver.
    """
    if body.items is None:
        return None
    by_id = {item["id"]: item for item in request_items}
    errors, seen, result = [], set(), []
    for i, item in enumerate(body.items):
        path = f"items[{i}]"
        requested = by_id.get(item.id)
        if requested is None:
            errors.append(FieldError(f"{path}.id", "is not an item of this delivery"))
            continue
        item_errors = []
        if item.id in seen:
            item_errors.append(FieldError(f"{path}.id", "appears more than once in the response"))
        seen.add(item.id)
        item_errors += answered_line_errors(item, requested, path)
        errors += item_errors
        if item_errors:
            continue
        shown = {"id": item.id}
        if item.count is not None:
            shown["count"] = item.count
        if "bundle" in item.model_fields_set:
            shown["bundle"] = dump(item.bundle) if item.bundle is not None else None
        bundle = shown["bundle"] if "bundle" in shown else requested.get("bundle")
        count = item.count if item.count is not None else requested["count"]
        shown["vessel_count"] = vessel_count(count, bundle)
        if item.price is not None:
            shown["price"] = item.price
        if item.reason is not None:
            shown["reason"] = item.reason
        result.append(shown)
    if errors:
        raise ValidationFailed(errors)
    return result


def build_response(
    body: ResponseBody,
    items: list[dict] | None,
    now: dt.datetime,
    empties: list[dict] | None = None,
    substitutions: list[dict] | None = None,
) -> dict:
    """The response as the delivery stores it; its timestamp is the server's."""
    response = {"type": body.type, "timestamp": timestamp(now)}
    if body.reference is not None:
        response["reference"] = body.reference
    if body.scheduled is not None:
        response["scheduled"] = dump(body.scheduled)
    if items is not None:
        response["items"] = items
    if body.user is not None:
        response["user"] = dump(body.user)
    if body.message is not None:
        response["message"] = body.message
    if empties is not None:
        response["empties"] = empties
    if substitutions is not None:
        response["substitutions"] = substitutions
    return response


def respond(delivery: dict, response: dict) -> dict:
    """The delivery after a response: appended, status moved per §8 (InvalidTransition otherwise).

    ACCEPT and UPDATE are bounded in number and in size, leaving room for the final change; a REJECT never
    counts against them, so it stays possible (decisions §8).
    """
    status = status_after_response(delivery["status"], response["type"])
    final = status in FINAL
    open_responses = sum(1 for r in delivery["responses"] if r["type"] != REJECT)
    if not final and open_responses >= limits.OPEN_RESPONSES:
        raise ValidationFailed(
            [
                FieldError(
                    "type",
                    f"a delivery holds at most {limits.OPEN_RESPONSES} ACCEPT and UPDATE responses; "
                    "REJECT is still possible",
                )
            ]
        )
    changed = {**delivery, "status": status, "responses": [*delivery["responses"], response]}
    size = summary_size(changed)
    if not final and size > limits.OPEN_DELIVERY_BYTES:
        raise ValidationFailed([FieldError("body", _no_room(size))])
    if final and size > limits.DELIVERY_SUMMARY_BYTES:
        raise ValidationFailed(
            [
                FieldError(
                    "items",
                    f"a REJECT with these items does not fit the delivery ({_no_room(size)}); send it without items",
                )
            ]
        )
    return changed


def close(delivery: dict, field: str, status: str, action: dict) -> dict:
    """The delivery after a cancel or a receive. No size check: the room kept for the final change holds any
    `cancelled` or `received` object (limits.FINAL_CHANGE_BYTES; tests/domain/test_limits.py shows it)."""
    return {**delivery, "status": status, field: action}


def summary_size(delivery: dict) -> int:
    """Bytes of the delivery as lists show it (its id included)."""
    return size_in_bytes(without_items(delivery)) + (0 if "id" in delivery else _ID_BYTES)


_ID_BYTES = len('"id":,') + DELIVERY_ID_DIGITS


def _no_room(size: int) -> str:
    return (
        f"the delivery would take {size:,} bytes; with its responses an open delivery holds at most"
        f" {limits.OPEN_DELIVERY_BYTES:,} bytes of JSON, keeping room for REJECT, cancel and receive"
    )


def order_size_errors(deliveries: list[dict]) -> list[FieldError]:
    """The bounds of a new order: its items together, and each delivery's summary (room for responses)."""
    items = [item for delivery in deliveries for item in delivery["request"]["items"]]
    errors = limits.size_errors(items, limits.ORDER_ITEMS_BYTES, "items", "the items of an order hold")
    for delivery in deliveries:
        size = summary_size(delivery)
        if size > limits.OPEN_DELIVERY_BYTES:
            errors.append(FieldError("body", _no_room(size)))
            break
    return errors
