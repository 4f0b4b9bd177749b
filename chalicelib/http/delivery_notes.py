"""The supplier's delivery note (decisions §18): POST /deliveries/:id/delivery-note."""

from chalice import Blueprint

from .call import Call
from .endpoint import endpoint
from .etags import if_match
from .responses import ok

bp = Blueprint(__name__)


@endpoint(
    bp,
    "/deliveries/{delivery_id}/delivery-note",
    "POST",
    body="domain.delivery_note:DeliveryNoteBody",
    response="domain.delivery:SupplierDelivery",
)
def give_delivery_note(call: Call, delivery_id: str):
    """Say what the driver delivered (counts, substitutes, empties, proof): the delivery becomes DELIVERED"""
    from ..service import delivery_notes

    return ok(
        delivery_notes.deliver(
            call.account, delivery_id, call.body(), call.idempotency, if_match(call.header("if-match"))
        )
    )
