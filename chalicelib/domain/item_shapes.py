"""Shapes an item of an order or an answer names products and bundles by (decisions §8, §18): a bundle chosen by id or
by type and size, and a substitute; apart from domain/delivery.py, which uses them, to keep each module short."""

from typing import Annotated

from pydantic import Field, model_validator

from . import limits
from .common import BundleCode, Cents, Number, PositiveNumber, Shape, ShortText


class BundleChoice(Shape):
    """One of the product's bundles, named by its id or by type and size."""

    id: ShortText | None = None
    type: BundleCode | None = None
    size: PositiveNumber | None = None

    @model_validator(mode="after")
    def _named(self):
        if self.id is None and (self.type is None or self.size is None):
            raise ValueError("name the bundle by id, or by type and size")
        return self


class SubstitutionBody(Shape):
    """A substitute (decisions §18; domain/substitutions.py checks it): `for` the line it replaces, `id` the product
    delivered instead."""

    for_: ShortText = Field(
        alias="for", description="The line it replaces: an item of the delivery, by the id it shows"
    )
    id: ShortText = Field(description="The product delivered instead: not INACTIVE, not a line of the delivery")
    count: Number = Field(description="Bundles, vessels or kilos of it, checked as an order's item")
    bundle: BundleChoice | None = Field(default=None, description="One of the product's bundles, as an order names it")
    price: Cents | None = Field(
        default=None, description="Unit price in cents; by default the price that applies to the customer (§6)"
    )


Substitutions = Annotated[list[SubstitutionBody], Field(max_length=limits.ORDER_ITEMS)]
SUBSTITUTIONS_DESCRIPTION = (
    "ACCEPT and UPDATE: products delivered in place of lines (decisions §18), replacing those of earlier responses"
)
