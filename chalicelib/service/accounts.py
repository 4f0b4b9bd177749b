"""Accounts and their tokens (decisions §1-2)."""

from .. import config
from ..domain.errors import Conflict, NotFound, ValidationFailed, invalid
from ..domain.identifiers import ID_RULE, is_identifier
from ..domain.token_secret import SECRET_RULE, is_secret
from ..domain.values import Role
from ..store import accounts, categories, outcomes, settings, tokens
from . import clock

SUPPLIER, CUSTOMER = Role.SUPPLIER, Role.CUSTOMER


def create_account(account_id: str, name: str | None = None, supplier_token: str | None = None) -> dict:
    """Create an account (idempotent) and a supplier token for it.

    With supplier_token the given secret is (re)registered, so `make run` can keep a fixed development token. The
    account takes the deployment's TIMEZONE into its stored settings and keeps it (decisions §7); an account that
    has settings keeps them, and one made before settings were stored at creation gets them now.
    """
    if not is_identifier(account_id):
        raise invalid("id", ID_RULE)
    if supplier_token is not None and not is_secret(supplier_token):
        raise invalid("token", SECRET_RULE)  # authentication would refuse it: it could never log in
    from ..domain.schedule import TIME_ZONE_RULE, is_time_zone  # (zoneinfo: not on a cold read's path)

    zone = config.default_timezone()
    if not is_time_zone(zone):
        raise ValidationFailed([], detail=f"TIMEZONE {zone!r} {TIME_ZONE_RULE}")
    holder = tokens.find(supplier_token) if supplier_token else None
    if holder is not None and (holder["account"], holder["role"]) != (account_id, SUPPLIER):
        raise _token_taken(holder["account"])  # refused before the account is created; the token write checks too
    created = accounts.create(account_id, name or account_id, clock.now()) is None
    settings.create_defaults(account_id, zone)
    categories.held(account_id)  # its count of categories kept from the start (decisions §4 bounds them)
    token_id, secret = issued(tokens.create(account_id, SUPPLIER, secret=supplier_token))
    return {"account": account_id, "created": created, "token_id": token_id, "token": secret}


def create_supplier_token(account_id: str) -> tuple[str, str]:
    if accounts.get(account_id) is None:
        raise NotFound(f"account {account_id} does not exist")
    return issued(tokens.create(account_id, SUPPLIER))


def issued(created: tuple[str, str] | outcomes.Taken) -> tuple[str, str]:
    if isinstance(created, outcomes.Taken):
        raise _token_taken(created.owner)
    return created


def _token_taken(holder: str) -> Conflict:
    return Conflict(
        f"this token already belongs to account {holder} and is never moved;"
        " choose another secret, or leave --token out to get a new one"
    )


def revoke_token(account_id: str, token_id: str) -> None:
    if isinstance(tokens.revoke(account_id, token_id), outcomes.Gone):
        raise token_not_found(token_id)


def token_not_found(token_id: str) -> NotFound:
    return NotFound(f"token {token_id} does not exist")
