"""Claims (decisions §18, second half): the bar's claims and their withdrawal, the supplier's answer, the worklist and
its overview. The receipt with issues is the receive route's (http/customer_deliveries.py)."""

from chalice import Blueprint

from .auth import CUSTOMER
from .call import Call
from .customer_changes import customer_change
from .endpoint import endpoint
from .etags import if_match
from .responses import ok, page_of_texts

bp = Blueprint(__name__)


@endpoint(
    bp,
    "/customer/deliveries/{delivery_id}/claims",
    "POST",
    CUSTOMER,
    body="domain.claim_shapes:ClaimBody",
    response="domain.delivery:Delivery",
)
def open_claim(call: Call, delivery_id: str):
    """Claim what arrived broken, short, wrong or expired, line by line, within the claim window after delivery"""
    from ..service import claims

    return customer_change(claims.open_claim, call, delivery_id)


@endpoint(
    bp,
    "/customer/deliveries/{delivery_id}/claims/{number}/withdraw",
    "POST",
    CUSTOMER,
    body="domain.claim_shapes:WithdrawBody",
    response="domain.delivery:Delivery",
)
def withdraw_claim(call: Call, delivery_id: str, number: str):
    """Withdraw an OPEN claim"""
    from ..service import claims

    return customer_change(claims.withdraw, call, delivery_id, number)


@endpoint(
    bp,
    "/deliveries/{delivery_id}/claims/{number}/answer",
    "POST",
    body="domain.claim_shapes:AnswerBody",
    response="domain.delivery:SupplierDelivery",
)
def answer_claim(call: Call, delivery_id: str, number: str):
    """Answer an OPEN claim line by line: what you accept and how you settle it (credit, replace, collect)"""
    from ..service import claims

    return ok(
        claims.answer(
            call.account, delivery_id, number, call.body(), call.idempotency, if_match(call.header("if-match"))
        )
    )


@endpoint(bp, "/claims", "GET", response="domain.claim_shapes:ClaimList", query=("status", "customer_id"), paged=True)
def list_claims(call: Call):
    """The claims worklist: one status's claims (OPEN by default), optionally of one customer, oldest first"""
    from ..domain.claim_status import OPEN, STATUSES
    from ..domain.errors import FieldError, ValidationFailed
    from ..domain.identifiers import is_identifier
    from ..service import claim_reads
    from . import params

    errors, status, paging = [], OPEN.value, None
    try:
        paging = call.page()
    except ValidationFailed as failed:
        errors += failed.errors
    try:
        status = params.one_of(call.queries, "status", STATUSES) or OPEN.value
    except ValidationFailed as failed:
        errors += failed.errors
    customer_id = call.queries.get("customer_id")
    if customer_id is not None and not is_identifier(customer_id):
        errors.append(FieldError("customer_id", "must be a customer id: 1-128 characters of [a-zA-Z0-9_-]"))
    if errors:
        raise ValidationFailed(errors)
    limit, cursor = paging
    page = claim_reads.list_claims(call.account, status, customer_id, limit, cursor)
    return page_of_texts("claims", page.items, page.cursor)


@endpoint(bp, "/account/claims", "GET", response="domain.claim_shapes:ClaimsOverview")
def get_claims_overview(call: Call):
    """How many claims are OPEN, and the oldest of them: exact at the time of the read"""
    from ..service import claim_reads

    return ok(claim_reads.claims_overview(call.account))
