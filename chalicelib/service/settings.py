"""Use cases of the account delivery settings (interface: Account delivery settings; decisions §7)."""

from ..store import settings
from . import clock
from .documents import contention_as_conflict

# Validation (pydantic, zoneinfo) is imported by the write that uses it: a cold GET never imports them.


def get_delivery_settings(account: str) -> dict:
    return settings.get_deliveries(account)


def patch_delivery_settings(account: str, body) -> dict:
    from ..domain import customer as customer_rules

    changes = customer_rules.validate_account_settings_patch(body)
    with contention_as_conflict():
        return settings.update_deliveries(account, changes.set, changes.remove, clock.now())
