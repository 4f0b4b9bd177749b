"""Who a secret belongs to: the use case behind every authenticated request."""

from typing import NamedTuple

from ..store import tokens


class Principal(NamedTuple):  # not a dataclass: its class is built on every cold start, a tenth of the cost
    """Who calls: the account, the token's role and id, and the customer of a customer token."""

    account: str
    role: str
    token_id: str | None = None
    customer_id: str | None = None


def principal_of(secret: str) -> Principal | None:
    """The token's account, role and customer, or None when it is unknown or revoked."""
    found = tokens.find(secret)
    if found is None:
        return None
    return Principal(found["account"], found["role"], found.get("token_id"), found.get("customer_id"))
