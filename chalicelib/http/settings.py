"""Routes of the account delivery settings (interface: Account delivery settings; decisions §7)."""

from chalice import Blueprint

from .call import Call
from .endpoint import endpoint
from .responses import ok

bp = Blueprint(__name__)


@endpoint(bp, "/account/settings/deliveries", "GET", response="domain.customer:AccountDeliverySettings")
def get_delivery_settings(call: Call):
    """Read the account's delivery settings"""
    from ..service import settings

    return ok(settings.get_delivery_settings(call.account))


@endpoint(
    bp,
    "/account/settings/deliveries",
    "PATCH",
    body="domain.customer:AccountDeliverySettingsPatch",
    response="domain.customer:AccountDeliverySettings",
)
def patch_delivery_settings(call: Call):
    """Change the account's delivery settings; null clears a delivery rule field"""
    from ..service import settings

    return ok(settings.patch_delivery_settings(call.account, call.body()))
