"""The shapes in which deliveries are shown (response bodies; they feed the OpenAPI document), apart from the
request bodies and the rules in domain/delivery.py."""

from pydantic import Field

from .claim_shapes import Claim
from .common import IsoDate, Shape, TimeOfDay
from .customer import Address, Contact
from .delivery_status import DeliveryStatus, DeliveryType, LineAction, ResponseReason, ResponseType
from .deposit_types import DeliveryDeposits, DepositEntry, ItemDeposit
from .integration import Integration
from .product import ItemBundle, Vessel
from .values import OrderBy, PricePer, literal

# The sender of an order or a response has the shape of a customer's contact, checked by the same rules.
User = Contact


class Scheduled(Shape):
    date: IsoDate
    time: TimeOfDay | None = None


class DeliveryCustomer(Shape):
    id: str | None
    company: str | None
    address: Address | None
    contact: Contact | None


class RequestItem(Shape):
    id: str
    name: str
    order_by: literal(OrderBy) | None = None
    vessel: Vessel | None
    count: float
    bundle: ItemBundle | None
    vessel_count: float
    price: int | None = Field(description="Expected unit price in cents; null when the product has no price")
    price_per: literal(PricePer) | None = None
    message: str | None = None
    deposits: list[ItemDeposit] | None = None
    substitute: bool | None = Field(
        default=None, description="false: the customer forbade substituting this line (decisions §18); else absent"
    )


class DeliveryRequestSummary(Shape):
    timestamp: str
    company: str | None
    customer_id: str | None
    cost_center: str | None
    address: Address | None
    scheduled: Scheduled | None
    user: User
    message: str | None = None
    deposits: list[DepositEntry] | None = None
    empties: list[DepositEntry] | None = None


# Written out, not a subclass of DeliveryRequestSummary: a subclass lists `items` after `empties`, and the documented
# property order must be the order answers carry them in (field_order.DELIVERY_REQUEST, tests/api/test_field_order.py).
class DeliveryRequest(Shape):
    timestamp: str
    company: str | None
    customer_id: str | None
    cost_center: str | None
    address: Address | None
    scheduled: Scheduled | None
    user: User
    message: str | None = None
    items: list[RequestItem]
    deposits: list[DepositEntry] | None = None
    empties: list[DepositEntry] | None = None


class ResponseItem(Shape):
    id: str
    count: float | None = None
    bundle: ItemBundle | None = None
    vessel_count: float
    price: int | None = None
    reason: literal(ResponseReason) | None = None


class Substitution(Shape):
    """A substitute as a response or the delivery note shows it (decisions §18)."""

    for_: str = Field(alias="for", description="The line it replaces")
    id: str = Field(description="The product delivered instead")
    count: float
    bundle: ItemBundle | None
    vessel_count: float
    price: int | None = Field(description="Unit price in cents; null when no price applies")


class DeliveryResponse(Shape):
    type: literal(ResponseType)
    timestamp: str
    reference: str | None = None
    scheduled: Scheduled | None = None
    items: list[ResponseItem] | None = None
    user: User | None = None
    message: str | None = None
    empties: list[DepositEntry] | None = None
    substitutions: list[Substitution] | None = None


class CustomerAction(Shape):
    timestamp: str
    user: Contact | None
    message: str | None


class AmendedLine(Shape):
    id: str
    bundle: ItemBundle | None
    action: literal(LineAction)
    count_before: float
    count: float


class DateChange(Shape):
    from_: Scheduled | None = Field(alias="from")
    to: Scheduled | None


class Amendment(Shape):
    """One amendment as single reads of a delivery show it (decisions §16): the changed lines, removed ones last."""

    sequence: int
    timestamp: str
    user: User
    message: str | None = None
    scheduled: DateChange | None = Field(default=None, description="Only when the date changed")
    items: list[AmendedLine]


class NoteLine(Shape):
    """One line of the delivery as the delivery note says it was delivered (decisions §18)."""

    id: str
    bundle: ItemBundle | None = Field(description="As delivered: the note's, else the latest response's, else ordered")
    ordered: float = Field(description="The count as the request now stands")
    confirmed: float = Field(description="The count the latest response stated, else the one requested")
    count: float = Field(description="The count delivered")
    vessel_count: float
    reason: literal(ResponseReason) | None = Field(default=None, description="Only where the note gave one")


class Proof(Shape):
    received_by: str | None = None
    signature_url: str | None = None
    photo_urls: list[str] | None = None
    note: str | None = None


class DeliveryNote(Shape):
    """The driver's delivery note (decisions §18): what was delivered, line by line, and what came back."""

    number: str
    delivered_at: str = Field(description="RFC 3339 with the account's offset")
    items: list[NoteLine] = Field(description="Every line of the delivery, in its order")
    substitutions: list[Substitution] = Field(description="The substitutes delivered: the note's, else the responses'")
    empties: list[DepositEntry] = Field(description="The empties collected, which count as returned (decisions §15)")
    proof: Proof | None = None
    message: str | None = None
    user: User | None = None
    timestamp: str = Field(description="When the note was received")


class StandingOrderMark(Shape):
    """The standing order that placed the delivery, and the date it placed (decisions §17)."""

    id: str
    date: IsoDate


# The standing order mark is the last field of every delivery shape, after the extensions each adds: so each
# shape a reader sees declares it last, over a base without it.
MARK_DESCRIPTION = "The standing order that placed this delivery (decisions §17); absent on other deliveries"


class _DeliveryFields(Shape):
    id: int
    type: literal(DeliveryType)
    status: literal(DeliveryStatus)
    customer: DeliveryCustomer
    request: DeliveryRequestSummary
    responses: list[DeliveryResponse]
    cancelled: CustomerAction | None = None
    received: CustomerAction | None = None


class _DeliveryInFull(_DeliveryFields):
    request: DeliveryRequest
    amendments: list[Amendment] | None = Field(default=None, description="What each amendment changed (decisions §16)")
    delivery_note: DeliveryNote | None = Field(default=None, description="The driver's delivery note (decisions §18)")
    claims: list[Claim] | None = Field(default=None, description="The bar's claims (decisions §18); absent while none")
    deposits: DeliveryDeposits | None = None


class DeliverySummary(_DeliveryFields):
    """A delivery as lists show it: the request without its items."""

    standing_order: StandingOrderMark | None = Field(default=None, description=MARK_DESCRIPTION)


class Delivery(_DeliveryInFull):
    """A delivery in full, as GET /deliveries/:id shows it."""

    standing_order: StandingOrderMark | None = Field(default=None, description=MARK_DESCRIPTION)


class DeliveryList(Shape):
    deliveries: list[DeliverySummary]
    cursor: str | None = None


class SupplierDeliverySummary(_DeliveryFields):
    """A delivery as the supplier's lists show it: with its integration state (decisions §14)."""

    integration: Integration
    standing_order: StandingOrderMark | None = Field(default=None, description=MARK_DESCRIPTION)


class SupplierDelivery(_DeliveryInFull):
    """A delivery in full as the supplier reads it: with its integration state (decisions §14)."""

    integration: Integration
    standing_order: StandingOrderMark | None = Field(default=None, description=MARK_DESCRIPTION)


class SupplierDeliveryList(Shape):
    deliveries: list[SupplierDeliverySummary]
    cursor: str | None = None


class PlacedDeliveries(Shape):
    deliveries: list[Delivery]
