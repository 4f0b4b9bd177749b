"""Amendments before the cutoff (decisions §16): the customer's whole new item list, date, empties and message,
checked as an order's, applied to the delivery, with the record of what changed line by line.

Pure: the delivery as read, what an order is checked against (ordering.OrderContext, read once) and the time
arrive as data. A line is a product: an item of the delivery belongs to the product whose id it shows, or whose
bundle's `id_override` it shows.
"""

import datetime as dt
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Annotated

from pydantic import Field

from . import deposit_orders, deposits, limits, schedule
from .common import FieldError, Shape, Text, ValidationFailed, dump
from .delivery import ACCEPTED, DELIVERY, REQUESTED, RETURN, LineAction, OrderItem, order_size_errors, timestamp
from .delivery_views import Scheduled, User
from .deposit_types import Empties, empties_errors
from .errors import InvalidTransition
from .ordering import OUT_OF_STOCK, OrderContext, find_bundle, order_line
from .values import ORDERABLE_STATUSES

AMENDABLE_STATUSES = frozenset({REQUESTED, ACCEPTED})
AMENDABLE_TYPES = frozenset({DELIVERY, RETURN})
# The key under which the amended delivery hands its new deposit basis to the service (as ordering's BASIS).
BASIS = deposit_orders.BASIS
# Where the counting of a delivery's deposits starts in its responses: those before the latest amendment answered
# an earlier version of the order (decisions §16). Kept in the basis, beside the document.
RESPONSES_FROM = deposits.RESPONSES_FROM
# In the basis too: responses before the latest amendment that set a date state no date any more.
DATED_FROM = "dated_from"


class AmendmentBody(Shape):
    """POST /customer/deliveries/:id/amendments: the whole new order; what is left out stays as it is."""

    items: Annotated[list[OrderItem], Field(max_length=limits.ORDER_ITEMS)] = Field(
        description="The whole new list of items, one line per product (a RETURN may send [] and keep only empties)"
    )
    scheduled: Scheduled | None = Field(
        default=None, description="When present, the new date (null: as soon as possible)"
    )
    empties: Empties | None = Field(
        default=None, description="When present, replaces the announced empties (decisions §15)"
    )
    message: Text | None = Field(default=None, description="When present, replaces the order's message")
    user: User


@dataclass(frozen=True)
class Amended:
    delivery: dict | None  # None: the amendment changes nothing (no write, no record)
    basis: dict | None = None
    added: tuple[str, ...] = ()  # the products of its added lines: ordered now, so used (decisions §5)


def planned_date(delivery: dict, basis: dict | None) -> dict | None:
    """The date the delivery is for (decisions §16): the one the latest response states, with its time if it gave
    one (responses made before an amendment that set a new date state none), else the requested one; None: as soon
    as possible."""
    for response in reversed((delivery.get("responses") or [])[(basis or {}).get(DATED_FROM, 0) :]):
        if response.get("scheduled"):
            return dict(response["scheduled"])
    return delivery["request"].get("scheduled")


def _product_of(item: dict, products: dict) -> str | None:
    """The product a delivery's item belongs to, among those read."""
    for product_id, product in products.items():
        overrides = {b.get("id_override") for b in product.get("bundles") or () if b.get("id_override")}
        if item["id"] == product_id or item["id"] in overrides:
            return product_id
    return None


def _product(item: dict, products: dict) -> dict | None:
    found = _product_of(item, products)
    return products[found] if found is not None else None


def _same_bundle(stored: dict | None, choice) -> bool:
    if choice is None or stored is None:
        return choice is None and stored is None
    return find_bundle({"bundles": [stored]}, choice) is not None


def _same_quantity(item: dict, line: OrderItem) -> bool:
    return item["count"] == line.count and _same_bundle(item.get("bundle"), line.bundle)


def _kept(item: dict, line: OrderItem) -> bool:
    return (
        _same_quantity(item, line)
        and item.get("message") == (line.message or None)
        and item.get("substitute") == line.substitute
    )


def _relabelled(item: dict, line: OrderItem) -> dict:
    """A line whose count and bundle stay: only its message and its `substitute` (decisions §18) change, and it
    keeps its price (decisions §16)."""
    changed = {k: v for k, v in item.items() if k not in ("message", "substitute")}
    if line.message:
        changed["message"] = line.message
    if line.substitute is False:
        changed["substitute"] = False
    return {name: changed[name] for name in (*item, "message", "substitute") if name in changed}


def check_amendable(delivery: dict) -> None:
    """400 invalid-transition for a delivery no amendment may change."""
    if delivery["status"] not in AMENDABLE_STATUSES:
        raise InvalidTransition(f"a {delivery['status']} delivery cannot be amended")
    if delivery.get("type", DELIVERY) not in AMENDABLE_TYPES:
        raise InvalidTransition(f"a delivery of type {delivery['type']} cannot be amended")


