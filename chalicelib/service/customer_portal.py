"""What a customer (with a customer token) reads: their catalogue and their delivery dates (decisions §7-8)."""
import datetime as dt
import re

from ..domain.identifiers import is_identifier
from ..domain.errors import FieldError, ValidationFailed
from ..domain.pricing import as_priced_for_customer, price_for_customer
from ..domain.schedule import MAX_DAYS, next_deliverable_dates
from ..domain.values import ORDERABLE_STATUSES
from ..store import order_context, products
from ..store.paging import Page

DEFAULT_DAYS = 14
MAX_PRODUCTS = 100


def clock() -> dt.datetime:
    """Now; the only clock read of these use cases (tests replace it)."""
    return dt.datetime.now(dt.timezone.utc)


def catalogue_page(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    """ACTIVE and OUT_OF_STOCK products, each with the price that applies to this customer."""
    page = products.list_orderable_page(account, limit, cursor)
    if not page.items:
        return Page([], page.cursor)
    ids = [product.data["id"] for product in page.items]
    context = order_context.load(account, customer_id, ids, read_products=False)
    shown = []
    for product in page.items:
        product_id = product.data["id"]
        level = price_for_customer(
            product.data,
            context.customer,
            context.customer_pricing.get(product_id),
            context.price_groups.get(product_id),
        )
        shown.append(as_priced_for_customer(product.data, level))
    return Page(shown, page.cursor)


def _product_ids(products_param: str | None) -> tuple[list[str], list[FieldError]]:
    ids = list(dict.fromkeys(part.strip() for part in (products_param or "").split(",") if part.strip()))
    errors = [FieldError("products", f"{pid!r} is not a product id") for pid in ids if not is_identifier(pid)]
    if len(ids) > MAX_PRODUCTS:
        errors.append(FieldError("products", f"must name at most {MAX_PRODUCTS} products"))
    return ids, errors


def _days(days_param: str | None) -> tuple[int, list[FieldError]]:
    if days_param is None:
        return DEFAULT_DAYS, []
    if re.fullmatch(r"[0-9]{1,3}", days_param) and 1 <= int(days_param) <= MAX_DAYS:
        return int(days_param), []
    return DEFAULT_DAYS, [FieldError("days", f"must be a whole number from 1 to {MAX_DAYS}")]


def delivery_dates(account: str, customer_id: str, products_param: str | None, days_param: str | None) -> list[str]:
    """The next `days` (default 14) dates on which an order of all the given products can be delivered.

    Without products, the customer's and the account's rules alone decide.
    """
    ids, errors = _product_ids(products_param)
    days, day_errors = _days(days_param)
    if errors or day_errors:
        raise ValidationFailed(errors + day_errors)
    context = order_context.load(account, customer_id, ids, read_pricing=False)
    unknown = [pid for pid in ids if context.products.get(pid, {}).get("status") not in ORDERABLE_STATUSES]
    if unknown:
        raise ValidationFailed([FieldError("products", f"{pid!r} is not a product you can order") for pid in unknown])
    ordered = [context.products[pid] for pid in ids]
    found = next_deliverable_dates(clock(), ordered, context.customer, context.settings, days)
    return [date.isoformat() for date in found]
