"""What every route shares, written once: authentication, body parsing, paging parameters, errors.

Handlers are declared with `endpoint(bp, path, method, role)` and receive a `Call` plus the path parameters.
"""
import functools
import importlib
import json
import logging
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable

from chalice import Blueprint, Chalice, Response

from ..domain.errors import FieldError, ServiceError, ValidationFailed, invalid
from . import auth, idempotency
from .responses import PROBLEM, from_error, problem

MAX_BODY_BYTES = 1024 * 1024
# Routes whose bodies may exceed MAX_BODY_BYTES, with their own limit: the catalogue import takes files of up
# to 5 MiB (decisions §12 excepts it from the 1 MiB limit of §3).
BODY_LIMITS = {"/imports/products": 5 * 1024 * 1024}
BODY_METHODS = ("POST", "PUT", "PATCH")
BODY_TYPES = ["application/json", "application/merge-patch+json"]
DEFAULT_LIMIT, MAX_LIMIT = 50, 100
log = logging.getLogger("supplier-ordering")


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


# A \uD800-\uDFFF escape may leave a lone surrogate in a string, which cannot be stored or sent as UTF-8.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _check_encodable(body: Any) -> None:
    """Raise UnicodeEncodeError if any key or string holds a lone surrogate (iterative: bodies may be deep)."""
    pending = [body]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            value.encode("utf-8")
        elif isinstance(value, dict):
            pending.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def whole_number(text: str, low: int, high: int) -> int | None:
    """A query value as a whole number in [low, high], or None. ASCII digits only: "²".isdigit() is True."""
    if not re.fullmatch(r"[0-9]{1,9}", text):
        return None
    number = int(text)
    return number if low <= number <= high else None


class Call:
    """One request as the handlers see it: who calls, its body, its query."""

    def __init__(self, request, principal: dict | None):
        self.request = request
        self.principal = principal or {}
        self.idempotency = None  # a claimed Idempotency-Key; a use case may record its answer in its transaction

    @property
    def account(self) -> str:
        return self.principal["account"]

    @property
    def customer_id(self) -> str:
        return self.principal["customer_id"]

    def header(self, name: str) -> str | None:
        return self.request.headers.get(name)

    def body(self) -> Any:
        raw = self.request.raw_body or b""
        if isinstance(raw, str):
            raw = raw.encode()
        if not raw.strip():
            raise invalid("body", "a JSON body is required")
        try:
            body = json.loads(raw.decode("utf-8"), parse_float=Decimal, parse_constant=_reject_constant)
            if _SURROGATE_ESCAPE.search(raw):
                _check_encodable(body)
            return body
        except RecursionError:
            raise invalid("body", "is nested too deeply") from None
        except ValueError as error:  # includes UnicodeDecodeError and UnicodeEncodeError
            raise invalid("body", f"is not valid JSON: {error}") from None

    def object_body(self) -> dict:
        body = self.body()
        if not isinstance(body, dict):
            raise invalid("body", "must be a JSON object")
        return body

    def query(self, name: str) -> str | None:
        return (self.request.query_params or {}).get(name)

    def page(self) -> tuple[int, str | None]:
        """limit (1-100, default 50) and cursor, as decisions §4 fixes them."""
        errors = []
        raw_limit = self.query("limit")
        limit = DEFAULT_LIMIT
        if raw_limit is not None:
            limit = whole_number(raw_limit, 1, MAX_LIMIT)
            if limit is None:
                errors.append(FieldError("limit", f"must be a whole number from 1 to {MAX_LIMIT}"))
        cursor = self.query("cursor")
        if cursor is not None and not cursor:
            errors.append(FieldError("cursor", "must not be empty"))
        if errors:
            raise ValidationFailed(errors)
        return limit, cursor


@dataclass(frozen=True)
class Operation:
    """What the OpenAPI document says of one route; the same models validate and render it."""

    path: str
    method: str
    role: str | None
    name: str
    summary: str
    body: type | None = None
    response: type | None = None
    status: int = 200
    query: tuple[str, ...] = ()
    paged: bool = False
    replayable: bool = True
    request_content: dict | None = None  # a non-JSON body: media type -> OpenAPI media object

    @property
    def body_model(self) -> type | None:
        return _model(self.body)

    @property
    def response_model(self) -> type | None:
        return _model(self.response)


def _model(reference: type | str | None) -> type | None:
    """Models may be named "module:Class" under chalicelib, so route modules need not import pydantic."""
    if not isinstance(reference, str):
        return reference
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(f"chalicelib.{module}"), name)


OPERATIONS: list[Operation] = []


