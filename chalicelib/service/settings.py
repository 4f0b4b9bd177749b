"""Use cases of the account delivery settings (interface: Account delivery settings; decisions §7)."""
from ..domain.customer import validate_account_settings_patch
from ..store import settings
from .documents import contention_as_conflict


def get_delivery_settings(account: str) -> dict:
    return settings.get_deliveries(account)


def patch_delivery_settings(account: str, body) -> dict:
    changes = validate_account_settings_patch(body)
    with contention_as_conflict():
        return settings.update_deliveries(account, changes.set, changes.remove)
