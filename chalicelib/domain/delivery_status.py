"""The delivery status machine of decisions §8: which response, cancel or receive moves a delivery where."""
from .errors import InvalidTransition

REQUESTED, ACCEPTED, REJECTED, CANCELLED, DELIVERED = "REQUESTED", "ACCEPTED", "REJECTED", "CANCELLED", "DELIVERED"
STATUSES = (REQUESTED, ACCEPTED, REJECTED, CANCELLED, DELIVERED)
FINAL = frozenset({REJECTED, CANCELLED, DELIVERED})
ACCEPT, UPDATE, REJECT = "ACCEPT", "UPDATE", "REJECT"
DELIVERY, RETURN = "DELIVERY", "RETURN"

RESPONSE_TRANSITIONS = {
    (REQUESTED, ACCEPT): ACCEPTED,
    (REQUESTED, REJECT): REJECTED,
    (ACCEPTED, ACCEPT): ACCEPTED,
    (ACCEPTED, UPDATE): ACCEPTED,
    (ACCEPTED, REJECT): REJECTED,
}
CANCELLABLE = frozenset({REQUESTED, ACCEPTED})
RECEIVABLE = frozenset({REQUESTED, ACCEPTED})


def status_after_response(status: str, response_type: str) -> str:
    """The status a response leads to, or InvalidTransition when the table of §8 has no such row."""
    try:
        return RESPONSE_TRANSITIONS[(status, response_type)]
    except KeyError:
        if status in FINAL:
            reason = f"the delivery is {status}; no further responses are allowed"
        else:
            reason = f"a {response_type} response is not allowed while the delivery is {status}"
        raise InvalidTransition(reason) from None


def status_after_cancel(status: str) -> str:
    if status not in CANCELLABLE:
        raise InvalidTransition(f"a {status} delivery cannot be cancelled")
    return CANCELLED


def status_after_receive(status: str) -> str:
    if status not in RECEIVABLE:
        raise InvalidTransition(f"a {status} delivery cannot be received")
    return DELIVERED
