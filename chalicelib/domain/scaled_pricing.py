"""The shape and rules of scaled pricing (decisions §6), shared by products, customer pricing and price groups."""

import datetime as dt
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, RootModel, Strict, ValidationError

from . import limits
from .common import Cents, FieldError, IsoDate, NonNegativeNumber, Shape, ValidationFailed, dump, is_whole, parse
from .pricing import PricingStrategy
from .values import OrderBy, literal


class PricePoint(Shape):
    from_: NonNegativeNumber = Field(alias="from")
    price: Cents


PricePoints = Annotated[list[PricePoint], Field(min_length=1, max_length=100)]


class DateOverride(Shape):
    from_date: IsoDate
    to_date: IsoDate | None = None
    price_points: PricePoints


class ScaledPricing(Shape):
    strategy: literal(PricingStrategy)
    price_points: PricePoints
    date_overrides: Annotated[list[DateOverride], Field(max_length=100)] | None = None


class PriceLevel(Shape):
    """What customer pricing and each price group hold: a plain price, scaled pricing, or both."""

    price: Cents | None = None
    pricing: ScaledPricing | None = None


MAX_PRICE_GROUPS = 100


def _price_group_name(value: str) -> str:
    # Inner spaces are fine ("key accounts"); edge spaces would make two names that look alike.
    if not (len(value) <= 64 and re.fullmatch(r"[a-zA-Z0-9_-]([a-zA-Z0-9_ -]*[a-zA-Z0-9_-])?", value)):
        raise ValueError("must be 1 to 64 characters of [a-zA-Z0-9_ -], not starting or ending with a space")
    return value


PriceGroupName = Annotated[str, Strict(), AfterValidator(_price_group_name)]


class PriceGroups(RootModel[Annotated[dict[PriceGroupName, PriceLevel], Field(max_length=MAX_PRICE_GROUPS)]]):
    """The price groups of one product: group name -> its price level (PUT replaces the whole map)."""


def _points_errors(points: list[PricePoint], order_by: str, strategy: str, path: str) -> list[FieldError]:
    errors = []
    seen = set()
    fractional_allowed = order_by == OrderBy.KG and strategy == PricingStrategy.VOLUME
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
    if order_by == OrderBy.KG and pricing.strategy != PricingStrategy.VOLUME:
        errors.append(FieldError(f"{path}.strategy", "products ordered by kg only support VOLUME"))
    errors += _points_errors(pricing.price_points, order_by, pricing.strategy, f"{path}.price_points")
    for i, override in enumerate(pricing.date_overrides or []):
        errors += _points_errors(
            override.price_points, order_by, pricing.strategy, f"{path}.date_overrides[{i}].price_points"
        )
    errors += _overlap_errors(pricing.date_overrides or [], f"{path}.date_overrides")
    return errors


def levels_broken_by(levels: list[tuple[str, dict]], order_by: str) -> list[str]:
    """The names of the price levels (customer pricing, price groups) whose scaled pricing the rules of `order_by`
    refuse (decisions §6): a product cannot switch between vessel and kg under them."""
    return [name for name, level in levels if _rules_of(level.get("pricing"), order_by, "pricing")]


def _rules_of(raw: Any, order_by: str, path: str) -> list[FieldError]:
    """Rule errors of a pricing that is well-shaped on its own, even when a sibling field is not."""
    try:
        pricing = ScaledPricing.model_validate(raw)
    except ValidationError:
        return []  # its shape errors are reported by the parse of the whole body
    return pricing_errors(pricing, order_by, path)


def _validated(model: type[BaseModel], data: Any, pricings: list[tuple[Any, str]], order_by: str):
    try:
        parsed, errors = parse(model, data), []
    except ValidationFailed as failure:
        parsed, errors = None, failure.errors
    errors += [error for raw, path in pricings for error in _rules_of(raw, order_by, path)]
    if errors:
        raise ValidationFailed(errors)
    return parsed


def validate_price_level(data: Any, order_by: str) -> dict:
    """Customer pricing: its shape and the scaled pricing rules against the product's order_by, all errors at once.

    Its smallest positive `from` need not equal the product's min_order_count; an order's minimum is then the
    larger of the two (decisions §6).
    """
    pricing = data.get("pricing") if isinstance(data, dict) else None
    level = dump(_validated(PriceLevel, data, [(pricing, "pricing")] if pricing is not None else [], order_by))
    errors = level_size_errors(level, "body")
    if errors:
        raise ValidationFailed(errors)
    return level


def level_size_errors(level: dict, path: str) -> list[FieldError]:
    """A price level (price and pricing) is at most limits.PRICING_BYTES: the customer's view of a product
    shows one in place of the product's own, and a full page of those must stay under 5 MiB."""
    priced = {k: level[k] for k in ("price", "pricing") if level.get(k) is not None}
    return limits.size_errors(priced, limits.PRICING_BYTES, path, "a price level holds")


def validate_price_groups(data: Any, order_by: str) -> dict:
    """A product's price-group map: every group validated like customer pricing, errors prefixed by its name."""
    pricings = [
        (level["pricing"], f"{name}.pricing")
        for name, level in (data.items() if isinstance(data, dict) else ())
        if isinstance(level, dict) and level.get("pricing") is not None
    ]
    groups = _validated(PriceGroups, data, pricings, order_by)
    stored = {name: dump(level) for name, level in groups.root.items()}
    errors = [error for name, level in stored.items() for error in level_size_errors(level, name)]
    errors += limits.size_errors(stored, limits.PRICE_GROUPS_BYTES, "body", "a product's price groups hold")
    if errors:
        raise ValidationFailed(errors)
    return stored
