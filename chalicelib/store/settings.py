"""Account settings items. The delivery settings document is read with its defaults filled in."""

import datetime as dt

from .. import config
from ..domain.delivery_settings import default_delivery_settings
from ..domain.feed import SETTINGS_DELIVERIES, Change, ChangeType
from . import documents, keys

DELIVERIES = "DELIVERIES"


def deliveries_key(account: str) -> dict:
    return keys.settings_key(account, DELIVERIES)


def with_defaults(data: dict | None) -> dict:
    """A missing item, or a missing field of it, reads as the default."""
    return {**default_delivery_settings(config.default_timezone()), **(data or {})}


def get_deliveries(account: str) -> dict:
    return with_defaults(documents.get(deliveries_key(account)))


def update_deliveries(account: str, set_fields: dict, remove_fields: tuple[str, ...], now: dt.datetime) -> dict:
    """Change fields of the delivery settings; the first write stores the defaults with them."""
    created = {**with_defaults(None), **set_fields}
    change = Change(ChangeType.SETTINGS_UPDATED, SETTINGS_DELIVERIES)
    return with_defaults(
        documents.update(
            deliveries_key(account),
            set_fields,
            remove_fields,
            create_with=created,
            entry=documents.Entry(account, change, change),
            now=now,
            shown=with_defaults,
        )
    )
