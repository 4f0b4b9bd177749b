"""Routes of webhook settings and the log of webhook deliveries (decisions §10, extension)."""

from chalice import Blueprint

from .call import Call
from .endpoint import endpoint
from .responses import no_content, ok
from .responses import page as page_body

bp = Blueprint(__name__)


@endpoint(bp, "/account/settings/webhooks", "GET", response="domain.webhook:WebhookSettingsView")
def get_webhook_settings(call: Call):
    """Where events are sent, and the secret they are signed with"""
    from ..service import webhooks

    return ok(webhooks.get_settings(call.account))


@endpoint(
    bp,
    "/account/settings/webhooks",
    "PUT",
    body="domain.webhook:WebhookSettings",
    response="domain.webhook:WebhookSettingsView",
)
def put_webhook_settings(call: Call):
    """Configure where events are sent; the signing secret is kept across changes"""
    from ..service import webhooks

    return ok(webhooks.put_settings(call.account, call.body()))


@endpoint(bp, "/account/settings/webhooks", "DELETE", status=204)
def delete_webhook_settings(call: Call):
    """Stop sending events (they stay pending until a webhook is configured again, or fail when their retry window ends)"""  # noqa: E501 - the OpenAPI summary, one line
    from ..service import webhooks

    webhooks.delete_settings(call.account)
    return no_content()


@endpoint(bp, "/account/webhook-deliveries", "GET", response="domain.webhook:WebhookDeliveryList", paged=True)
def list_webhook_deliveries(call: Call):
    """Events sent or to be sent, newest first, with their attempts"""
    from ..service import webhooks

    limit, cursor = call.page()
    page = webhooks.list_deliveries(call.account, limit, cursor)
    return page_body("webhook_deliveries", page.items, page.cursor)