def amend(delivery: dict, basis: dict | None, body: AmendmentBody, context: OrderContext, now: dt.datetime) -> Amended:
    """The delivery as the amendment leaves it (with its new basis), or ValidationFailed / InvalidTransition."""
    check_amendable(delivery)
    request = delivery["request"]
    given = body.model_fields_set
    planned = planned_date(delivery, basis)
    if delivery["status"] == ACCEPTED:
        _check_accepted(delivery, planned, body, context, now)
    scheduled = (dump(body.scheduled) if body.scheduled is not None else None) if "scheduled" in given else None
    date = scheduled if "scheduled" in given else planned  # what the amended order is checked against
    scheduled = scheduled if "scheduled" in given else request.get("scheduled")
    # The date moves when it differs from the one the delivery is for, which a response may have set: the requested
    # date asked for again after the supplier accepted another is a change.
    moved_from = planned if "scheduled" in given and scheduled != planned else _UNMOVED
    message = body.message or None if "message" in given else request.get("message")
    errors: list[FieldError] = []
    if (
        "message" in given
        and message
        and message != request.get("message")
        and not context.settings.get("allow_delivery_comments")
    ):
        errors.append(FieldError("message", "the supplier does not allow comments on deliveries"))
    order_date = schedule.account_today(now, context.settings)
    price_date = dt.date.fromisoformat(date["date"]) if date else order_date
    items, lines, packaging, line_errors, added = _lines(request, basis, body.items, context, price_date, date is None)
    errors += line_errors
    ordered = [context.products[line.id] for line in body.items if line.id in context.products]
    if date is not None and not schedule.order_deliverable_on(
        dt.date.fromisoformat(date["date"]), now, ordered, context.customer, context.settings
    ):
        errors.append(
            FieldError("scheduled", "is not a delivery date for every item at this moment (its cutoff has passed)")
        )
    empties = [dump(e) for e in body.empties or ()] if "empties" in given else None
    if empties is not None:
        errors += empties_errors(body.empties or [], context.deposit_types, "empties", 1)
    if not body.items and (
        delivery.get("type") != RETURN or not (empties if empties is not None else request.get("empties"))
    ):
        errors.append(
            FieldError(
                "items",
                "must hold at least one item (only a RETURN may carry empties alone; cancel to drop everything)",
            )
        )
    if errors:
        raise ValidationFailed(errors)
    amended_request = {**request, "scheduled": scheduled, "items": items}
    amended_request.pop("message", None)
    if message:
        amended_request["message"] = message
    changed_empties = empties is not None and _counts(empties) != _counts(request.get("empties"))
    if not lines and moved_from is _UNMOVED and message == request.get("message") and not changed_empties:
        return Amended(None)
    amended = _applied(delivery, basis, body, now, amended_request, lines, packaging, empties, context, moved_from)
    return Amended(amended.delivery, amended.basis, tuple(added))


def _check_accepted(delivery: dict, planned: dict | None, body: AmendmentBody, context: OrderContext, now) -> None:
    """An ACCEPTED delivery is amended only on a date, and only before the cutoff of the date it is accepted for
    (the supplier has planned it), whatever new date the amendment asks for (decisions §16)."""
    if planned is None or ("scheduled" in body.model_fields_set and body.scheduled is None):
        raise InvalidTransition(
            "an ACCEPTED delivery is amended only on a date: as soon as possible, it may be on its way"
        )
    products = [p for p in (_product(item, context.products) for item in delivery["request"].get("items") or ())]
    if not schedule.order_deliverable_on(
        dt.date.fromisoformat(planned["date"]), now, [p for p in products if p], context.customer, context.settings
    ):
        raise InvalidTransition(
            f"the delivery is accepted for {planned['date']}, whose cutoff has passed: it can no longer be amended"
        )


