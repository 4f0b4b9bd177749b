"""The registry of operations: what each route takes and answers, for the OpenAPI document and the renderer."""
from typing import NamedTuple

from ..lazy import load


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
    paged: bool = False
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
    """A model named "module:Class" under chalicelib is loaded on first use (chalicelib/lazy.py says why)."""
    if not isinstance(reference, str):
        return reference
    return load(f"chalicelib.{reference}")


# Every declared operation, appended by http/endpoint.py as route modules load; route_table.all_operations()
# loads them all first.
OPERATIONS: list[Operation] = []