def endpoint(
    bp: Blueprint,
    path: str,
    method: str,
    role: str | None = auth.SUPPLIER,
    *,
    body: type | None = None,
    response: type | None = None,
    status: int = 200,
    query: tuple[str, ...] = (),
    paged: bool = False,
    replayable: bool = True,
    content_types: list[str] | None = None,
    request_content: dict | None = None,
):
    """Register a handler for one method of a path. role None means no token is needed.

    body/response name the pydantic models of the request and the success body (a class, or "module:Class"
    under chalicelib to keep imports lazy); query names the query parameters; paged adds limit and cursor.
    They feed the OpenAPI document. replayable=False exempts a POST from Idempotency-Key: its answer holds a
    secret that must never be stored (a new token). content_types/request_content: a route that takes
    another body than JSON (it checks the media type itself) and how the document describes that body.
    """
    content_types = content_types or (BODY_TYPES if method in BODY_METHODS else ["*/*"])

    def register(handler: Callable[..., Response]):
        summary = (handler.__doc__ or handler.__name__.replace("_", " ")).strip().splitlines()[0]
        OPERATIONS.append(
            Operation(
                path, method, role, handler.__name__, summary, body, response, status, tuple(query), paged, replayable,
                request_content,
            )
        )

        @functools.wraps(handler)
        def view(**params):
            request = bp.current_request
            try:
                principal = auth.authenticate(request.headers.get("authorization"), role) if role else None
                request.principal = principal  # the request log names the account (logs.py)
                call = Call(request, principal)
                if method == "POST" and principal is not None and replayable:
                    return idempotency.handle(call, lambda: handler(call, **params))
                return handler(call, **params)
            except ServiceError as error:
                return from_error(error)

        bp.route(path, methods=[method], content_types=content_types)(view)
        return handler

    return register


def _chalice_error_to_problem(response: Response, route: str | None) -> Response:
    """Chalice answers some failures itself (405, 415, 500) in its own format; reshape them."""
    status = response.status_code
    if status == 405:
        # A method no view exists for (TRACE, say): Chalice's Allow would list the fallback views too.
        allowed = ALLOWED_METHODS.get(route or "")
        if allowed is None:  # one of the catch-all paths: no such resource
            return _not_found()
        return _method_not_allowed(allowed)()
    if status == 415:
        return problem(415, "unsupported-media-type", "send the body as application/json")
    if status >= 500:
        return problem(500, "internal-error", "an unexpected error occurred; it has been logged")
    if status == 404:
        return problem(404, "not-found", "no such resource")
    return problem(status, "validation-error" if status == 400 else "internal-error", "the request failed")


def problems_middleware(event, get_response):
    raw = event.raw_body
    limit = BODY_LIMITS.get((event.context or {}).get("resourcePath"), MAX_BODY_BYTES)
    if raw is not None and len(raw) > limit:
        return problem(413, "payload-too-large", f"request bodies are limited to {limit} bytes")
    response = get_response(event)
    if response.status_code >= 400 and not response.headers.get("Content-Type", "").startswith(PROBLEM):
        return _chalice_error_to_problem(response, (event.context or {}).get("resourcePath"))
    return response


MAX_CATCH_ALL_DEPTH = 10
ALL_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
ALLOWED_METHODS: dict[str, list[str]] = {}  # route path -> the methods its own views answer


def _not_found():
    return problem(404, "not-found", "no route matches this path")


def _method_not_allowed(allowed: list[str]):
    def view(**_params):
        return problem(405, "method-not-allowed", "this path does not support the method", headers={"Allow": ", ".join(allowed)})

    return view


def install_fallbacks(app: Chalice) -> None:
    """Make unknown paths 404 and unknown methods 405 problems, locally and behind API Gateway alike.

    Called after every blueprint is registered: each known path gets a 405 view for the methods it lacks, and
    catch-all paths /{p1}, /{p1}/{p2}, ... answer 404 (literal routes are matched before variable ones).
    """
    for path, entries in list(app.routes.items()):
        allowed = ALLOWED_METHODS[path] = sorted(entries)
        for method in ALL_METHODS:
            if method not in entries:
                name = f"method_not_allowed_{method}_{path}"
                app.route(path, methods=[method], content_types=["*/*"], name=name)(_method_not_allowed(allowed))
    for depth in range(0, MAX_CATCH_ALL_DEPTH + 1):
        path = "/" + "/".join(f"{{p{i}}}" for i in range(1, depth + 1))
        if path in app.routes:
            continue
        app.route(path, methods=list(ALL_METHODS), content_types=["*/*"], name=f"not_found_{depth}")(
            lambda **_: _not_found()
        )
