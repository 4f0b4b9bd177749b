"""The OpenAPI 3.1 document, generated from the route registry and the pydantic models the routes use.

Every route is declared once with `api.endpoint(...)`; the same body and response models that validate and
render it are turned into JSON schemas here, so the document cannot drift from the code. It is built on first
request and cached for the life of the process, so cold starts do not pay for it.
"""
import functools
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

from ..domain.product import Product
from . import api
from .responses import JSON, PROBLEM

API_VERSION = "1.0.0"
REF_TEMPLATE = "#/components/schemas/{model}"
PATH_PARAMETER = re.compile(r"{(\w+)}")
WRITE_METHODS = ("PUT", "PATCH", "DELETE")

# Reads of these resources carry an ETag; PUT/PATCH/DELETE on the path that reads them accept If-Match.
VERSIONED_MODELS: tuple[type, ...] = (Product,)


class FieldProblem(BaseModel):
    path: str
    message: str


class Problem(BaseModel):
    """RFC 9457 problem details: the body of every error (decisions §3)."""

    type: Literal[
        "validation-error",
        "invalid-transition",
        "not-found",
        "method-not-allowed",
        "unsupported-media-type",
        "unauthorized",
        "forbidden",
        "conflict",
        "precondition-failed",
        "payload-too-large",
        "internal-error",
    ]
    title: str
    status: int
    detail: str
    errors: list[FieldProblem]


PROBLEMS = {
    400: "The request is invalid (`validation-error`, with one entry in `errors` per wrong field), conflicts with "
    "stored data (`conflict`) or asks for a forbidden state change (`invalid-transition`).",
    401: "The Authorization header is missing or malformed, or the token is unknown or revoked.",
    403: "The token's role may not use this endpoint.",
    404: "No such resource in this account (or no such path).",
    405: "The path does not support this method; the Allow header lists those it does.",
    412: "If-Match names a version of the resource that is no longer current.",
    413: f"The request body is larger than {api.MAX_BODY_BYTES} bytes.",
    415: "The body is not sent as application/json or application/merge-patch+json.",
    500: "An unexpected error; it has been logged.",
}

SECURITY_SCHEMES = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "`Authorization: Bearer <secret>`.",
    },
    "token": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "`Authorization: token <secret>`, the form existing integrators use.",
    },
}

PAGING_PARAMETERS = [
    {
        "name": "limit",
        "in": "query",
        "required": False,
        "description": "Page size.",
        "schema": {"type": "integer", "minimum": 1, "maximum": api.MAX_LIMIT, "default": api.DEFAULT_LIMIT},
    },
    {
        "name": "cursor",
        "in": "query",
        "required": False,
        "description": "The `cursor` of the previous page; absent on the last page.",
        "schema": {"type": "string", "minLength": 1},
    },
]

ETAG_HEADER = {"description": "Version of the resource, for If-Match.", "schema": {"type": "string"}}
IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": "Write only if the resource still has this ETag (`*` for any version); 412 otherwise.",
    "schema": {"type": "string"},
}
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "The same key with the same body within 24 hours returns the first response without "
    "doing the work again; with another body it is a 400 conflict.",
    "schema": {"type": "string", "minLength": 1},
}

DESCRIPTION = """Supplier Ordering Service.

Authenticate with `Authorization: token <secret>` or `Authorization: Bearer <secret>`. Supplier tokens use
every endpoint except `/customer/...`, which need a customer token. Errors are `application/problem+json`.
Lists are paged with `limit` and an opaque `cursor`."""


def _schemas(operations: list[api.Operation]) -> tuple[dict, dict]:
    """JSON schemas of every body (as validated) and response (as rendered); shared models land in components."""
    wanted: dict[tuple[Any, str], None] = {}
    for operation in operations:
        if operation.body_model is not None:
            wanted[(operation.body_model, "validation")] = None
        if operation.response_model is not None:
            wanted[(operation.response_model, "serialization")] = None
    wanted[(Problem, "serialization")] = None
    inputs = [(key, key[1], TypeAdapter(key[0]).core_schema) for key in wanted]
    by_key, definitions = GenerateJsonSchema(ref_template=REF_TEMPLATE).generate_definitions(inputs)
    return {key: schema for (key, _mode), schema in by_key.items()}, definitions


def _versioned_paths(operations: list[api.Operation]) -> set[str]:
    return {op.path for op in operations if op.method == "GET" and op.response_model in VERSIONED_MODELS}


