"""Settings come from the environment only (decisions §1); read lazily so tests can change them."""
import hashlib
import hmac
import os

DEFAULT_TABLE_NAME = "supplier-ordering"
_DEV_SECRET = "dev-signing-secret-change-me"


def table_name() -> str:
    return os.environ.get("TABLE_NAME", DEFAULT_TABLE_NAME)


def default_timezone() -> str:
    return os.environ.get("TIMEZONE") or "UTC"


def derived_secret(purpose: str) -> bytes:
    """A secret per purpose (cursor, webhook, ...) derived from SIGNING_SECRET, so one leak does not expose all."""
    root = os.environ.get("SIGNING_SECRET") or _DEV_SECRET
    return hmac.new(root.encode(), purpose.encode(), hashlib.sha256).digest()


def allow_private_image_hosts() -> bool:
    return os.environ.get("ALLOW_PRIVATE_IMAGE_HOSTS", "").lower() in ("1", "true", "yes")
