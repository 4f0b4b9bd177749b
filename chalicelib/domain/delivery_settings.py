"""The account's delivery settings before any are stored, apart from the pydantic models of domain/customer.py so
that reading the settings imports no pydantic."""

from .claim_status import DEFAULT_WINDOW_HOURS


def default_delivery_settings(timezone: str) -> dict:
    return {
        "timezone": timezone,
        "allow_delivery_comments": False,
        "allow_product_comments": False,
        "claim_window_hours": DEFAULT_WINDOW_HOURS,
    }
