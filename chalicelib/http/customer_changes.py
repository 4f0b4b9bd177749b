"""A customer's change of one of its deliveries, as each of its routes hands it to its use case."""

from .call import Call
from .etags import if_match
from .responses import ok


def customer_change(action, call: Call, *path: str):
    """Cancel, receive, a claim, a withdrawal: the path's ids, the body (which may be left out), the Idempotency-Key
    and If-Match handed on alike."""
    body, tag = call.optional_body(), if_match(call.header("if-match"))
    return ok(action(call.account, call.customer_id, *path, body, call.idempotency, tag))
