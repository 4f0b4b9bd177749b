"""Routes of standing orders (decisions §17): the customer writes and reads its own; the supplier reads them, and
pauses, resumes or ends them."""

from chalice import Blueprint

from .auth import CUSTOMER
from .call import Call
from .endpoint import endpoint
from .responses import no_content, ok
from .responses import page as page_body

bp = Blueprint(__name__)
MODEL = "domain.standing_orders:"


@endpoint(bp, "/customer/standing-orders", "GET", CUSTOMER, response=MODEL + "StandingOrderList", paged=True)
def list_own_standing_orders(call: Call):
    """The customer's standing orders, by id"""
    from ..service import standing_orders

    limit, cursor = call.page()
    page = standing_orders.list_standing_orders(call.account, call.customer_id, limit, cursor)
    return page_body("standing_orders", page.items, page.cursor)


@endpoint(bp, "/customer/standing-orders/{standing_id}", "GET", CUSTOMER, response=MODEL + "StandingOrder")
def get_own_standing_order(call: Call, standing_id: str):
    """One of the customer's standing orders"""
    from ..service import standing_orders

    return ok(standing_orders.get_standing_order(call.account, call.customer_id, standing_id))


@endpoint(
    bp,
    "/customer/standing-orders/{standing_id}",
    "PUT",
    CUSTOMER,
    body=MODEL + "StandingOrderBody",
    response=MODEL + "StandingOrder",
)
def put_standing_order(call: Call, standing_id: str):
    """Create a standing order or replace it; dates already placed stay placed"""
    from ..service import standing_orders

    return ok(standing_orders.put_standing_order(call.account, call.customer_id, standing_id, call.body()))


@endpoint(bp, "/customer/standing-orders/{standing_id}", "DELETE", CUSTOMER, status=204)
def delete_standing_order(call: Call, standing_id: str):
    """Delete a standing order; deliveries it placed stay"""
    from ..service import standing_orders

    standing_orders.delete_standing_order(call.account, call.customer_id, standing_id)
    return no_content()


@endpoint(
    bp,
    "/customer/standing-orders/{standing_id}/occurrences",
    "GET",
    CUSTOMER,
    response=MODEL + "OccurrenceList",
    query=("from", "to"),
)
def list_own_occurrences(call: Call, standing_id: str):
    """The standing order's dates from `from` (default today) to `to` (default 27 days later), with their status"""
    from ..service import standing_orders

    queries = call.queries
    return ok(
        standing_orders.occurrences(call.account, call.customer_id, standing_id, queries.get("from"), queries.get("to"))
    )


@endpoint(
    bp,
    "/customer/standing-orders/{standing_id}/occurrences/{date}",
    "PUT",
    CUSTOMER,
    body=MODEL + "SkipBody",
    response=MODEL + "Occurrence",
)
def skip_occurrence(call: Call, standing_id: str, date: str):
    """Skip one date of a standing order, or take the skip back"""
    from ..service import standing_orders

    return ok(standing_orders.skip(call.account, call.customer_id, standing_id, date, call.body()))


@endpoint(bp, "/customers/{customer_id}/standing-orders", "GET", response=MODEL + "StandingOrderList", paged=True)
def list_standing_orders(call: Call, customer_id: str):
    """A customer's standing orders, by id"""
    from ..service import standing_orders

    limit, cursor = call.page()
    page = standing_orders.list_customers_standing_orders(call.account, customer_id, limit, cursor)
    return page_body("standing_orders", page.items, page.cursor)


@endpoint(bp, "/customers/{customer_id}/standing-orders/{standing_id}", "GET", response=MODEL + "StandingOrder")
def get_standing_order(call: Call, customer_id: str, standing_id: str):
    """One of a customer's standing orders"""
    from ..service import standing_orders

    return ok(standing_orders.get_customers_standing_order(call.account, customer_id, standing_id))


@endpoint(
    bp,
    "/customers/{customer_id}/standing-orders/{standing_id}/occurrences",
    "GET",
    response=MODEL + "OccurrenceList",
    query=("from", "to"),
)
def list_occurrences(call: Call, customer_id: str, standing_id: str):
    """A customer's standing order's dates with their status"""
    from ..service import standing_orders

    queries = call.queries
    return ok(
        standing_orders.customers_occurrences(
            call.account, customer_id, standing_id, queries.get("from"), queries.get("to")
        )
    )


@endpoint(
    bp,
    "/customers/{customer_id}/standing-orders/{standing_id}",
    "PATCH",
    body=MODEL + "PauseBody",
    response=MODEL + "StandingOrder",
)
def pause_standing_order(call: Call, customer_id: str, standing_id: str):
    """Pause a customer's standing order, or resume it (a bar that no longer pays)"""
    from ..service import standing_orders

    return ok(standing_orders.pause(call.account, customer_id, standing_id, call.body()))


@endpoint(bp, "/customers/{customer_id}/standing-orders/{standing_id}", "DELETE", status=204)
def end_standing_order(call: Call, customer_id: str, standing_id: str):
    """End a customer's standing order; deliveries it placed stay"""
    from ..service import standing_orders

    standing_orders.delete_customers_standing_order(call.account, customer_id, standing_id)
    return no_content()
