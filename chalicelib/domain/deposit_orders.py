"""Deposits and empties of a new order (decisions §15): each item's `deposits`, `request.deposits`,
`request.empties`, and the basis a delivery keeps to count its deposits later (domain/deposits.py)."""

from decimal import Decimal

from .common import FieldError, is_whole
from .deposit_types import empties_entries, empties_errors, empties_size_errors
from .deposits import add, as_list, deposit_packaging, entries, item_charges  # noqa: F401 (deposit_packaging: ordering)

# The key under which plan_order hands each delivery's basis to the service (which stores it beside the delivery).
BASIS = "deposit_basis"


def without_deposits(packaging: dict | None) -> dict | None:
    """A vessel or bundle as a delivery item shows it: its deposit is counted in the item's `deposits` instead."""
    if packaging is None:
        return None
    return {k: v for k, v in packaging.items() if k != "deposit"}


def charge_item(product: dict, shown: dict) -> dict | None:
    """Add `deposits` to a request item (after the interface's fields) when it has any; the product's packaging
    deposits, for the delivery's basis."""
    packaging = deposit_packaging(product)
    charges = item_charges(packaging, shown["count"], shown["bundle"], shown["vessel_count"])
    if charges:
        shown["deposits"] = as_list(charges)
    return packaging


def order_errors(body, deposit_types: dict) -> list[FieldError]:
    """The order's empties; items are required unless the order is a RETURN."""
    errors = []
    if not body.items and (body.type != "RETURN" or not body.empties):
        errors.append(FieldError("items", "must hold at least one item (only a RETURN may carry empties alone)"))
    empties_wrong = empties_errors(body.empties or [], deposit_types, "empties", 1)
    if not empties_wrong and body.empties:
        empties_wrong = empties_size_errors(empties_entries(body.empties, deposit_types), "empties")
    return errors + empties_wrong


def finish(
    delivery: dict, packagings: dict[str, dict], deposit_types: dict, empties, products: dict[str, str] | None = None
) -> None:
    """Add `request.deposits` and `request.empties` (absent when empty, names and prices as now) and the basis;
    `products`: the product of each item shown under another id (a bundle's id_override), kept in the basis so an
    amendment reads that product's rules (decisions §16)."""
    charged: dict[str, int] = {}
    for item in delivery["request"]["items"]:
        for entry in item.get("deposits", ()):
            add(charged, entry["id"], entry["count"])
    named = {d for p in packagings.values() if p for d in [p.get("vessel"), *(b["deposit"] for b in p["bundles"])] if d}
    types = {
        d: {"name": deposit_types[d]["name"], "price": deposit_types[d]["price"]}
        for d in sorted(named)
        if d in deposit_types
    }
    if charged:
        delivery["request"]["deposits"] = entries(charged, types)
    if empties:
        delivery["request"]["empties"] = empties_entries(empties, deposit_types)
    packaging = {item_id: p for item_id, p in packagings.items() if p}
    delivery[BASIS] = {"packaging": packaging, "types": types} if packaging or empties or products else None
    if products:
        delivery[BASIS][PRODUCTS] = dict(products)


PRODUCTS = "products"  # in the basis: item id -> product id, for items shown under a bundle's id_override


def products_of(basis: dict | None) -> dict[str, str]:
    return dict((basis or {}).get(PRODUCTS) or {})


FRACTION_OF_A_VESSEL = "makes a fraction of a vessel, and deposits are charged on whole vessels only"


def fraction_errors(packaging: dict | None, vessels, path: str) -> list[FieldError]:
    """An item whose packaging carries a deposit is ordered, and answered, in whole vessels (a bundle of 2.5 would
    make 7.5 bottles, and half a bottle carries no deposit): refused, naming the bundle."""
    if packaging and not is_whole(Decimal(str(vessels))):
        return [FieldError(path, FRACTION_OF_A_VESSEL)]
    return []
