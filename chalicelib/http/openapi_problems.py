"""The problems of the OpenAPI document (http/openapi.py): the Problem body (RFC 9457, decisions §3) and one
shared response per status, with its headers and an example."""

from pydantic import BaseModel, Field

from ..domain.problems import ProblemType
from . import bodies
from .openapi_schemas import REF_PREFIX
from .responses import PROBLEM


class FieldProblem(BaseModel):
    path: str
    message: str


class Problem(BaseModel):
    """RFC 9457 problem details: the body of every error (decisions §3)."""

    type: str = Field(
        description="What went wrong. Known values: "
        + ", ".join(f"`{t}`" for t in ProblemType)
        + ". New values may be added: treat an unknown one by its `status`.",
        examples=[str(t) for t in ProblemType],
    )
    title: str
    status: int
    detail: str
    instance: str | None = Field(None, description="The request's X-Request-Id, to quote to support.")
    errors: list[FieldProblem]


PROBLEMS = {
    400: "The request is invalid (`validation-error`, with one entry in `errors` per wrong field), conflicts with "
    "stored data (`conflict`) or asks for a forbidden state change (`invalid-transition`).",
    401: "The Authorization header is missing or malformed, or the token is unknown or revoked.",
    403: "The token's role may not use this endpoint.",
    404: "No such resource in this account (or no such path).",
    405: "The path does not support this method; the Allow header lists those it does.",
    409: "Another request is changing the same thing (the same Idempotency-Key in progress, or a delivery under "
    "heavy contention); retry after the Retry-After seconds. For an integration state: the customer changed the "
    "delivery while it was being written, so read the delivery again before you acknowledge it.",
    412: "If-Match names a version of the resource that is no longer current.",
    410: "The change feed no longer keeps the entry after `after` (`feed-expired`): resynchronise in full "
    "(after=latest, then the lists, then follow the feed).",
    413: f"The request body is larger than {bodies.MAX_BODY_BYTES} bytes.",
    415: "The body is not sent as application/json (or application/merge-patch+json on PATCH).",
    429: "The account made too many of these requests in the last minute (`too-many-requests`); retry after the "
    "Retry-After seconds.",
    500: "An unexpected error; it has been logged.",
}
EXAMPLE_TYPES = {
    400: ProblemType.VALIDATION_ERROR,
    401: ProblemType.UNAUTHORIZED,
    403: ProblemType.FORBIDDEN,
    404: ProblemType.NOT_FOUND,
    405: ProblemType.METHOD_NOT_ALLOWED,
    409: ProblemType.CONFLICT,
    412: ProblemType.PRECONDITION_FAILED,
    410: ProblemType.FEED_EXPIRED,
    413: ProblemType.PAYLOAD_TOO_LARGE,
    415: ProblemType.UNSUPPORTED_MEDIA_TYPE,
    429: ProblemType.TOO_MANY_REQUESTS,
    500: ProblemType.INTERNAL_ERROR,
}
REQUEST_ID_HEADER = {
    "description": "The id of this request; problem bodies repeat it as `instance`.",
    "schema": {"type": "string"},
}


def problem_responses() -> dict:
    found = {}
    for status, description in PROBLEMS.items():
        headers: dict = {"X-Request-Id": REQUEST_ID_HEADER}
        if status == 405:
            headers["Allow"] = {"description": "The methods of this path.", "schema": {"type": "string"}}
        if status == 401:
            headers["WWW-Authenticate"] = {
                "description": "The scheme to authenticate with.",
                "schema": {"type": "string"},
            }
        if status in (409, 429):
            headers["Retry-After"] = {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}
        type_ = EXAMPLE_TYPES[status]
        example = {
            "type": str(type_),
            "title": type_.title,
            "status": status,
            "detail": description,
            "instance": "4f3c2a1e9b8d4c7f8e6a5b4c3d2e1f00",
            "errors": [],
        }
        if status == 400:
            example["errors"] = [{"path": "bundles[1].size", "message": "must be greater than 0"}]
            example["detail"] = "1 field(s) are invalid"
        found[f"Problem{status}"] = {
            "description": description,
            "headers": headers,
            "content": {PROBLEM: {"schema": {"$ref": REF_PREFIX + "Problem"}, "example": example}},
        }
    return found
