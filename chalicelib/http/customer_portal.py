"""Routes a customer calls with a customer token: /customer/... (decisions §2, §7, §8)."""

from chalice import Blueprint

from . import params
from .auth import CUSTOMER
from .call import Call
from .endpoint import endpoint
from .responses import ok
from .responses import page as page_body

bp = Blueprint(__name__)


@endpoint(bp, "/customer/products", "GET", role=CUSTOMER, response="domain.product:ProductList", paged=True)
def list_customer_products(call: Call):
    """The catalogue as this customer sees it, with the prices that apply to them"""
    from ..service import customer_portal

    limit, cursor = call.page()
    page = customer_portal.catalogue_page(call.account, call.customer_id, limit, cursor)
    return page_body("products", page.items, page.cursor)


@endpoint(
    bp,
    "/customer/delivery-dates",
    "GET",
    role=CUSTOMER,
    response="domain.customer:DeliveryDates",
    query=("products", "days"),
)
def list_delivery_dates(call: Call):
    """The next dates on which an order of the given products can be delivered"""
    from ..service import customer_portal

    product_ids, days = params.delivery_dates(call.queries)
    dates = customer_portal.delivery_dates(call.account, call.customer_id, product_ids, days)
    return ok({"dates": dates})
