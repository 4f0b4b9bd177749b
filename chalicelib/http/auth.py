"""Who is calling: `Authorization: token <secret>` or `Bearer <secret>`, resolved through a per-process cache.

A cached principal is trusted for CACHE_SECONDS, so a steady-state request costs no DynamoDB call and a revoked
token stops working within that time (decisions §2 allows 60 s). Unknown tokens are not cached, so a token
works the moment it is created.
"""

import threading

from ..domain.errors import Forbidden, Unauthorized
from ..domain.token_secret import is_secret
from ..domain.values import Role
from ..service import clock
from ..service.authentication import Principal, principal_of

CACHE_SECONDS = 30
_MAX_ENTRIES = 10_000
_cache: dict[str, tuple[Principal, float]] = {}
_lock = threading.Lock()

SUPPLIER, CUSTOMER = Role.SUPPLIER, Role.CUSTOMER


def _secret_from(header: str | None) -> str:
    if not header:
        raise Unauthorized("an Authorization header is required: 'token <secret>' or 'Bearer <secret>'")
    scheme, _, secret = header.strip().partition(" ")
    secret = secret.strip()
    if scheme.lower() not in ("token", "bearer") or not is_secret(secret):
        raise Unauthorized("the Authorization header must be 'token <secret>' or 'Bearer <secret>'")
    return secret


def _principal(secret: str, now: float) -> Principal | None:
    cached = _cache.get(secret)
    if cached and cached[1] > now:
        return cached[0]
    principal = principal_of(secret)
    with _lock:
        if principal is None:
            _cache.pop(secret, None)
        else:
            if len(_cache) >= _MAX_ENTRIES:
                _cache.clear()
            _cache[secret] = (principal, now + CACHE_SECONDS)
    return principal


def authenticate(authorization: str | None, role: str) -> Principal:
    principal = _principal(_secret_from(authorization), clock.now().timestamp())
    if principal is None:
        raise Unauthorized("the token is unknown or has been revoked")
    if principal.role != role:
        raise Forbidden(f"this endpoint needs a {role} token")
    return principal


def forget_all() -> None:
    """Drop every cached token (tests; a revocation in this process)."""
    with _lock:
        _cache.clear()
