"""Route of the change feed (decisions §13): what changed since a reader last looked, in order."""

import re

from chalice import Blueprint

from ..domain.errors import FieldError, ValidationFailed
from ..domain.feed import DEFAULT_PAGE, MAX_PAGE
from .call import Call
from .endpoint import endpoint
from .params import whole_number
from .responses import ok

bp = Blueprint(__name__)


def _feed_query(query) -> tuple[int | None, int, bool]:
    """after (a sequence, or `latest`: None), limit (1-1000, default 100), include=data; every wrong one named."""
    errors = []
    raw_after = query.get("after")
    after: int | None = 0
    if raw_after == "latest":
        after = None
    elif raw_after is not None:
        after = int(raw_after) if re.fullmatch(r"[0-9]{1,15}", raw_after) else -1
        if after < 0:
            errors.append(FieldError("after", "must be a sequence number (0 or more) or latest"))
    limit = DEFAULT_PAGE
    if query.get("limit") is not None:
        limit = whole_number(query["limit"], 1, MAX_PAGE)
        if limit is None:
            errors.append(FieldError("limit", f"must be a whole number from 1 to {MAX_PAGE}"))
    include = query.get("include")
    if include is not None and include != "data":
        errors.append(FieldError("include", "must be data"))
    if errors:
        raise ValidationFailed(errors)
    return after, limit, include == "data"


@endpoint(bp, "/changes", "GET", response="domain.feed_shapes:ChangePage", query=("after", "limit", "include"))
def list_changes(call: Call):
    """The account's changes after a sequence, oldest first (the change feed)"""
    from ..service import changes

    after, limit, include_data = _feed_query(call.queries)
    return ok(changes.read_changes(call.account, after, limit, include_data))
