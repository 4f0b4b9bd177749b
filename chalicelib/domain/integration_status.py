"""The integration states of a delivery (decisions §14) as a StrEnum. Pure and free of pydantic: routes read it
on a cold start; the shapes in integration.py derive their `Literal`s (and so the OpenAPI enums) from it."""
from enum import StrEnum


class IntegrationStatus(StrEnum):
    PENDING = "PENDING"
    IMPORTED = "IMPORTED"
    FAILED = "FAILED"


PENDING, IMPORTED, FAILED = IntegrationStatus
STATUSES = tuple(IntegrationStatus)
