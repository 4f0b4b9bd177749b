"""Account settings items. The delivery settings document is read with its defaults filled in."""

from .. import config
from ..domain.delivery_settings import default_delivery_settings
from . import documents, keys

DELIVERIES = "DELIVERIES"


def deliveries_key(account: str) -> dict:
    return keys.settings_key(account, DELIVERIES)


def with_defaults(data: dict | None) -> dict:
    """A missing item, or a missing field of it, reads as the default."""
    return {**default_delivery_settings(config.default_timezone()), **(data or {})}


def get_deliveries(account: str) -> dict:
    return with_defaults(documents.get(deliveries_key(account)))


def created_deliveries(set_fields: dict) -> dict:
    """What the first write of the delivery settings stores: the defaults with its fields."""
    return {**with_defaults(None), **set_fields}
