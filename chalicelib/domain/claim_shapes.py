"""The shapes of claims (decisions §18, second half): the bodies of a receipt with issues, a claim, its withdrawal and
the supplier's answer, and how claims are shown (on the delivery's single reads, the worklist, the overview). The
rules are domain/claims.py's; the value lists domain/claim_status.py's."""

from typing import Annotated

from pydantic import Field, Strict

from . import limits
from .claim_status import ClaimIssue, ClaimResolution, ClaimStatus
from .common import HttpsUrl, NonNegativeNumber, PositiveNumber, Shape, ShortText, Text
from .customer import Contact
from .values import literal

# --- bodies ---


class ClaimItemBody(Shape):
    """One claimed line: what is wrong with how much of it."""

    id: ShortText = Field(description="A delivered line (by the id the delivery shows) or substitute (its product id)")
    issue: literal(ClaimIssue)
    count: PositiveNumber = Field(
        description="How much of it: whole unless the product is ordered by kg; at most what was delivered less what "
        "its claims that are not WITHDRAWN or DECLINED already claim"
    )
    message: Text | None = None
    evidence: Annotated[list[HttpsUrl], Field(max_length=limits.CLAIM_EVIDENCE)] | None = Field(
        default=None, description="Links to photos or documents (https): the service keeps the links, not the files"
    )


ClaimItems = Annotated[list[ClaimItemBody], Field(min_length=1, max_length=limits.CLAIM_LINES)]


class ClaimBody(Shape):
    """POST /customer/deliveries/:id/claims."""

    items: ClaimItems
    message: Text | None = None
    user: Contact | None = None


class ReceiveBody(Shape):
    """POST /customer/deliveries/:id/receive: who received it and why (both optional), and with `items` the issues
    found, which open claim 1 in the same write (decisions §18)."""

    user: Contact | None = None
    message: Text | None = None
    items: ClaimItems | None = Field(default=None, description="The receipt's issues: they open claim 1")


class WithdrawBody(Shape):
    """POST /customer/deliveries/:id/claims/:number/withdraw takes no fields (an empty body, or none)."""


class AnswerItemBody(Shape):
    """The supplier's answer to one claimed line."""

    id: ShortText = Field(description="A line of the claim")
    accepted: NonNegativeNumber = Field(description="How much of the claimed count is accepted: 0 up to it")
    resolution: literal(ClaimResolution)
    credit: Annotated[int, Strict(), Field(ge=0, le=limits.CLAIM_CREDIT)] | None = Field(
        default=None,
        description="Cents; default for CREDIT the accepted count valued at the line's price as delivered, else 0",
    )
    reason: Text | None = None


class AnswerBody(Shape):
    """POST /deliveries/:id/claims/:number/answer: every claimed line answered exactly once."""

    items: Annotated[list[AnswerItemBody], Field(min_length=1, max_length=limits.CLAIM_LINES)]
    message: Text | None = Field(default=None, description="Why; required when nothing is accepted (DECLINED)")
    user: Contact | None = None


# --- how claims are shown ---


class ClaimLine(Shape):
    id: str
    issue: literal(ClaimIssue)
    count: float
    message: str | None = None
    evidence: list[str] | None = None
    accepted: float | None = Field(default=None, description="Once answered")
    resolution: literal(ClaimResolution) | None = Field(default=None, description="Once answered")
    credit: int | None = Field(default=None, description="Once answered: cents")
    reason: str | None = Field(default=None, description="Once answered, where the supplier gave one")


class ClaimAnswer(Shape):
    timestamp: str
    user: Contact | None = None
    message: str | None = None


class Claim(Shape):
    """A claim as the delivery's single reads show it (decisions §18)."""

    number: int = Field(description="1, 2, ... per delivery")
    status: literal(ClaimStatus)
    opened_at: str
    user: Contact | None = None
    message: str | None = None
    items: list[ClaimLine]
    answer: ClaimAnswer | None = Field(default=None, description="The supplier's answer, once given")
    withdrawn_at: str | None = Field(default=None, description="Once withdrawn")


class ClaimEntry(Shape):
    """A claim as the worklist shows it."""

    delivery_id: int
    customer_id: str
    number: int
    status: literal(ClaimStatus)
    opened_at: str
    since: str = Field(description="When it entered its status")


class ClaimList(Shape):
    claims: list[ClaimEntry]
    cursor: str | None = None


class OldestClaim(Shape):
    delivery_id: int
    number: int
    since: str


class ClaimsOverview(Shape):
    open: int = Field(description="Claims OPEN now")
    oldest_open: OldestClaim | None = Field(description="The first of the OPEN worklist, null when none")
