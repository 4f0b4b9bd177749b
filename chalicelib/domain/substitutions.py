"""Substitutes (decisions §18): a product delivered in place of a line of the delivery, named by an ACCEPT or
UPDATE response, or by the delivery note.

Pure: the delivery as read, what an order is checked against (ordering.OrderContext: the customer, the substitute
products and their pricing, read once) and the date prices apply on arrive as data. A substitute is checked as an
order's item (count, bundle, minimum, whole vessels where deposits are charged) and priced as one; it is shown with
the product id it was given by (a product id names one delivered line) and its vessel_count.
"""

import datetime as dt

from . import deposit_orders, deposits, schedule
from .common import FieldError, ValidationFailed
from .delivery import OrderItem, SubstitutionBody
from .ordering import OrderContext, order_line
from .values import SubstitutionPolicy, substitution_policy_of

PATH = "substitutions"


current = deposits.substitutes_of  # the substitutes the responses state ([] clears them)


def price_date(request: dict, responses: list[dict], stated: dict | None, settings: dict) -> dt.date:
    """The delivery's date (§6): the schedule being stated now, else the latest response's, else the requested one,
    else the day it was ordered (in the account's time zone)."""
    for scheduled in (stated, *(r.get("scheduled") for r in reversed(responses)), request.get("scheduled")):
        if scheduled:
            return dt.date.fromisoformat(scheduled["date"])
    ordered_at = dt.datetime.fromisoformat(request["timestamp"].replace("Z", "+00:00"))
    return schedule.account_today(ordered_at, settings)


def _product_of_line(item_id: str, products: dict) -> str | None:
    """The product among `products` that a line of the delivery shows (its id, or one of its bundles' id_override)."""
    for product_id, product in products.items():
        overrides = {b.get("id_override") for b in product.get("bundles") or () if b.get("id_override")}
        if item_id == product_id or item_id in overrides:
            return product_id
    return None


def _for_errors(given: SubstitutionBody, path: str, lines: dict, policy: str, replaced: dict) -> list[FieldError]:
    line = lines.get(given.for_)
    if line is None:
        return [FieldError(f"{path}.for", "is not an item of this delivery")]
    if given.for_ in replaced:
        return [
            FieldError(f"{path}.for", f"is replaced by {PATH}[{replaced[given.for_]}] already: one substitute a line")
        ]
    if policy == SubstitutionPolicy.NOT_ALLOWED:
        return [FieldError(f"{path}.for", "may not be substituted: the customer takes no substitutes")]
    if line.get("substitute") is False:
        return [FieldError(f"{path}.for", "may not be substituted: the customer ordered it with substitute false")]
    return []


def _id_errors(given: SubstitutionBody, path: str, context: OrderContext, shown_by: dict, taken: dict) -> list:
    product = context.products.get(given.id)
    if product is None:
        return [FieldError(f"{path}.id", "is not a product of this supplier")]
    if product.get("status") == "INACTIVE":
        return [FieldError(f"{path}.id", "is not available (INACTIVE)")]
    if given.id in shown_by:
        return [FieldError(f"{path}.id", f"is a line of this delivery ({shown_by[given.id]})")]
    if given.id in taken:
        return [FieldError(f"{path}.id", f"is the substitute of {PATH}[{taken[given.id]}] already")]
    return []


def substituted(
    given: list[SubstitutionBody], delivery: dict, context: OrderContext, on: dt.date, path: str = PATH
) -> list[dict]:
    """The substitutes as the delivery shows them, or ValidationFailed naming every wrong field of them."""
    lines = {item["id"]: item for item in delivery["request"].get("items") or ()}
    # A product id names one delivered line: a product a line shows (by its id or a bundle's id_override) is that line.
    shown_by = {pid: item_id for item_id in lines if (pid := _product_of_line(item_id, context.products))}
    shown_by.update({item_id: item_id for item_id in lines})
    policy = substitution_policy_of(context.customer)
    errors, shown, replaced, taken = [], [], {}, {}
    for i, substitute in enumerate(given):
        where = f"{path}[{i}]"
        problems = _for_errors(substitute, where, lines, policy, replaced)
        replaced.setdefault(substitute.for_, i)
        named = _id_errors(substitute, where, context, shown_by, taken)
        taken.setdefault(substitute.id, i)
        problems += named
        if not named:
            item = OrderItem(id=substitute.id, count=substitute.count, bundle=substitute.bundle)
            line, wrong = order_line(item, where, context.products[substitute.id], context, on)
            problems += wrong
        errors += problems
        if not problems:
            price = substitute.price if substitute.price is not None else line["price"]
            shown.append(
                {
                    "for": substitute.for_,
                    "id": substitute.id,
                    "count": line["count"],
                    "bundle": line["bundle"],
                    "vessel_count": line["vessel_count"],
                    "price": price,
                }
            )
    if errors:
        raise ValidationFailed(errors)
    return shown


def packagings(given: list[SubstitutionBody], context: OrderContext) -> dict[str, dict]:
    """The deposits of each substitute's packaging (decisions §15), by the id it is shown with; those that carry none
    are left out."""
    found = {s.id: deposit_orders.deposit_packaging(context.products[s.id]) for s in given if s.id in context.products}
    return {product_id: packaging for product_id, packaging in found.items() if packaging}


def with_packagings(basis: dict | None, added: dict[str, dict], deposit_types: dict) -> dict | None:
    """The delivery's deposit basis with the substitutes' packaging, each type they name valued as it is now unless
    the delivery valued it already (one name and price per type, decisions §15)."""
    if not added:
        return basis
    basis = dict(basis or {"packaging": {}, "types": {}})
    named = {d for p in added.values() for d in [p.get("vessel"), *(b["deposit"] for b in p["bundles"])] if d}
    types = {
        d: {"name": deposit_types[d]["name"], "price": deposit_types[d]["price"]} for d in named if d in deposit_types
    }
    basis["packaging"] = {**(basis.get("packaging") or {}), **added}
    basis["types"] = {**types, **(basis.get("types") or {})}
    return basis
