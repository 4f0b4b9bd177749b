"""Routes of deposit types and customers' balances (decisions §15)."""

from chalice import Blueprint

from .auth import CUSTOMER
from .call import Call
from .endpoint import endpoint
from .responses import no_content, ok
from .responses import page as page_body

bp = Blueprint(__name__)


@endpoint(bp, "/deposits", "GET", response="domain.deposit_types:DepositList", paged=True)
def list_deposits(call: Call):
    """List deposit types by id"""
    from ..service import deposits

    limit, cursor = call.page()
    page = deposits.list_deposits(call.account, limit, cursor)
    return page_body("deposits", page.items, page.cursor)


@endpoint(
    bp,
    "/deposits/{deposit_id}",
    "PUT",
    body="domain.deposit_types:DepositBody",
    response="domain.deposit_types:Deposit",
)
def put_deposit(call: Call, deposit_id: str):
    """Create or change a deposit type"""
    from ..service import deposits

    return ok(deposits.put_deposit(call.account, deposit_id, call.body()))


@endpoint(bp, "/deposits/{deposit_id}", "GET", response="domain.deposit_types:Deposit")
def get_deposit(call: Call, deposit_id: str):
    """Read one deposit type"""
    from ..service import deposits

    return ok(deposits.get_deposit(call.account, deposit_id))


@endpoint(bp, "/deposits/{deposit_id}", "DELETE", status=204)
def delete_deposit(call: Call, deposit_id: str):
    """Delete a deposit type no packaging names and no balance holds"""
    from ..service import deposits

    deposits.delete_deposit(call.account, deposit_id)
    return no_content()


@endpoint(bp, "/customers/{customer_id}/deposits", "GET", response="domain.deposit_types:CustomerDeposits")
def get_customer_deposits(call: Call, customer_id: str):
    """A customer's balance of every deposit type"""
    from ..service import deposits

    return ok(deposits.customer_balances(call.account, customer_id))


@endpoint(
    bp,
    "/customers/{customer_id}/deposits",
    "POST",
    body="domain.deposit_types:Adjustment",
    response="domain.deposit_types:CustomerDeposits",
)
def adjust_customer_deposits(call: Call, customer_id: str):
    """Adjust one balance of a customer (opening balances, corrections)"""
    from ..service import deposits

    return ok(deposits.adjust_balance(call.account, customer_id, call.body(), call.idempotency))


@endpoint(bp, "/customer/deposits", "GET", role=CUSTOMER, response="domain.deposit_types:CustomerDeposits")
def get_own_deposits(call: Call):
    """This customer's balance of every deposit type"""
    from ..service import deposits

    return ok(deposits.customer_balances(call.account, call.customer_id))


def _statement(call: Call, customer_id: str):
    from ..service import deposits

    limit, cursor = call.page()
    reader = call.principal.role  # the supplier's route and the customer's page apart: a cursor is one route's (§4)
    page = deposits.movements(call.account, customer_id, call.queries.get("deposit"), limit, cursor, reader)
    return page_body("movements", page.items, page.cursor)


@endpoint(
    bp,
    "/customers/{customer_id}/deposits/movements",
    "GET",
    response="domain.deposit_statement:MovementList",
    query=("deposit",),
    paged=True,
)
def list_customer_deposit_movements(call: Call, customer_id: str):
    """A customer's statement: every move of its balances, newest first"""
    return _statement(call, customer_id)


@endpoint(
    bp,
    "/customer/deposits/movements",
    "GET",
    role=CUSTOMER,
    response="domain.deposit_statement:MovementList",
    query=("deposit",),
    paged=True,
)
def list_own_deposit_movements(call: Call):
    """This customer's statement: every move of its balances, newest first"""
    return _statement(call, call.customer_id)
