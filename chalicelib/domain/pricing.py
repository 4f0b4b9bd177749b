"""Scaled pricing (decisions §6).

Pure functions over mappings as they are stored: numbers are ``int`` or
``Decimal`` (never float) and dates are ISO strings. Amounts are cents for one
vessel, or for one kilo of a ``kg`` product. Totals are exact; only the unit
price is rounded, because that is the figure an order item carries.

A *level* is any mapping with optional ``price`` and ``pricing`` keys: a product, a customer's pricing or a price
group's pricing.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal
from enum import StrEnum
from typing import Any, Callable, Iterable, Mapping, Sequence


class PricingStrategy(StrEnum):
    """How price points charge a quantity (the strategies below); the one list the shapes derive theirs from."""

    VOLUME = "VOLUME"
    INCREMENTAL = "INCREMENTAL"
    DIVISIBLE = "DIVISIBLE"


PricePoint = Mapping[str, Any]


class NoApplicablePrice(ValueError):
    """No price point applies to the quantity, so the price is undefined."""


def applicable_level(product: Mapping, customer_pricing: Mapping | None, group_pricing: Mapping | None) -> Mapping:
    """The level whose price a customer pays: their own, else their group's, else the product's."""
    for level in (customer_pricing, group_pricing):
        if _sets_a_price(level):
            return level
    return product


def price_for_customer(
    product: Mapping, customer: Mapping | None, customer_pricing: Mapping | None, group_map: Mapping | None
) -> Mapping:
    """The one place that decides which pricing applies to a customer (decisions §6).

    ``group_map`` is the product's whole price-group map; the customer's ``price_group`` picks from it.
    A group the product does not price falls through to the product.
    """
    group = (customer or {}).get("price_group")
    group_pricing = (group_map or {}).get(group) if group is not None else None
    return applicable_level(product, customer_pricing, group_pricing)


def as_priced_for_customer(product: Mapping, level: Mapping) -> dict:
    """The product as a customer sees it: ``price``/``pricing`` of the level that applies to them and the
    minimum they may order.

    When the level has ``pricing`` its plain ``price`` is ignored, so it is not shown either.
    """
    shown = {key: value for key, value in product.items() if key not in ("price", "pricing")}
    if level.get("pricing") is not None:
        shown["pricing"] = level["pricing"]
    elif level.get("price") is not None:
        shown["price"] = level["price"]
    minimum = minimum_quantity(product, level)
    if minimum is not None:
        shown["min_order_count"] = minimum
    return shown


def price_points_on(pricing: Mapping, on: dt.date) -> list[PricePoint]:
    """The points valid on a date: a covering date override, else the base points; sorted by ``from``.

    Overrides may not overlap (validated on write), so the first covering one is the only one.
    """
    override = next((o for o in pricing.get("date_overrides") or () if _covers(o, on)), None)
    points = (override or pricing)["price_points"]
    return sorted(points, key=lambda point: point["from"])


def total_price(pricing: Mapping, quantity: Decimal, on: dt.date) -> Decimal:
    """The exact total in cents for ``quantity`` units (vessels or kilos) under the pricing's strategy.

    Raises ``NoApplicablePrice`` when no point applies (quantity below the smallest ``from``,
    or for ``DIVISIBLE`` no positive ``from`` divides it).
    """
    quantity = _positive_quantity(quantity)
    strategy = pricing["strategy"]
    try:
        charge = _STRATEGIES[strategy]
    except KeyError:
        raise ValueError(f"unknown pricing strategy: {strategy!r}") from None
    return charge(price_points_on(pricing, on), quantity)


def unit_price(level: Mapping, quantity: Decimal, on: dt.date) -> int | None:
    """The expected price of one unit: total / quantity rounded half up, or the plain ``price``.

    ``pricing`` wins over ``price`` on the same level; ``None`` when the level sets neither.
    """
    quantity = _positive_quantity(quantity)
    pricing = level.get("pricing")
    if pricing is None:
        return level.get("price")
    average = total_price(pricing, quantity, on) / quantity
    return int(average.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def minimum_quantity(product: Mapping, level: Mapping) -> Decimal | None:
    """The smallest quantity a customer paying ``level`` may order; ``None`` means no minimum.

    ``level`` is the mapping ``applicable_level`` returned: when it *is* the product (identity),
    the product's own minimum applies; otherwise a customer or group pricing can only raise it.
    (For a validated product both readings agree, since ``min_order_count`` must equal the
    smallest positive ``from``.)
    """
    own = _product_minimum(product)
    if level is product:
        return own
    return max((m for m in (own, smallest_positive_from(level)) if m is not None), default=None)


# --- strategies: each takes points sorted by ``from`` and a positive Decimal quantity ---


def _volume(points: Sequence[PricePoint], quantity: Decimal) -> Decimal:
    """The highest point reached prices every unit."""
    return _all_units_at(_highest(p for p in points if p["from"] <= quantity), quantity)


def _divisible(points: Sequence[PricePoint], quantity: Decimal) -> Decimal:
    """The highest ``from`` that divides the quantity evenly prices every unit (0 divides nothing)."""
    dividing = (p for p in points if p["from"] > 0 and quantity % p["from"] == 0)
    return _all_units_at(_highest(dividing), quantity)


def _incremental(points: Sequence[PricePoint], quantity: Decimal) -> Decimal:
    """Graduated: each unit is charged at the price of the band it falls in.

    Unit ``n`` occupies the interval (n-1, n], so the band of a point at ``from`` covers
    (from-1, next_from-1]. Points at 1, 6, 96 give units 1-5, 6-95 and 96+. The lowest band
    starts at unit 1 whatever its ``from``: with points at 5 and 10 an order of 7 pays the
    first price for all 7 units, not for units 5-7 only. A fractional quantity (only
    reachable for unvalidated data: kg products must use VOLUME) is charged proportionally
    for the part of a unit it covers.
    """
    if not points or quantity < points[0]["from"]:
        raise NoApplicablePrice(f"no price point applies to quantity {quantity}")
    total = Decimal(0)
    band_starts = [Decimal(0)] + [p["from"] - 1 for p in points[1:]]
    band_ends = band_starts[1:] + [quantity]
    for point, band_start, band_end in zip(points, band_starts, band_ends):
        units_in_band = min(quantity, band_end) - band_start
        if units_in_band > 0:
            total += units_in_band * point["price"]
    return total


_STRATEGIES: dict[str, Callable[[Sequence[PricePoint], Decimal], Decimal]] = {
    PricingStrategy.VOLUME: _volume,
    PricingStrategy.INCREMENTAL: _incremental,
    PricingStrategy.DIVISIBLE: _divisible,
}


# --- helpers ---


def _sets_a_price(level: Mapping | None) -> bool:
    return level is not None and (level.get("price") is not None or level.get("pricing") is not None)


def _covers(override: Mapping, on: dt.date) -> bool:
    to_date = override.get("to_date")
    return dt.date.fromisoformat(override["from_date"]) <= on and (
        to_date is None or on <= dt.date.fromisoformat(to_date)
    )


def _highest(points: Iterable[PricePoint]) -> PricePoint:
    """The last of already sorted candidate points."""
    candidates = list(points)
    if not candidates:
        raise NoApplicablePrice("no price point applies to the quantity")
    return candidates[-1]


def _all_units_at(point: PricePoint, quantity: Decimal) -> Decimal:
    return Decimal(point["price"]) * quantity


def _positive_quantity(quantity: Decimal | int) -> Decimal:
    """Quantities are exact numbers above zero; floats would make totals inexact."""
    if isinstance(quantity, (float, bool)):
        raise TypeError(f"quantity must be int or Decimal, not {type(quantity).__name__}")
    quantity = Decimal(quantity)
    if not quantity.is_finite() or quantity <= 0:
        raise ValueError(f"quantity must be greater than 0, got {quantity}")
    return quantity


def _product_minimum(product: Mapping) -> Decimal | None:
    if product.get("min_order_count") is not None:
        return Decimal(product["min_order_count"])
    return smallest_positive_from(product)


def smallest_positive_from(level: Mapping) -> Decimal | None:
    """A level's own minimum: its base points' smallest positive ``from`` (date overrides aside).

    A validated product's ``min_order_count`` must equal it (domain/product.py checks that with this function).
    """
    pricing = level.get("pricing")
    froms = [p["from"] for p in pricing["price_points"] if p["from"] > 0] if pricing else []
    return Decimal(min(froms)) if froms else None
