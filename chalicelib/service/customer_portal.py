"""What a customer (with a customer token) reads: their catalogue and their delivery dates (decisions §7-8)."""

from ..domain.errors import FieldError, ValidationFailed
from ..domain.pricing import as_priced_for_customer, price_for_customer
from ..domain.schedule import next_deliverable_dates
from ..domain.values import ORDERABLE_STATUSES
from ..store import order_context, products
from ..store.paging import Page
from . import clock
from .paging import paged


@paged
def catalogue_page(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    """ACTIVE and OUT_OF_STOCK products, each with the price that applies to this customer."""
    page = products.list_orderable_page(account, limit, cursor)
    if not page.items:
        return Page([], page.cursor)
    ids = [product.data["id"] for product in page.items]
    born = {product.data["id"]: product.born for product in page.items}
    context = order_context.load(account, customer_id, ids, read_products=False, born=born)
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


def delivery_dates(account: str, customer_id: str, ids: list[str], days: int) -> list[str]:
    """The next `days` dates on which an order of all the given products can be delivered.

    Without products, the customer's and the account's rules alone decide.
    """
    context = order_context.load(account, customer_id, ids, read_pricing=False)
    unknown = [pid for pid in ids if context.products.get(pid, {}).get("status") not in ORDERABLE_STATUSES]
    if unknown:
        raise ValidationFailed([FieldError("products", f"{pid!r} is not a product you can order") for pid in unknown])
    ordered = [context.products[pid] for pid in ids]
    found = next_deliverable_dates(clock.now(), ordered, context.customer, context.settings, days)
    return [date.isoformat() for date in found]
