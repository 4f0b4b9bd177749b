"""The account's delivery settings before any are stored, apart from the pydantic models of domain/customer.py so
that reading the settings imports no pydantic."""

from .claim_status import DEFAULT_WINDOW_HOURS

DEFAULT_TIMEZONE = "UTC"  # of an account made before its zone was stored (decisions §7: else UTC)


def default_delivery_settings(timezone: str) -> dict:
    return {
        "timezone": timezone,
        "allow_delivery_comments": False,
        "allow_product_comments": False,
        "claim_window_hours": DEFAULT_WINDOW_HOURS,
    }
