"""The value lists of the catalogue and of accounts, each once (decisions §5-6). Pure and free of pydantic: the
store and cold paths read them. The shapes derive their `Literal`s (and so the OpenAPI enums) from these."""

from enum import StrEnum
from typing import Any, Literal, Mapping


def literal(values: type[StrEnum]) -> Any:
    """The pydantic field type that accepts exactly the enum's values, as plain strings: `Literal["A", "B"]`."""
    return Literal[tuple(member.value for member in values)]


class ProductStatus(StrEnum):
    ACTIVE = "ACTIVE"
    INACTIVE = "INACTIVE"
    OUT_OF_STOCK = "OUT_OF_STOCK"


# What a customer may order: OUT_OF_STOCK items are accepted "as soon as possible" (decisions §7).
ORDERABLE_STATUSES = frozenset({ProductStatus.ACTIVE, ProductStatus.OUT_OF_STOCK})


class OrderBy(StrEnum):
    VESSEL = "vessel"
    KG = "kg"


DEFAULT_ORDER_BY = OrderBy.VESSEL


def order_by_of(product: Mapping) -> str:
    """How a product is ordered; stored products may leave out the default."""
    return product.get("order_by") or DEFAULT_ORDER_BY.value


class PricePer(StrEnum):
    """What a product's price is for."""

    VESSEL = "vessel"
    LITRE = "l"
    KG = "kg"
    HUNDRED_GRAMS = "100g"


def is_by_kg(product_or_item: Mapping) -> bool:
    """A product (or an item showing it) ordered by kg: the only one whose counts may be fractional."""
    return product_or_item.get("order_by") == OrderBy.KG


def price_per_of(product_or_item: Mapping) -> str:
    """What a price is for: as the product says, else its default, a kilo or a vessel (decisions §6)."""
    return product_or_item.get("price_per") or (PricePer.KG if is_by_kg(product_or_item) else PricePer.VESSEL).value


class SubstitutionPolicy(StrEnum):
    """Whether a customer takes a substitute for a line it ordered (decisions §18; EANCOM's "no substitution")."""

    ALLOWED = "ALLOWED"
    NOT_ALLOWED = "NOT_ALLOWED"


SUBSTITUTIONS = "substitutions"  # the customer's field holding it


def substitution_policy_of(customer: Mapping | None) -> str:
    """A customer's policy; customers written before it existed, or without it, allow substitutes."""
    return (customer or {}).get(SUBSTITUTIONS) or SubstitutionPolicy.ALLOWED.value


def with_substitution_policy(customer: dict | None) -> dict | None:
    """The customer as reads show it: its policy always present, after the other fields (field_order.CUSTOMER)."""
    if customer is None:
        return None
    return {**customer, SUBSTITUTIONS: substitution_policy_of(customer)}


class Role(StrEnum):
    """Who holds a token."""

    SUPPLIER = "supplier"
    CUSTOMER = "customer"
