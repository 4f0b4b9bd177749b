"""Routes of the account's events: list them to catch up, resend one (decisions §10, extension)."""

from chalice import Blueprint

from .call import Call
from .endpoint import endpoint
from .responses import ok
from .responses import page as page_body

bp = Blueprint(__name__)


@endpoint(bp, "/account/events", "GET", response="domain.webhook:EventList", paged=True)
def list_events(call: Call):
    """The account's events, newest first, with their delivery status"""
    from ..service import webhooks

    limit, cursor = call.page()
    page = webhooks.list_events(call.account, limit, cursor)
    return page_body("events", page.items, page.cursor)


@endpoint(bp, "/account/events/{event_id}/resend", "POST", response="domain.webhook:Event", status=202)
def resend_event(call: Call, event_id: str):
    """Send an event again, with the same idempotency_key: 202 at once, the attempt follows within seconds"""
    from ..service import webhooks

    return ok(webhooks.resend(call.account, event_id, call.idempotency), status=202)
