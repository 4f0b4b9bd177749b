"""Rendering bodies: JSON for results (fields in the order of decisions §3), RFC 9457 problem+json for errors."""

import json

from chalice import Response

from ..domain.errors import Busy, ServiceError, TooManyRequests
from ..domain.field_order import Order, ordered
from ..domain.problems import ProblemType
from ..domain.rendering import json_text

JSON = "application/json"
PROBLEM = "application/problem+json"
REPLAYED = "Idempotent-Replayed"  # the header of an Idempotency-Key replay (decisions §11)


def to_json(body, order: Order | None = None) -> str:
    """The JSON text of a result; an answer recorded for Idempotency-Key in the work's own transaction is
    rendered the same way (service/idempotency.IdempotencyClaim.text)."""
    return json_text(ordered(body, order))


def ok(body, status: int = 200, headers: dict | None = None) -> Response:
    """A JSON result. The body stays a Python value until the endpoint renders it in its response's order."""
    return Response(body=body, status_code=status, headers={"Content-Type": JSON, **(headers or {})})


def render(response: Response, order: Order | None) -> Response:
    """Serialise a result left as a Python value by `ok`; other responses pass unchanged."""
    if not isinstance(response.body, (str, bytes)):
        response.body = to_json(response.body, order)
    return response


def no_content() -> Response:
    return Response(body="", status_code=204, headers={})


def problem(
    status: int, type_: ProblemType, detail: str, errors=(), headers: dict | None = None, extensions: dict | None = None
) -> Response:
    body = {
        "type": str(type_),
        "title": type_.title,
        "status": status,
        "detail": detail,
        "errors": [{"path": e.path, "message": e.message} for e in errors],
        **(extensions or {}),
    }
    return Response(body=json.dumps(body), status_code=status, headers={"Content-Type": PROBLEM, **(headers or {})})


def from_error(error: ServiceError) -> Response:
    headers = {"WWW-Authenticate": 'Bearer realm="supplier-ordering"'} if error.status == 401 else None
    if isinstance(error, (TooManyRequests, Busy)) and error.retry_after is not None:
        headers = {"Retry-After": str(error.retry_after)}
    return problem(error.status, error.type, error.detail, error.errors, headers, error.extensions)


def page_of_texts(name: str, texts: list[str], cursor: str | None) -> Response:
    """A list page of items kept as their JSON text (store/rendered.py), joined without parsing them."""
    tail = f',"cursor":{json.dumps(cursor)}' if cursor else ""
    return ok(f'{{"{name}":[{",".join(texts)}]{tail}}}')


def page(name: str, items: list, cursor: str | None) -> Response:
    """A list page: `{name: [...]}` plus `cursor` only when there is a next page."""
    body = {name: items}
    if cursor:
        body["cursor"] = cursor
    return ok(body)


def with_instance(response: Response, instance: str) -> None:
    """A problem body names the request that got it as `instance` (decisions §3), after `detail`."""
    if not response.headers.get("Content-Type", "").startswith(PROBLEM):
        return
    try:
        body = json.loads(response.body)
    except (TypeError, ValueError):
        return
    if isinstance(body, dict):
        ordered = {key: body[key] for key in ("type", "title", "status", "detail") if key in body}
        response.body = json.dumps({**ordered, "instance": instance, **body})
