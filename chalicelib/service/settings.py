"""Use cases of the account delivery settings (interface: Account delivery settings; decisions §7)."""

from ..domain.feed import SETTINGS_DELIVERIES, Change, ChangeType
from ..store import settings
from . import documents
from .standing_rules import standing_rules_changed

# Validation (pydantic, zoneinfo) is imported by the write that uses it: a cold GET never imports them.


def get_delivery_settings(account: str) -> dict:
    return settings.get_deliveries(account)


def patch_delivery_settings(account: str, body) -> dict:
    from ..domain import customer as customer_rules

    changes = customer_rules.validate_account_settings_patch(body)
    change = Change(ChangeType.SETTINGS_UPDATED, SETTINGS_DELIVERIES)
    updated = documents.update(
        account,
        settings.deliveries_key(account),
        changes.set,
        changes.remove,
        create_with=settings.created_deliveries(changes.set),
        created=change,
        updated=change,
        shown=settings.with_defaults,
        also=lambda before, after: standing_rules_changed(account, before, after),
    )
    return settings.with_defaults(updated)
