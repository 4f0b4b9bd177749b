"""The shape and rules of scaled pricing (decisions §6), shared by products, customer pricing and price groups."""
import datetime as dt
from typing import Annotated, Literal

from pydantic import Field

from .common import Cents, FieldError, IsoDate, NonNegativeNumber, Shape, is_whole

STRATEGIES = ("VOLUME", "INCREMENTAL", "DIVISIBLE")


class PricePoint(Shape):
    from_: NonNegativeNumber = Field(alias="from")
    price: Cents


PricePoints = Annotated[list[PricePoint], Field(min_length=1, max_length=100)]


class DateOverride(Shape):
    from_date: IsoDate
    to_date: IsoDate | None = None
    price_points: PricePoints


class ScaledPricing(Shape):
    strategy: Literal["VOLUME", "INCREMENTAL", "DIVISIBLE"]
    price_points: PricePoints
    date_overrides: Annotated[list[DateOverride], Field(max_length=100)] | None = None


class PriceLevel(Shape):
    """What customer pricing and each price group hold: a plain price, scaled pricing, or both."""

    price: Cents | None = None
    pricing: ScaledPricing | None = None


def _points_errors(points: list[PricePoint], order_by: str, strategy: str, path: str) -> list[FieldError]:
    errors = []
    seen = set()
    fractional_allowed = order_by == "kg" and strategy == "VOLUME"
    for i, point in enumerate(points):
        if point.from_ in seen:
            errors.append(FieldError(f"{path}[{i}].from", "must be unique within the price points"))
        seen.add(point.from_)
        if not fractional_allowed and not is_whole(point.from_):
            errors.append(FieldError(f"{path}[{i}].from", "must be a whole number unless ordered by kg with VOLUME"))
    return errors


def _overlap_errors(overrides: list[DateOverride], path: str) -> list[FieldError]:
    errors = []
    ranges = []
    for i, override in enumerate(overrides):
        start = dt.date.fromisoformat(override.from_date)
        end = dt.date.fromisoformat(override.to_date) if override.to_date else dt.date.max
        if end < start:
            errors.append(FieldError(f"{path}[{i}].to_date", "must not be before from_date"))
            continue
        for j, (other_start, other_end) in ranges:
            if start <= other_end and other_start <= end:
                errors.append(FieldError(f"{path}[{i}]", f"overlaps date_overrides[{j}]"))
        ranges.append((i, (start, end)))
    return errors


def pricing_errors(pricing: ScaledPricing, order_by: str, path: str = "pricing") -> list[FieldError]:
    """Rules that need the product's order_by; shape rules are already enforced by the model."""
    errors = []
    if order_by == "kg" and pricing.strategy != "VOLUME":
        errors.append(FieldError(f"{path}.strategy", "products ordered by kg only support VOLUME"))
    errors += _points_errors(pricing.price_points, order_by, pricing.strategy, f"{path}.price_points")
    for i, override in enumerate(pricing.date_overrides or []):
        errors += _points_errors(
            override.price_points, order_by, pricing.strategy, f"{path}.date_overrides[{i}].price_points"
        )
    errors += _overlap_errors(pricing.date_overrides or [], f"{path}.date_overrides")
    return errors


def smallest_positive_from(pricing: ScaledPricing):
    positive = [p.from_ for p in pricing.price_points if p.from_ > 0]
    return min(positive) if positive else None
