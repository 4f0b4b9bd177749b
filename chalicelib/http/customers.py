"""Routes of customers and their tokens (interface: Customer; decisions §2, §9)."""

from chalice import Blueprint

from . import auth
from .call import Call
from .endpoint import endpoint
from .responses import no_content, ok
from .responses import page as page_body

bp = Blueprint(__name__)


@endpoint(bp, "/customers", "GET", response="domain.customer:CustomerList", paged=True)
def list_customers(call: Call):
    """List customers by id"""
    from ..service import customers

    limit, cursor = call.page()
    page = customers.list_customers(call.account, limit, cursor)
    return page_body("customers", page.items, page.cursor)


@endpoint(bp, "/customers/{customer_id}", "GET", response="domain.customer:Customer")
def get_customer(call: Call, customer_id: str):
    """Read one customer with its settings"""
    from ..service import customers

    return ok(customers.get_customer(call.account, customer_id))


@endpoint(
    bp, "/customers/{customer_id}", "PUT", body="domain.customer:CustomerProfile", response="domain.customer:Customer"
)
def put_customer(call: Call, customer_id: str):
    """Create a customer or replace its profile, keeping its settings"""
    from ..service import customers

    return ok(customers.put_customer(call.account, customer_id, call.body()))


@endpoint(
    bp,
    "/customers/{customer_id}",
    "PATCH",
    body="domain.customer:CustomerSettingsPatch",
    response="domain.customer:Customer",
)
def patch_customer(call: Call, customer_id: str):
    """Change a customer's settings; null clears one"""
    from ..service import customers

    return ok(customers.patch_customer(call.account, customer_id, call.body()))


# Not replayable: an Idempotency-Key would store the answer, and a token's secret is stored only as a hash.
@endpoint(bp, "/customers/{customer_id}/tokens", "POST", response="domain.customer:CustomerToken", replayable=False)
def create_customer_token(call: Call, customer_id: str):
    """Create a token that acts as this customer; the secret is shown only here"""
    from ..service import customers

    return ok(customers.create_customer_token(call.account, customer_id))


@endpoint(bp, "/customers/{customer_id}/tokens/{token_id}", "DELETE", status=204)
def revoke_customer_token(call: Call, customer_id: str, token_id: str):
    """Revoke one of a customer's tokens"""
    from ..service import customers

    customers.revoke_customer_token(call.account, customer_id, token_id)
    auth.forget_all()  # other processes notice within auth.CACHE_SECONDS
    return no_content()
