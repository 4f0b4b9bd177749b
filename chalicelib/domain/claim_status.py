"""The value lists of claims (decisions §18, second half), pure and free of pydantic: the worklist's parameters
and the store read them on cold paths; the shapes derive their `Literal`s (and the OpenAPI enums) from them."""

from enum import StrEnum


class ClaimStatus(StrEnum):
    OPEN = "OPEN"
    ACCEPTED = "ACCEPTED"
    PARTIALLY_ACCEPTED = "PARTIALLY_ACCEPTED"
    DECLINED = "DECLINED"
    WITHDRAWN = "WITHDRAWN"


class ClaimIssue(StrEnum):
    """What is wrong with a claimed line (EANCOM RECADV's discrepancy reasons, in the trade's words)."""

    SHORT = "SHORT"
    DAMAGED = "DAMAGED"
    REFUSED = "REFUSED"
    WRONG_ITEM = "WRONG_ITEM"
    EXPIRED = "EXPIRED"
    QUALITY = "QUALITY"
    OTHER = "OTHER"


class ClaimResolution(StrEnum):
    """How the supplier settles a line it accepts."""

    CREDIT = "CREDIT"
    REPLACE = "REPLACE"
    COLLECT = "COLLECT"
    NONE = "NONE"


OPEN, ACCEPTED, PARTIALLY_ACCEPTED, DECLINED, WITHDRAWN = ClaimStatus
STATUSES = tuple(ClaimStatus)
# The claims whose counts a line's further claims are measured against: all but the withdrawn and the declined.
HOLDING = frozenset({OPEN, ACCEPTED, PARTIALLY_ACCEPTED})
DEFAULT_WINDOW_HOURS = 72  # the account's claim_window_hours until it sets one
MAX_WINDOW_HOURS = 2160  # 90 days


def claim_id(delivery_id: int | str, number: int) -> str:
    """A claim's id in the change feed: "<delivery id>:<number>"."""
    return f"{delivery_id}:{number}"


def claim_of(claim_ref: str) -> tuple[int, int]:
    """(delivery id, number) of a feed id made by claim_id."""
    delivery_id, number = claim_ref.split(":")
    return int(delivery_id), int(number)


def parse_number(text: str | None) -> int | None:
    """A claim number from a URL: 1 to 99 in ASCII digits without a leading 0, else None (reads as 404)."""
    if not text or len(text) > 2 or not text.isascii() or not text.isdigit() or text.startswith("0"):
        return None
    return int(text)
