"""Account settings items. The delivery settings document is read with its defaults filled in."""

from ..domain.delivery_settings import DEFAULT_TIMEZONE, default_delivery_settings
from . import documents, keys, operations, table
from .operations import Operation
from .outcomes import Taken

DELIVERIES = "DELIVERIES"


def deliveries_key(account: str) -> dict:
    return keys.settings_key(account, DELIVERIES)


def with_defaults(data: dict | None) -> dict:
    """A missing item, or a missing field of it, reads as the default. The zone is stored when the account is made
    (`create_defaults`); only accounts made before that read UTC, never the zone of the process reading them."""
    return {**default_delivery_settings(DEFAULT_TIMEZONE), **(data or {})}


def get_deliveries(account: str) -> dict:
    return with_defaults(documents.get(deliveries_key(account)))


def created_deliveries(set_fields: dict) -> dict:
    """What the first write of the delivery settings stores: the defaults with its fields."""
    return {**with_defaults(None), **set_fields}


def create_defaults(account: str, timezone: str) -> bool:
    """Store the delivery settings an account is made with: the defaults in `timezone` (decisions §7: it keeps that
    zone until its settings change it). False when it has settings already, which are left as they are. No feed
    entry: the account's feed starts with its first change (§13)."""
    item = {**deliveries_key(account), "data": default_delivery_settings(timezone)}
    put = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    return operations.write(Operation({"Put": put}, Taken())) is None  # Taken: it has settings already
