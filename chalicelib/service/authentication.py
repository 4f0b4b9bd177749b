"""Who a secret belongs to: the use case behind every authenticated request."""
from ..store import tokens


def principal_of(secret: str) -> dict | None:
    """The token's account, role and customer, or None when it is unknown or revoked."""
    return tokens.find(secret)
