"""Routes of the account delivery settings (interface: Account delivery settings; decisions §7)."""
from chalice import Blueprint

from ..domain.customer import AccountDeliverySettings, AccountDeliverySettingsPatch
from ..service import settings
from .api import Call, endpoint
from .responses import ok

bp = Blueprint(__name__)


@endpoint(bp, "/account/settings/deliveries", "GET", response=AccountDeliverySettings)
def get_delivery_settings(call: Call):
    return ok(settings.get_delivery_settings(call.account))


@endpoint(
    bp, "/account/settings/deliveries", "PATCH", body=AccountDeliverySettingsPatch, response=AccountDeliverySettings
)
def patch_delivery_settings(call: Call):
    """Change the account's delivery settings; null clears a delivery rule field"""
    return ok(settings.patch_delivery_settings(call.account, call.body()))
