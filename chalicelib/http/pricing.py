"""Routes of customer pricing and price groups of a product (interface: Customer pricing; decisions §6)."""

from chalice import Blueprint

from .call import Call
from .endpoint import endpoint
from .responses import no_content, ok

bp = Blueprint(__name__)

CUSTOMER_PRICING = "/products/{product_id}/customer-pricing/{customer_id}"
PRICE_GROUPS = "/products/{product_id}/price-groups"


@endpoint(bp, CUSTOMER_PRICING, "GET", response="domain.scaled_pricing:PriceLevel")
def get_customer_pricing(call: Call, product_id: str, customer_id: str):
    """Read one customer's pricing of one product"""
    from ..service import pricing

    return ok(pricing.get_customer_pricing(call.account, product_id, customer_id))


@endpoint(
    bp, CUSTOMER_PRICING, "PUT", body="domain.scaled_pricing:PriceLevel", response="domain.scaled_pricing:PriceLevel"
)
def put_customer_pricing(call: Call, product_id: str, customer_id: str):
    """Replace one customer's pricing of one product"""
    from ..service import pricing

    return ok(pricing.put_customer_pricing(call.account, product_id, customer_id, call.body()))


@endpoint(bp, CUSTOMER_PRICING, "DELETE", status=204)
def delete_customer_pricing(call: Call, product_id: str, customer_id: str):
    """Remove one customer's pricing of one product"""
    from ..service import pricing

    pricing.delete_customer_pricing(call.account, product_id, customer_id)
    return no_content()


@endpoint(bp, PRICE_GROUPS, "GET", response="domain.scaled_pricing:PriceGroups")
def get_price_groups(call: Call, product_id: str):
    """Read the price groups of a product"""
    from ..service import pricing

    return ok(pricing.get_price_groups(call.account, product_id))


@endpoint(
    bp, PRICE_GROUPS, "PUT", body="domain.scaled_pricing:PriceGroups", response="domain.scaled_pricing:PriceGroups"
)
def put_price_groups(call: Call, product_id: str):
    """Replace the whole price-group map of a product"""
    from ..service import pricing

    return ok(pricing.put_price_groups(call.account, product_id, call.body()))
