"""Rendering bodies: JSON for results, RFC 9457 problem+json for every error."""
import json

from chalice import Response

from ..domain.errors import ServiceError
from ..store.table import json_text

JSON = "application/json"
PROBLEM = "application/problem+json"

TITLES = {
    400: "The request is invalid",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    412: "Precondition failed",
    413: "Payload too large",
    415: "Unsupported media type",
    500: "Internal error",
}


def to_json(body) -> str:
    return json_text(body)


def ok(body, status: int = 200, headers: dict | None = None) -> Response:
    return Response(body=to_json(body), status_code=status, headers={"Content-Type": JSON, **(headers or {})})


def no_content() -> Response:
    return Response(body="", status_code=204, headers={})


def problem(status: int, type_: str, detail: str, errors=(), headers: dict | None = None, title: str | None = None):
    body = {
        "type": type_,
        "title": title or TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "errors": [{"path": e.path, "message": e.message} for e in errors],
    }
    return Response(body=json.dumps(body), status_code=status, headers={"Content-Type": PROBLEM, **(headers or {})})


def from_error(error: ServiceError) -> Response:
    headers = {"WWW-Authenticate": 'Bearer realm="supplier-ordering"'} if error.status == 401 else None
    return problem(error.status, error.type, error.detail, error.errors, headers, error.title)


def page(name: str, items: list, cursor: str | None) -> Response:
    """A list page: `{name: [...]}` plus `cursor` only when there is a next page."""
    body = {name: items}
    if cursor:
        body["cursor"] = cursor
    return ok(body)
