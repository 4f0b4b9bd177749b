"""Placing an order (decisions §6-8): the customer's body checked against the catalogue, prices and dates.

Pure: everything the order is checked against arrives as data (one read of the store), and the time is a
parameter. The result is the deliveries to create (without ids) or ValidationFailed with one error per problem.
"""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from . import deposit_orders, pricing, schedule
from .common import FieldError, ValidationFailed, dump
from .delivery import (
    REQUESTED,
    BundleChoice,
    OrderBody,
    OrderItem,
    order_size_errors,
    shown_bundle,
    timestamp,
    vessel_count,
    whole_count_errors,
)
from .values import ORDERABLE_STATUSES, ProductStatus, is_by_kg

ACTIVE, OUT_OF_STOCK = ProductStatus.ACTIVE, ProductStatus.OUT_OF_STOCK


class OrderContext(Protocol):
    """What an order is checked against, as stored (store/order_context.py reads it with one BatchGetItem)."""

    @property
    def settings(self) -> dict: ...  # account delivery settings, defaults filled in

    @property
    def customer(self) -> dict | None: ...

    @property
    def products(self) -> dict: ...  # product id -> product document

    @property
    def customer_pricing(self) -> dict: ...  # product id -> {price?, pricing?}

    @property
    def price_groups(self) -> dict: ...  # product id -> {group: {price?, pricing?}}

    @property
    def deposit_types(self) -> dict: ...  # deposit id -> {name, price} (decisions §15)


@dataclass(frozen=True)
class Order:
    deliveries: list[dict]  # without "id": the store numbers them
    product_ids: list[str]  # every distinct product ordered


@dataclass(frozen=True)
class _Line:
    product: dict
    item: dict


def find_bundle(product: dict, choice: BundleChoice) -> dict | None:
    """The product's bundle a choice names: by id (type and size must then agree when given), or type and size."""
    for bundle in product.get("bundles") or ():
        if choice.id is not None and bundle.get("id") != choice.id:
            continue
        if choice.type is not None and bundle["type"] != choice.type:
            continue
        if choice.size is not None and Decimal(bundle["size"]) != choice.size:
            continue
        return bundle
    return None


def level_for(product: dict, context: OrderContext) -> dict:
    """The price level the ordering customer pays for a product: the one rule in pricing.price_for_customer."""
    return pricing.price_for_customer(
        product, context.customer, context.customer_pricing.get(product["id"]), context.price_groups.get(product["id"])
    )


def _unit(product: dict) -> str:
    return "kg" if is_by_kg(product) else "vessels"


def _line(
    item: OrderItem, path: str, product: dict, context: OrderContext, price_date: dt.date
) -> tuple[dict | None, list[FieldError]]:
    """One ordered item as the delivery shows it, or the problems with it."""
    errors = []
    if item.message and not context.settings.get("allow_product_comments"):
        errors.append(FieldError(f"{path}.message", "the supplier does not allow comments on products"))
    count_errors = (
        [FieldError(f"{path}.count", "must be greater than 0")]
        if item.count <= 0
        else whole_count_errors(item.count, product, f"{path}.count")
    )
    errors += count_errors
    count_ok = not count_errors
    bundle = None
    if item.bundle is not None:
        bundle = find_bundle(product, item.bundle)
        if bundle is None:
            errors.append(FieldError(f"{path}.bundle", "is not a bundle of this product"))
    price = None
    if count_ok and bundle is not None:
        errors += deposit_orders.fraction_errors(
            deposit_orders.deposit_packaging(product), vessel_count(item.count, bundle), f"{path}.bundle"
        )
    if count_ok and (item.bundle is None or bundle is not None):
        quantity = Decimal(vessel_count(item.count, bundle))
        level = level_for(product, context)
        minimum = pricing.minimum_quantity(product, level)
        if minimum is not None and quantity < minimum:
            errors.append(FieldError(f"{path}.count", f"is below the minimum order of {minimum} {_unit(product)}"))
        else:
            try:
                price = pricing.unit_price(level, quantity, price_date)
            except pricing.NoApplicablePrice:
                errors.append(FieldError(f"{path}.count", "no price applies to this quantity"))
    if errors:
        return None, errors
    return _request_item(product, item, bundle, price), []


order_line = _line  # an amendment checks its added and changed lines as an order's (domain/amendments.py)


def _request_item(product: dict, item: OrderItem, bundle: dict | None, price: int | None) -> dict:
    shown = {"id": (bundle or {}).get("id_override") or product["id"], "name": product["name"]}
    if product.get("order_by"):
        shown["order_by"] = product["order_by"]
    shown["vessel"] = None if is_by_kg(product) else deposit_orders.without_deposits(product.get("vessel"))
    shown["count"] = item.count
    shown["bundle"] = deposit_orders.without_deposits(shown_bundle(bundle))
    shown["vessel_count"] = vessel_count(item.count, bundle)
    shown["price"] = price
    if product.get("price_per"):
        shown["price_per"] = product["price_per"]
    if item.message:
        shown["message"] = item.message
    deposit_orders.charge_item(product, shown)
    if item.substitute is False:  # after the extension fields of §15 (field_order.REQUEST_ITEM)
        shown["substitute"] = False
    return shown


