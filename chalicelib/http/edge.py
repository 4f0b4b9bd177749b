"""What every response gets on its way out, whichever view (or Chalice itself) answered:

- a problem+json body for the failures Chalice answers in its own format (405, 415, 500);
- X-Request-Id, repeated as `instance` in problem bodies (decisions §3);
- Retry-After on 409 (contention that may pass);
- X-Feed-Unit on the answer of a request that committed feed changes: the `unit` their entries carry;
- no body on HEAD; CORS headers when CORS_ALLOW_ORIGINS allows the Origin.
"""

from chalice import Response

from ..domain.problems import ProblemType
from ..service import write_units
from . import cors, fallbacks
from .bodies import limit_for
from .request_ids import HEADER as REQUEST_ID
from .request_ids import request_id
from .responses import PROBLEM, REPLAYED, problem, with_instance

RETRY_AFTER_SECONDS = "1"
FEED_UNIT = "X-Feed-Unit"


def _reshape_chalice_error(response: Response, route: str | None) -> Response:
    """Chalice answers some failures itself (405, 415, 500) in its own format; reshape them."""
    status = response.status_code
    if status == 405:
        # A method no view exists for (TRACE, say): Chalice's Allow would list the fallback views too.
        allowed = fallbacks.ALLOWED_METHODS.get(route or "")
        if allowed is None:  # one of the catch-all paths: no such resource
            return fallbacks.not_found()
        return fallbacks.method_not_allowed(allowed)
    if status == 415:
        return problem(415, ProblemType.UNSUPPORTED_MEDIA_TYPE, "send the body as application/json")
    if status >= 500:
        return problem(500, ProblemType.INTERNAL_ERROR, "an unexpected error occurred; it has been logged")
    if status == 404:
        return problem(404, ProblemType.NOT_FOUND, "no such resource")
    type_ = ProblemType.VALIDATION_ERROR if status == 400 else ProblemType.INTERNAL_ERROR
    return problem(status, type_, "the request failed")


def edge_middleware(event, get_response):
    raw = event.raw_body
    route = (event.context or {}).get("resourcePath")
    limit = limit_for(route)
    if raw is not None and len(raw) > limit:
        response = problem(413, ProblemType.PAYLOAD_TOO_LARGE, f"request bodies are limited to {limit} bytes")
    else:
        write_units.begin_request()
        response = get_response(event)
        units = write_units.committed()
        if units:
            response.headers[FEED_UNIT] = ", ".join(units)
    if response.status_code >= 400 and not response.headers.get("Content-Type", "").startswith(PROBLEM):
        response = _reshape_chalice_error(response, route)
    identifier = request_id(event)
    response.headers[REQUEST_ID] = identifier
    if response.headers.get(REPLAYED) != "true":  # a replay is the first answer byte for byte, its `instance` too
        with_instance(response, identifier)
    if response.status_code == 409:
        response.headers.setdefault("Retry-After", RETRY_AFTER_SECONDS)
    headers = event.headers or {}
    preflight = event.method == "OPTIONS" and headers.get("access-control-request-method") is not None
    response.headers.update(cors.headers(headers.get("origin"), response.headers.get("Allow") if preflight else None))
    if event.method == "HEAD":
        # The GET's headers, Content-Length included (RFC 9110 §9.3.2), without its body. Every body the service
        # renders is text or bytes (http/responses.py).
        body = response.body or b""
        response.headers["Content-Length"] = str(len(body.encode("utf-8") if isinstance(body, str) else body))
        response.body = ""
    return response
