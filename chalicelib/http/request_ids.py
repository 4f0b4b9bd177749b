"""The id of a request, chosen once: the log line, the X-Request-Id header and a problem's `instance` agree."""

import uuid

HEADER = "X-Request-Id"


def request_id(request) -> str:
    """API Gateway's request id (the x-amzn-RequestId clients see), else Lambda's, else a new one (local)."""
    known = getattr(request, "_request_id", None)
    if known:
        return known
    context = getattr(request, "context", None) or {}
    lambda_context = getattr(request, "lambda_context", None)
    chosen = context.get("requestId") or getattr(lambda_context, "aws_request_id", None) or uuid.uuid4().hex
    try:
        request._request_id = chosen
    except AttributeError:  # a request object that takes no attributes: the id is still returned
        pass
    return chosen
