"""The delivery status machine of decisions §8: which response, cancel or receive moves a delivery where.

Its value lists are the StrEnums below; the shapes in delivery.py derive their `Literal`s from them."""

from enum import StrEnum

from .errors import InvalidTransition


class DeliveryStatus(StrEnum):
    REQUESTED = "REQUESTED"
    ACCEPTED = "ACCEPTED"
    REJECTED = "REJECTED"
    CANCELLED = "CANCELLED"
    DELIVERED = "DELIVERED"


class ResponseType(StrEnum):
    """What a supplier's response does (decisions §8)."""

    ACCEPT = "ACCEPT"
    REJECT = "REJECT"
    UPDATE = "UPDATE"


class ResponseReason(StrEnum):
    """Why a response item differs from what was ordered (decisions §16): the answer per line."""

    OUT_OF_STOCK = "OUT_OF_STOCK"
    DISCONTINUED = "DISCONTINUED"
    MIN_ORDER = "MIN_ORDER"
    MAX_ORDER = "MAX_ORDER"
    SUBSTITUTED = "SUBSTITUTED"
    PRICE_CHANGED = "PRICE_CHANGED"
    OTHER = "OTHER"


class LineAction(StrEnum):
    """What an amendment did to one line of the order (decisions §16)."""

    ADDED = "ADDED"
    CHANGED = "CHANGED"
    REMOVED = "REMOVED"


class DeliveryType(StrEnum):
    DELIVERY = "DELIVERY"
    RETURN = "RETURN"


REQUESTED, ACCEPTED, REJECTED, CANCELLED, DELIVERED = DeliveryStatus
STATUSES = tuple(DeliveryStatus)
FINAL = frozenset({REJECTED, CANCELLED, DELIVERED})
ACCEPT, REJECT, UPDATE = ResponseType
DELIVERY, RETURN = DeliveryType

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
