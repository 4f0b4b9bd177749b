"""The Idempotency-Key header on POST routes (decisions §11): replay the first answer, never redo the work."""

from typing import Callable

from chalice import Response

from ..domain.errors import ServiceError
from ..domain.field_order import Order
from ..service import idempotency
from ..service.authentication import Principal
from .request_ids import request_id
from .responses import REPLAYED, from_error, with_instance


def _scope(principal: Principal) -> str:
    """Keys are per account for suppliers and per customer for customers (customers of one account may collide)."""
    if principal.customer_id is not None:
        return f"CUSTOMER:{principal.customer_id}"
    return principal.role.upper()


def _query(request) -> list[tuple[str, str]]:
    """The query as the service reads it (decisions §11): each name with its last value, as `query_params[name]`
    gives it to http/params.py, so `?a=1&a=2` is `a=2` and differs from `?a=2&a=1`."""
    found = request.query_params or {}
    return [(name, found[name]) for name in found]


def _content_type(header: str | None) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The media type and its parameters as the service reads them: case aside for names and the charset."""
    media, *parameters = (header or "").split(";")
    pairs = []
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        name, value = name.strip().lower(), value.strip().strip('"')
        pairs.append((name, value.lower() if name == "charset" else value))
    return media.strip().lower(), tuple(sorted(pairs))


def _text(body) -> str:
    return body.decode("utf-8") if isinstance(body, bytes) else str(body or "")


def _as_sent(call) -> tuple[tuple[str, tuple[tuple[str, str], ...]], bytes]:
    """The Content-Type and the body as they came."""
    raw = call.request.raw_body or b""
    return _content_type(call.header("content-type")), raw.encode() if isinstance(raw, str) else raw


def handle(
    call, work: Callable[[], Response], reads: Callable | None = None, order: Order | None = None, status: int = 200
) -> Response:
    """Run `work` (which may raise ServiceError) at most once per key and request.

    `reads(call)` gives the (Content-Type, body) the route reads out of an envelope, such as the file part of a
    form, whose boundary a client picks anew on each retry; None when it cannot read one (the route then answers
    the malformed request itself, and its answer is compared as sent). `order`, `status`: the field order and
    status of `work`'s answer of success, so an answer recorded inside the work's transaction has the same bytes."""
    key = call.header(idempotency.HEADER)
    if key is None:
        return work()
    request = call.request
    content_type, body = (reads(call) if reads is not None else None) or _as_sent(call)
    fingerprint = idempotency.fingerprint(
        request.method, request.path, request.uri_params, _query(request), content_type, body
    )
    try:
        outcome = idempotency.begin(call.account, _scope(call.principal), key, fingerprint, order, status)
    except ServiceError as error:
        return from_error(error)
    if isinstance(outcome, idempotency.Replay):
        return Response(body=outcome.body, status_code=outcome.status, headers={**outcome.headers, REPLAYED: "true"})
    call.idempotency = outcome
    failed = False
    try:
        response = work()
    except ServiceError as error:
        failed, response = True, from_error(error)
    except BaseException:
        idempotency.abandon(outcome)
        raise
    with_instance(response, request_id(request))  # kept in the answer: its replays name the first request (§11)
    headers = {k: v for k, v in response.headers.items() if isinstance(v, str)}
    idempotency.finish(outcome, response.status_code, headers, _text(response.body), work_failed=failed)
    return response
