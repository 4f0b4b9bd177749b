"""The endpoint wrapper: `endpoint(bp, path, method, role)` authenticates, builds the `Call`, turns service
errors into problems and renders the result in its response's field order."""

import functools
from typing import Callable

from chalice import Blueprint, Response

from ..domain.errors import ServiceError
from ..domain.field_order import BY_MODEL
from . import auth, bodies
from .call import Call
from .registry import OPERATIONS, Operation
from .responses import from_error, render

# (path, method) -> the view that answers it; app.py reaches it through http/route_table.py.
VIEWS: dict[tuple[str, str], Callable[..., Response]] = {}
# (path, method, module, view name, content types) of every endpoint declared: what route_table.py writes down.
DECLARED: set[tuple] = set()
_app = []  # the Chalice app whose current request the views read (route_table.register binds it)


def bind(app) -> None:
    _app[:] = [app]


def endpoint(
    bp: Blueprint,
    path: str,
    method: str,
    role: str | None = auth.SUPPLIER,
    *,
    body: type | str | None = None,
    response: type | str | None = None,
    status: int = 200,
    query: tuple[str, ...] = (),
    paged: bool | tuple[int, int] = False,
    replayable: bool = True,
    content_types: list[str] | None = None,
    request_content: dict | None = None,
    reads: Callable | None = None,
):
    """Declare the handler of one method of a path. role None means no token is needed. The app registers it
    from http/route_table.py, which lists every declared route (`bp` names the route module's blueprint).

    body/response name the pydantic models of the request and the success body (a class, or "module:Class"
    under chalicelib, loaded on first use: http/registry.py); query names the query parameters; paged adds limit and
    cursor (a (default, largest) pair: a list whose limit is not §4's usual).
    They feed the OpenAPI document (http/openapi.py; its recorded examples are http/examples.json, the words the
    models cannot give http/openapi_text.py).
    replayable=False exempts a POST from Idempotency-Key: its answer holds a secret that must never be stored.
    content_types/request_content: a route that takes another body than JSON (it checks the media type itself)
    and how the document describes that body; reads(call) what Idempotency-Key compares of such a body
    (http/idempotency.handle).
    """

    def register(handler: Callable[..., Response]):
        summary = (handler.__doc__ or handler.__name__.replace("_", " ")).strip().splitlines()[0]
        operation = Operation(
            path,
            method,
            role,
            handler.__name__,
            summary,
            body,
            response,
            status,
            tuple(query),
            paged,
            replayable,
            request_content,
        )
        OPERATIONS.append(operation)
        order = BY_MODEL.get(operation.response_name or "")

        def work(call: Call, params: dict) -> Response:
            return render(handler(call, **params), order)

        @functools.wraps(handler)
        def view(**params):
            request = _app[0].current_request
            try:
                principal = auth.authenticate(request.headers.get("authorization"), role) if role else None
                request.principal = principal  # the request log names the account (logs.py)
                call = Call(request, principal)
                if method == "POST" and principal is not None and replayable:
                    from . import idempotency  # POSTs only: a cold GET does not load it

                    return idempotency.handle(call, lambda: work(call, params), reads, order, status)
                return work(call, params)
            except ServiceError as error:
                return from_error(error)

        VIEWS[(path, method)] = view
        DECLARED.add(
            (path, method, handler.__module__, handler.__name__, tuple(content_types or bodies.content_types(method)))
        )
        return handler

    return register
