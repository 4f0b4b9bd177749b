"""Customer routes of deliveries (decisions §8, extension): place orders, read, cancel and receive one's own."""

from chalice import Blueprint

from .auth import CUSTOMER
from .call import Call
from .customer_changes import customer_change
from .endpoint import endpoint
from .etags import etag, if_match
from .responses import ok, page_of_texts

bp = Blueprint(__name__)


@endpoint(
    bp,
    "/customer/deliveries",
    "POST",
    CUSTOMER,
    body="domain.delivery:OrderBody",
    response="domain.delivery:PlacedDeliveries",
)
def place_order(call: Call):
    """Order products: one delivery, or two when ACTIVE and OUT_OF_STOCK products are mixed"""
    from ..service import ordering

    placed = ordering.place_order(call.account, call.customer_id, call.body(), call.idempotency)
    return ok({"deliveries": placed})


@endpoint(bp, "/customer/deliveries", "GET", CUSTOMER, response="domain.delivery:DeliveryList", paged=True)
def list_own_deliveries(call: Call):
    """The customer's deliveries, newest first"""
    from ..service import delivery_reads as reads

    limit, cursor = call.page()
    page = reads.list_customer_deliveries(call.account, call.customer_id, limit, cursor)
    return page_of_texts("deliveries", page.items, page.cursor)


@endpoint(bp, "/customer/deliveries/{delivery_id}", "GET", CUSTOMER, response="domain.delivery:Delivery")
def get_own_delivery(call: Call, delivery_id: str):
    """One of the customer's deliveries in full"""
    from ..service import delivery_reads as reads

    found, revision = reads.get_versioned(call.account, delivery_id, call.customer_id)
    return ok(found, headers={"ETag": etag(revision)})


@endpoint(
    bp,
    "/customer/deliveries/{delivery_id}/cancel",
    "POST",
    CUSTOMER,
    body="domain.delivery:CustomerActionBody",
    response="domain.delivery:Delivery",
)
def cancel_delivery(call: Call, delivery_id: str):
    """Cancel a delivery that is REQUESTED or ACCEPTED"""
    from ..service import deliveries

    return customer_change(deliveries.cancel, call, delivery_id)


@endpoint(
    bp,
    "/customer/deliveries/{delivery_id}/receive",
    "POST",
    CUSTOMER,
    body="domain.claim_shapes:ReceiveBody",
    response="domain.delivery:Delivery",
)
def receive_delivery(call: Call, delivery_id: str):
    """Confirm that a delivery arrived; with `items`, the issues found open claim 1 in the same write"""
    from ..service import claims

    return customer_change(claims.receive, call, delivery_id)


@endpoint(
    bp,
    "/customer/deliveries/{delivery_id}/amendments",
    "POST",
    CUSTOMER,
    body="domain.amendments:AmendmentBody",
    response="domain.delivery:Delivery",
)
def amend_delivery(call: Call, delivery_id: str):
    """Change a REQUESTED or ACCEPTED delivery before its cutoff: the whole new item list, date, empties and message"""
    from ..service import amendments

    return ok(
        amendments.amend(
            call.account,
            call.customer_id,
            delivery_id,
            call.body(),
            call.idempotency,
            if_match(call.header("if-match")),
        )
    )
