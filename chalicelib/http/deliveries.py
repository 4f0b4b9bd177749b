"""Supplier routes of deliveries (interface: GET /deliveries, GET /deliveries/:id, POST .../responses; §8 CSV;
§14 integration state)."""

import re

from chalice import Blueprint, Response

from ..domain.delivery_status import STATUSES
from ..domain.errors import FieldError, ValidationFailed, invalid
from ..domain.integration_status import STATUSES as INTEGRATION_STATUSES
from . import params
from .call import Call
from .endpoint import endpoint
from .etags import etag, if_match
from .responses import ok, page_of_texts

bp = Blueprint(__name__)

CSV_TYPES = {"utf-8": "text/csv; charset=utf-8", "latin1": "text/csv; charset=iso-8859-1"}


def _require_csv_accepted(accept: str | None) -> None:
    """The file is sent as binary (latin1 is not UTF-8), which API Gateway and Chalice only do when the request's
    Accept header names it; say so clearly instead of Chalice's generic refusal."""
    parts = {part.strip().lower() for part in re.split("[,;]", accept or "")}
    if "*/*" not in (accept or "") and "text/csv" not in parts:
        raise invalid("Accept", "must accept text/csv (for example 'Accept: text/csv' or 'Accept: */*')")


def _each_named(*parsers) -> tuple[list[FieldError], list]:
    """Every parser's value (None when wrong) and the errors of all of them: a 400 names every wrong parameter."""
    errors, values = [], []
    for parse in parsers:
        try:
            values.append(parse())
        except ValidationFailed as failed:
            errors += failed.errors
            values.append(None)
    return errors, values


@endpoint(
    bp,
    "/deliveries",
    "GET",
    response="domain.delivery:SupplierDeliveryList",
    query=("status", "integration"),
    paged=True,
)
def list_deliveries(call: Call):
    """List deliveries, newest first, optionally only those in one status; or one integration state's worklist"""
    from ..service import delivery_reads as reads

    errors, (paging, status, integration) = _each_named(
        call.page,
        lambda: params.one_of(call.queries, "status", STATUSES),
        lambda: params.one_of(call.queries, "integration", INTEGRATION_STATUSES),
    )
    if call.queries.get("status") is not None and call.queries.get("integration") is not None:
        message = "cannot be combined with {}: pass one of status and integration"
        named = {error.path for error in errors}
        errors += [
            FieldError(name, message.format(other))
            for name, other in (("integration", "status"), ("status", "integration"))
            if name not in named
        ]
    if errors:
        raise ValidationFailed(errors)
    limit, cursor = paging
    page = reads.list_deliveries(call.account, limit, cursor, status, integration)
    return page_of_texts("deliveries", page.items, page.cursor)


@endpoint(
    bp,
    "/deliveries/{delivery_id}/integration",
    "PUT",
    body="domain.integration:IntegrationBody",
    response="domain.integration:Integration",
)
def set_delivery_integration(call: Call, delivery_id: str):
    """Acknowledge a delivery: whether your ERP imported it (IMPORTED) or failed to (FAILED, with a message)"""
    from ..service import deliveries

    return ok(deliveries.set_integration(call.account, delivery_id, call.body()))


@endpoint(bp, "/account/integration", "GET", response="domain.integration:IntegrationOverview")
def get_integration_overview(call: Call):
    """How many deliveries your ERP has not taken (PENDING) or failed on (FAILED), and the oldest pending one"""
    from ..service import delivery_reads as reads

    return ok(reads.integration_overview(call.account))


@endpoint(bp, "/deliveries/{delivery_id}", "GET", response="domain.delivery:SupplierDelivery")
def get_delivery(call: Call, delivery_id: str):
    """Read one delivery in full"""
    from ..service import delivery_reads as reads

    found, revision = reads.get_versioned(call.account, delivery_id)
    return ok(found, headers={"ETag": etag(revision)})


@endpoint(
    bp,
    "/deliveries/{delivery_id}/responses",
    "POST",
    body="domain.delivery:ResponseBody",
    response="domain.delivery:SupplierDelivery",
)
def respond_to_delivery(call: Call, delivery_id: str):
    """Accept, update or reject a delivery"""
    from ..service import deliveries

    return ok(
        deliveries.respond(call.account, delivery_id, call.body(), call.idempotency, if_match(call.header("if-match")))
    )


@endpoint(bp, "/deliveries/{delivery_id}/csv", "GET", query=("encoding",))
def delivery_order_file(call: Call, delivery_id: str):
    """The delivery's CSV order file (utf-8 with BOM, or latin1)"""
    from ..service import deliveries

    _require_csv_accepted(call.header("accept"))
    encoding = params.encoding(call.queries)
    number, content = deliveries.order_file(call.account, delivery_id, encoding)
    headers = {
        "Content-Type": CSV_TYPES[encoding],
        "Content-Disposition": f'attachment; filename="delivery-{number}.csv"',
    }
    return Response(body=content, status_code=200, headers=headers)
