"""Accounts and their tokens (decisions §1-2)."""
from ..domain.identifiers import ID_RULE, is_identifier
from ..domain.errors import NotFound, invalid
from ..store import accounts, tokens

SUPPLIER, CUSTOMER = "supplier", "customer"


def create_account(account_id: str, name: str | None = None, supplier_token: str | None = None) -> dict:
    """Create an account (idempotent) and a supplier token for it.

    With supplier_token the given secret is (re)registered, so `make run` can keep a fixed development token.
    """
    if not is_identifier(account_id):
        raise invalid("id", ID_RULE)
    created = accounts.create(account_id, name or account_id)
    token_id, secret = tokens.create(account_id, SUPPLIER, secret=supplier_token)
    return {"account": account_id, "created": created, "token_id": token_id, "token": secret}


def create_supplier_token(account_id: str) -> tuple[str, str]:
    if accounts.get(account_id) is None:
        raise NotFound(f"account {account_id} does not exist")
    return tokens.create(account_id, SUPPLIER)


def revoke_token(account_id: str, token_id: str) -> None:
    tokens.revoke(account_id, token_id)
