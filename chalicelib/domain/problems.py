"""The problem types every error is reported as (decisions §3), each with its title. One list, used by the
errors the services raise, by the HTTP layer that renders them and by the OpenAPI document."""

from enum import StrEnum


class ProblemType(StrEnum):
    VALIDATION_ERROR = "validation-error"
    INVALID_TRANSITION = "invalid-transition"
    NOT_FOUND = "not-found"
    METHOD_NOT_ALLOWED = "method-not-allowed"
    UNSUPPORTED_MEDIA_TYPE = "unsupported-media-type"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    CONFLICT = "conflict"
    PRECONDITION_FAILED = "precondition-failed"
    PAYLOAD_TOO_LARGE = "payload-too-large"
    FEED_EXPIRED = "feed-expired"
    TOO_MANY_REQUESTS = "too-many-requests"
    INTERNAL_ERROR = "internal-error"

    @property
    def title(self) -> str:
        return TITLES[self]


TITLES = {
    ProblemType.VALIDATION_ERROR: "The request is invalid",
    ProblemType.INVALID_TRANSITION: "Invalid state transition",
    ProblemType.NOT_FOUND: "Not found",
    ProblemType.METHOD_NOT_ALLOWED: "Method not allowed",
    ProblemType.UNSUPPORTED_MEDIA_TYPE: "Unsupported media type",
    ProblemType.UNAUTHORIZED: "Unauthorized",
    ProblemType.FORBIDDEN: "Forbidden",
    ProblemType.CONFLICT: "Conflict",
    ProblemType.PRECONDITION_FAILED: "Precondition failed",
    ProblemType.PAYLOAD_TOO_LARGE: "Payload too large",
    ProblemType.FEED_EXPIRED: "The change feed no longer holds this position",
    ProblemType.TOO_MANY_REQUESTS: "Too many requests",
    ProblemType.INTERNAL_ERROR: "Internal error",
}
