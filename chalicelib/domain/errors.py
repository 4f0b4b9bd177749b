"""Failures the service reports to callers. The HTTP layer maps each to a problem+json type and status."""
from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    path: str
    message: str


class ServiceError(Exception):
    type = "internal-error"
    status = 500
    title = "Internal error"

    def __init__(self, detail: str, errors: list[FieldError] | None = None):
        super().__init__(detail)
        self.detail = detail
        self.errors = list(errors or [])


class ValidationFailed(ServiceError):
    type, status, title = "validation-error", 400, "The request is invalid"

    def __init__(self, errors: list[FieldError], detail: str | None = None):
        super().__init__(detail or f"{len(errors)} field(s) are invalid", errors)


class NotFound(ServiceError):
    type, status, title = "not-found", 404, "Not found"


class Conflict(ServiceError):
    type, status, title = "conflict", 400, "Conflict"


class InvalidTransition(ServiceError):
    type, status, title = "invalid-transition", 400, "Invalid state transition"


class PreconditionFailed(ServiceError):
    type, status, title = "precondition-failed", 412, "Precondition failed"


class Unauthorized(ServiceError):
    type, status, title = "unauthorized", 401, "Unauthorized"


class Forbidden(ServiceError):
    type, status, title = "forbidden", 403, "Forbidden"


def invalid(path: str, message: str) -> ValidationFailed:
    return ValidationFailed([FieldError(path, message)])


class Busy(ServiceError):
    """Someone else is changing the same thing right now (a request in progress, a contended delivery)."""

    type, status, title = "conflict", 409, "Conflict"


class UnsupportedMediaType(ServiceError):
    type, status, title = "unsupported-media-type", 415, "Unsupported media type"
