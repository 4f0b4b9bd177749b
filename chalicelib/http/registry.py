"""The registry of operations: what each route takes and answers, for the OpenAPI document and the renderer.

A route names its models ("domain.product:Product") rather than importing them: most import pydantic, which costs
a cold start about as much as boto3 does, and a GET that renders from stored text never needs them
(tests/api/test_cold_path.py). Route modules likewise import their use case inside each handler.
"""

import importlib
from typing import NamedTuple


class Operation(NamedTuple):  # not a dataclass: its class is built on every cold start, a tenth of the cost
    """What the OpenAPI document says of one route; the same models validate and render it."""

    path: str
    method: str
    role: str | None
    name: str
    summary: str
    body: type | str | None = None
    response: type | str | None = None
    status: int = 200
    query: tuple[str, ...] = ()
    paged: bool | tuple[int, int] = False  # True, or the list's own (default, largest) limit
    replayable: bool = True
    request_content: dict | None = None  # a non-JSON body: media type -> OpenAPI media object

    @property
    def body_model(self) -> type | None:
        return model(self.body)

    @property
    def response_model(self) -> type | None:
        return model(self.response)

    @property
    def response_name(self) -> str | None:
        """The response model's class name, without importing it (renderers look orders up by it)."""
        if isinstance(self.response, str):
            return self.response.partition(":")[2]
        return getattr(self.response, "__name__", None)


def model(reference: type | str | None) -> type | None:
    """A model named "module:Class" under chalicelib is imported on first use (import_module takes the import lock,
    so concurrent first requests are safe)."""
    if not isinstance(reference, str):
        return reference
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(f"chalicelib.{module}"), name)


# Every declared operation, appended by http/endpoint.py as route modules load; every_operation() loads them all
# first.
OPERATIONS: list[Operation] = []
# How to load every route module: route_table.py hands it in when it is imported, so the OpenAPI document (one of
# the routes) never imports the table that names every route module, and no circle of imports forms.
_load_every_route_module = None


def load_every_route_module_with(loader) -> None:
    global _load_every_route_module
    _load_every_route_module = loader


def every_operation() -> list[Operation]:
    """Every operation, each route module imported first."""
    if _load_every_route_module is None:
        raise RuntimeError("no route table: import chalicelib.http.route_table first (app.py does)")
    _load_every_route_module()
    return OPERATIONS