def _parameters(operation: api.Operation, versioned: set[str]) -> list[dict]:
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in PATH_PARAMETER.findall(operation.path)
    ]
    if operation.paged:
        parameters += PAGING_PARAMETERS
    paging = {p["name"] for p in PAGING_PARAMETERS} if operation.paged else set()
    parameters += [
        {"name": name, "in": "query", "required": False, "schema": {"type": "string"}}
        for name in operation.query
        if name not in paging
    ]
    if operation.method in WRITE_METHODS and operation.path in versioned:
        parameters.append(IF_MATCH)
    if operation.method == "POST" and operation.replayable:
        parameters.append(IDEMPOTENCY_KEY)
    return parameters


def _success(operation: api.Operation, schemas: dict) -> dict:
    if operation.status == 204:
        return {"description": "Done; no body."}
    response: dict = {"description": "Success."}
    if operation.response_model is not None:
        response["content"] = {JSON: {"schema": schemas[(operation.response_model, "serialization")]}}
    else:
        # A route without a response model (a file, for instance): its body is not described.
        response["content"] = {"*/*": {}}
    if operation.response_model in VERSIONED_MODELS:
        response["headers"] = {"ETag": ETAG_HEADER}
    return response


def _problem_statuses(operation: api.Operation, versioned: set[str]) -> list[int]:
    statuses = [400]
    if operation.role is not None:
        statuses += [401, 403]
    statuses += [404, 405]
    if operation.method in WRITE_METHODS and operation.path in versioned:
        statuses.append(412)
    if operation.method in api.BODY_METHODS:
        statuses += [413, 415]
    return statuses + [500]


def _operation(operation: api.Operation, schemas: dict, versioned: set[str], operation_id: str) -> dict:
    responses = {str(operation.status): _success(operation, schemas)}
    for status in _problem_statuses(operation, versioned):
        responses[str(status)] = {"$ref": f"#/components/responses/Problem{status}"}
    document: dict = {
        "operationId": operation_id,
        "summary": operation.summary,
        "tags": [operation.path.strip("/").split("/")[0] or "service"],
        "parameters": _parameters(operation, versioned),
        "responses": responses,
        "security": [] if operation.role is None else [{"bearer": []}, {"token": []}],
    }
    if operation.role is not None:
        document["description"] = f"Needs a {operation.role} token."
    if operation.body_model is not None:
        schema = schemas[(operation.body_model, "validation")]
        document["requestBody"] = {"required": True, "content": {kind: {"schema": schema} for kind in api.BODY_TYPES}}
    elif operation.request_content is not None:
        document["requestBody"] = {"required": True, "content": operation.request_content}
    return document


def _problem_responses(problem_schema: dict) -> dict:
    responses = {}
    for status, description in PROBLEMS.items():
        response: dict = {"description": description, "content": {PROBLEM: {"schema": problem_schema}}}
        if status == 405:
            response["headers"] = {"Allow": {"description": "The methods of this path.", "schema": {"type": "string"}}}
        if status == 401:
            response["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
        responses[f"Problem{status}"] = response
    return responses


def _operation_ids(operations: list[api.Operation]) -> list[str]:
    """Handler names, made unique if two blueprints chose the same one."""
    seen: dict[str, int] = {}
    ids = []
    for operation in operations:
        count = seen.get(operation.name, 0)
        seen[operation.name] = count + 1
        ids.append(operation.name if count == 0 else f"{operation.name}_{count + 1}")
    return ids


def build(operations: list[api.Operation]) -> dict:
    schemas, definitions = _schemas(operations)
    versioned = _versioned_paths(operations)
    paths: dict[str, dict] = {}
    for operation, operation_id in zip(operations, _operation_ids(operations)):
        item = paths.setdefault(operation.path, {})
        item[operation.method.lower()] = _operation(operation, schemas, versioned, operation_id)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Supplier Ordering Service", "version": API_VERSION, "description": DESCRIPTION},
        "paths": dict(sorted(paths.items())),
        "components": {
            "schemas": dict(sorted(definitions.items())),
            "responses": _problem_responses(schemas[(Problem, "serialization")]),
            "securitySchemes": SECURITY_SCHEMES,
        },
    }


@functools.cache
def document_json() -> str:
    """The document of every registered route, serialised once per process."""
    return json.dumps(build(list(api.OPERATIONS)), separators=(",", ":"))


def document() -> dict:
    return json.loads(document_json())