def _unorderable(product: dict | None, split: bool) -> str | None:
    """Why an item of this product cannot be ordered (None: it can)."""
    if product is None:
        return "is not a product of this supplier"
    if product.get("status") not in ORDERABLE_STATUSES:
        return "is not available for ordering"
    if product["status"] == OUT_OF_STOCK and not split:
        return "is out of stock"
    return None


def item_problems(given: list, context: OrderContext, now: dt.datetime, split: bool = True) -> list[FieldError]:
    """What the well-formed items of a refused order body (each with its position) get wrong against the catalogue:
    named beside the body's own problems (decisions §3, §8: one error per problem). Prices as of today."""
    today = schedule.account_today(now, context.settings)
    errors = []
    for i, item in given:
        product = context.products.get(item.id)
        unorderable = _unorderable(product, split)
        if unorderable is not None:
            errors.append(FieldError(f"items[{i}].id", unorderable))
        else:
            errors += _line(item, f"items[{i}]", product, context, today)[1]
    return errors


def plan_order(body: OrderBody, customer_id: str, context: OrderContext, now: dt.datetime, split: bool = True) -> Order:
    """The deliveries an order creates: one for ACTIVE products and one for OUT_OF_STOCK products.

    OUT_OF_STOCK items are always accepted "as soon as possible" (scheduled null, decisions §7), so the date
    asked for is checked against the ACTIVE products only. Without `split` (a standing order places one delivery
    per date, §17) an OUT_OF_STOCK item is refused naming it.
    """
    settings, customer = context.settings, context.customer
    errors = []
    if body.message and not settings.get("allow_delivery_comments"):
        errors.append(FieldError("message", "the supplier does not allow comments on deliveries"))
    order_date = schedule.account_today(now, settings)
    scheduled_date = dt.date.fromisoformat(body.scheduled.date) if body.scheduled else None
    lines: dict[str, list[_Line]] = {ACTIVE: [], OUT_OF_STOCK: []}
    shown_ids: dict[str, int] = {}
    for i, item in enumerate(body.items):
        path = f"items[{i}]"
        product = context.products.get(item.id)
        unorderable = _unorderable(product, split)
        if unorderable is not None:
            errors.append(FieldError(f"{path}.id", unorderable))
            continue
        stock = product["status"]
        price_date = (scheduled_date or order_date) if stock == ACTIVE else order_date
        shown, item_errors = _line(item, path, product, context, price_date)
        errors += item_errors
        if shown is None:
            lines[stock].append(_Line(product, {}))  # still counts for the date check
            continue
        if shown["id"] in shown_ids:
            errors.append(FieldError(f"{path}.id", f"is already ordered as items[{shown_ids[shown['id']]}]"))
        shown_ids.setdefault(shown["id"], i)
        lines[stock].append(_Line(product, shown))
    active_products = [line.product for line in lines[ACTIVE]]
    if scheduled_date and active_products:
        if not schedule.order_deliverable_on(scheduled_date, now, active_products, customer, settings):
            errors.append(FieldError("scheduled.date", "is not a delivery date for every product ordered"))
    address = dump(body.address) if body.address else (customer or {}).get("address")
    if address is None:
        errors.append(FieldError("address", "is required because the customer profile has no address"))
    errors += deposit_orders.order_errors(body, context.deposit_types)  # empties last, as the body lists them
    if errors:
        raise ValidationFailed(errors)
    deliveries = []
    for stock, scheduled in ((ACTIVE, body.scheduled), (OUT_OF_STOCK, None)):
        if lines[stock] or (stock == ACTIVE and not body.items):  # a RETURN of empties only
            items = [line.item for line in lines[stock]]
            deliveries.append(_delivery(body, customer_id, customer, address, scheduled, items, now))
            packagings = {line.item["id"]: deposit_orders.deposit_packaging(line.product) for line in lines[stock]}
            empties = body.empties if len(deliveries) == 1 else None  # they come back once, with the first
            shown = [(line.item["id"], line.product["id"]) for line in lines[stock]]
            overridden = {item_id: product_id for item_id, product_id in shown if item_id != product_id}
            deposit_orders.finish(deliveries[-1], packagings, context.deposit_types, empties, overridden)
    size_errors = order_size_errors(deliveries)
    if size_errors:
        raise ValidationFailed(size_errors)
    product_ids = list(dict.fromkeys(item.id for item in body.items))
    return Order(deliveries, product_ids)


def _delivery(body: OrderBody, customer_id, customer, address, scheduled, items, now) -> dict:
    customer = customer or {}
    user = dump(body.user)
    company = body.company or customer.get("company")
    request = {
        "timestamp": timestamp(now),
        "company": company,
        "customer_id": customer_id,
        "cost_center": body.cost_center,
        "address": address,
        "scheduled": dump(scheduled) if scheduled else None,
        "user": user,
    }
    if body.message:
        request["message"] = body.message
    request["items"] = items
    return {
        "type": body.type,
        "status": REQUESTED,
        "customer": {
            "id": customer_id,
            "company": customer.get("company") or company,
            "address": customer.get("address") or address,
            "contact": customer.get("contact") or user,
        },
        "request": request,
        "responses": [],
    }
