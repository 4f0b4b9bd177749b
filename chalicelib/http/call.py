"""One request as the handlers see it: who calls, its body, its query."""

from typing import Any, Mapping

from ..service.authentication import Principal
from . import bodies, params


class Call:
    def __init__(self, request, principal: Principal | None):
        self.request = request
        self.principal = principal  # None on routes without a role
        self.idempotency = None  # a claimed Idempotency-Key; a use case may record its answer in its transaction

    @property
    def account(self) -> str:
        return self.principal.account

    @property
    def customer_id(self) -> str:
        return self.principal.customer_id

    def header(self, name: str) -> str | None:
        return self.request.headers.get(name)

    def body(self) -> Any:
        return bodies.parse(self.request.raw_body)

    def optional_body(self) -> Any:
        """The body of a POST that may come without one (cancel, receive, withdraw): {} when empty."""
        raw = self.request.raw_body or b""
        return self.body() if raw.strip() else {}

    @property
    def queries(self) -> Mapping[str, str]:
        """The query parameters, to parse with http/params.py."""
        return self.request.query_params or {}

    def page(self, sizes: tuple[int, int] | None = None) -> tuple[int, str | None]:
        """limit and cursor, as decisions §4 fixes them (params.page); `sizes`: a list's own (default, largest)."""
        return params.page(self.queries, *(sizes or ()))