def _lines(
    request: dict, basis: dict | None, new: list[OrderItem], context: OrderContext, price_date: dt.date, asap: bool
):
    """The new items (kept ones as they were), the record's line entries (removed ones last), the packaging the
    deposits are counted from, the problems of added and changed lines (checked as an order's), and the products of
    the added lines."""
    by_product: dict[str, dict] = {}
    for item in request.get("items") or ():
        product_id = _product_of(item, context.products)
        by_product[product_id if product_id is not None and product_id not in by_product else f"\0{item['id']}"] = item
    items, lines, errors, seen, added = [], [], [], set(), []
    packaging = dict((basis or {}).get("packaging") or {})
    for i, line in enumerate(new):
        path = f"items[{i}]"
        if line.id in seen:
            errors.append(FieldError(path, "names a product already in the list: an order holds each product once"))
            continue
        seen.add(line.id)
        before, product = by_product.pop(line.id, None), context.products.get(line.id)
        if before is not None and _kept(before, line):
            items.append(before)
            continue
        if before is not None and _same_quantity(before, line) and before.get("message") == (line.message or None):
            items.append(_relabelled(before, line))  # only `substitute` changed: nothing to check again
            lines.append(_entry(items[-1], LineAction.CHANGED, before))
            continue
        if product is None or product.get("status") not in ORDERABLE_STATUSES:
            reason = "is not a product of this supplier" if product is None else "is not available for ordering"
            errors.append(FieldError(f"{path}.id", reason))
            continue
        if product["status"] == OUT_OF_STOCK and not asap:
            errors.append(
                FieldError(
                    f"{path}.id",
                    "is out of stock: it can be added or changed only as soon as possible (scheduled null)",
                )
            )
            continue
        shown, problems = order_line(line, path, product, context, price_date)
        errors += problems
        if shown is not None and before is not None and _same_quantity(before, line):
            items.append(_relabelled(before, line))  # a new message, checked as an order's; the line as it was
            lines.append(_entry(items[-1], LineAction.CHANGED, before))
            continue
        if shown is not None and any(item["id"] == shown["id"] for item in items):  # two products, one bundle id
            errors.append(FieldError(f"{path}.id", f"is shown as {shown['id']}, as another line of the order"))
        elif shown is not None:
            packaging.pop(before["id"] if before is not None else None, None)
            packaging[shown["id"]] = deposit_orders.deposit_packaging(product)
            items.append(shown)
            lines.append(_entry(shown, LineAction.ADDED if before is None else LineAction.CHANGED, before))
            added += [line.id] if before is None else []
    for item in by_product.values():
        packaging.pop(item["id"], None)
        lines.append(_entry(item, LineAction.REMOVED, item))
    return items, lines, packaging, errors, added


def _counts(entries) -> dict:
    return {e["id"]: int(e["count"]) for e in entries or ()}


def _entry(item: dict, action: LineAction, before: dict | None) -> dict:
    return {
        "id": item["id"],
        "bundle": item.get("bundle"),
        "action": str(action),
        "count_before": before["count"] if before is not None and action != LineAction.ADDED else 0,
        "count": 0 if action == LineAction.REMOVED else item["count"],
    }


_UNMOVED = object()  # the amendment leaves the delivery's date as it is


def _applied(delivery, basis, body, now, request, lines, packaging, empties, context, moved_from) -> Amended:
    """The amended delivery: new request, REQUESTED, its deposits and empties as the delivery names its types;
    `moved_from` the date it was for when the amendment moves it (else _UNMOVED)."""
    types = {**context.deposit_types, **((basis or {}).get("types") or {}), **deposits.known_types(delivery, basis)}
    amended = {
        **delivery,
        "status": REQUESTED,
        "request": {k: v for k, v in request.items() if k not in ("deposits", "empties")},
    }
    kept_empties = (
        empties
        if empties is not None
        else [{"id": e["id"], "count": e["count"]} for e in delivery["request"].get("empties") or ()]
    )
    overridden, known = {}, deposit_orders.products_of(basis)
    for item in request.get("items") or ():
        product_id = _product_of(item, context.products) or known.get(item["id"])
        if product_id is not None and product_id != item["id"]:
            overridden[item["id"]] = product_id
    deposit_orders.finish(amended, packaging, types, [SimpleNamespace(**e) for e in kept_empties], overridden)
    new_basis = amended.pop(BASIS) or {"packaging": {}, "types": {}}
    new_basis[RESPONSES_FROM] = len(delivery.get("responses") or ())
    dated = moved_from is not _UNMOVED
    new_basis[DATED_FROM] = new_basis[RESPONSES_FROM] if dated else (basis or {}).get(DATED_FROM, 0)
    record = {
        "sequence": len(delivery.get("amendments") or ()) + 1,
        "timestamp": timestamp(now),
        "user": dump(body.user),
    }
    if body.message:
        record["message"] = body.message
    if dated:
        record["scheduled"] = {"from": moved_from, "to": request.get("scheduled")}
    record["items"] = lines
    amended["amendments"] = [*(delivery.get("amendments") or ()), record]
    errors = _limit_errors(amended)
    if errors:
        raise ValidationFailed(errors)
    return Amended(amended, new_basis)


def _limit_errors(amended: dict) -> list[FieldError]:
    """At most AMENDMENTS per delivery and AMENDMENTS_BYTES of their records; the new order within an order's bounds."""
    records = amended["amendments"]
    if len(records) > limits.AMENDMENTS:
        return [FieldError("items", f"a delivery takes at most {limits.AMENDMENTS} amendments; cancel and order again")]
    errors = limits.size_errors(records, limits.AMENDMENTS_BYTES, "items", "the amendments of a delivery hold")
    return errors + order_size_errors([amended])
