"""CORS (switched on by CORS_ALLOW_ORIGINS, none by default): which browser origins may call the API."""

from .. import config

ALLOW_HEADERS = "Authorization, Content-Type, If-Match, Idempotency-Key"
EXPOSE_HEADERS = "ETag, X-Request-Id, Retry-After, Allow, Idempotent-Replayed, Content-Disposition"
MAX_AGE_SECONDS = "600"


def allowed_origin(origin: str | None) -> str | None:
    """The value of Access-Control-Allow-Origin for this Origin, or None when it is not allowed."""
    if not origin:
        return None
    allowed = config.cors_allow_origins()
    if "*" in allowed:
        return "*"
    return origin if origin.rstrip("/") in allowed else None


def headers(origin: str | None, preflight_methods: str | None = None) -> dict[str, str]:
    """Headers to add to a response; preflight_methods is set for an OPTIONS preflight (the path's methods)."""
    allow = allowed_origin(origin)
    if allow is None:
        return {}
    added = {"Access-Control-Allow-Origin": allow, "Access-Control-Expose-Headers": EXPOSE_HEADERS}
    if allow != "*":
        added["Vary"] = "Origin"
    if preflight_methods is not None:
        added["Access-Control-Allow-Methods"] = preflight_methods
        added["Access-Control-Allow-Headers"] = ALLOW_HEADERS
        added["Access-Control-Max-Age"] = MAX_AGE_SECONDS
    return added
