"""Failures reported to callers. Each kind names its problem type (problems.py) and status, which
http/responses.py renders as problem+json; the domain and the service raise them, they never build responses."""

from typing import NamedTuple

from .problems import ProblemType


class FieldError(NamedTuple):  # not a dataclass: its class is built on every cold start, a tenth of the cost
    path: str
    message: str


class ServiceError(Exception):
    type = ProblemType.INTERNAL_ERROR
    status = 500
    extensions: dict = {}  # members the problem body adds after `errors` (RFC 9457 extension members)

    def __init__(self, detail: str, errors: list[FieldError] | None = None):
        super().__init__(detail)
        self.detail = detail
        self.errors = list(errors or [])


class ValidationFailed(ServiceError):
    type, status = ProblemType.VALIDATION_ERROR, 400

    def __init__(self, errors: list[FieldError], detail: str | None = None):
        super().__init__(detail or f"{len(errors)} field(s) are invalid", errors)

    def named(self) -> set[str]:
        return {error.path for error in self.errors}

    def joined(self, more: list[FieldError]) -> "ValidationFailed":
        """These problems and those of `more` on fields not named yet (decisions §3: every problem at once)."""
        named = self.named()
        extra = [error for error in more if error.path not in named]
        return ValidationFailed([*self.errors, *extra]) if extra else self


class NotFound(ServiceError):
    type, status = ProblemType.NOT_FOUND, 404


class Conflict(ServiceError):
    type, status = ProblemType.CONFLICT, 400


class InvalidTransition(ServiceError):
    type, status = ProblemType.INVALID_TRANSITION, 400


class ClaimWindowClosed(InvalidTransition):
    """A claim after the account's claim window (decisions §18): the problem adds `closed_at`."""

    def __init__(self, detail: str, closed_at: str):
        super().__init__(detail)
        self.extensions = {"closed_at": closed_at}


class PreconditionFailed(ServiceError):
    type, status = ProblemType.PRECONDITION_FAILED, 412


class Unauthorized(ServiceError):
    type, status = ProblemType.UNAUTHORIZED, 401


class Forbidden(ServiceError):
    type, status = ProblemType.FORBIDDEN, 403


def invalid(path: str, message: str) -> ValidationFailed:
    return ValidationFailed([FieldError(path, message)])


class Busy(ServiceError):
    """Someone else is changing the same thing right now (a request in progress, a contended delivery).
    `retry_after`: whole seconds after which a retry can succeed, when the service knows (else http's default)."""

    type, status = ProblemType.CONFLICT, 409

    def __init__(self, detail: str, retry_after: int | None = None):
        super().__init__(detail)
        self.retry_after = retry_after


class TooManyRequests(ServiceError):
    """A per-account rate is used up; `retry_after` says in how many whole seconds one more is allowed."""

    type, status = ProblemType.TOO_MANY_REQUESTS, 429

    def __init__(self, detail: str, retry_after: int):
        super().__init__(detail)
        self.retry_after = retry_after


class UnsupportedMediaType(ServiceError):
    type, status = ProblemType.UNSUPPORTED_MEDIA_TYPE, 415


class FeedExpired(ServiceError):
    """The change feed no longer keeps the entry after the reader's position: resynchronise in full (§13)."""

    type, status = ProblemType.FEED_EXPIRED, 410
