"""The OpenAPI 3.1 document, generated from the route registry and the pydantic models the routes use.

Every route is declared once with `endpoint(...)`; the same body and response models that validate and render it
are turned into JSON schemas here, so the document cannot drift from the code. What the models cannot say lives
in http/openapi_text.py (tags, parameter descriptions) and http/examples.json (recorded by
tests/api/example_flow.py). `missing_documentation` names what a route lacks; a test keeps it empty. The document
is built on first request and cached for the life of the process, so cold starts do not pay for it.
"""

import copy
import functools
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..domain.delivery import Delivery
from ..domain.deposit_types import DEPOSIT_ID_LENGTH
from ..domain.event_policy import RETRY_WINDOW, SEND_TIMEOUT
from ..domain.idempotency import REPLAY_WINDOW
from ..domain.identifiers import DELIVERY_ID_DIGITS, ID_MAX_LENGTH, ID_PATTERN
from ..domain.limits import CLAIMS
from ..domain.product import Product
from ..domain.timestamps import in_words
from . import bodies, params
from .openapi_problems import REQUEST_ID_HEADER, Problem, problem_responses
from .openapi_schemas import REF_PREFIX, schemas
from .openapi_text import (
    CONTENDED,
    DESCRIPTION,
    EXAMPLE_EXEMPT,
    EXTRA_PROBLEMS,
    OPERATION_NOTES,
    OPERATION_QUERY_PARAMETERS,
    PATH_PARAMETERS,
    QUERY_PARAMETERS,
    RESPONSE_CONTENT,
    SERVERS,
    TAGS,
    WEBHOOK_EVENTS,
    WEBHOOK_HEADERS,
    tag_of,
)
from .registry import Operation, every_operation
from .responses import JSON

API_VERSION = "1.1.0"
PATH_PARAMETER = re.compile(r"{(\w+)}")
WRITE_METHODS = ("PUT", "PATCH", "DELETE")
EXAMPLES_FILE = Path(__file__).with_name("examples.json")

# Reads of these resources carry an ETag; PUT/PATCH/DELETE on the path that reads them accept If-Match.
VERSIONED_MODELS: tuple[type, ...] = (Product,)
# Deliveries (decisions §16): their single reads carry an ETag; these changes take If-Match.
ETAG_OPERATIONS = frozenset({"get_delivery", "get_own_delivery"})
IF_MATCH_OPERATIONS = frozenset(
    {"respond_to_delivery", "amend_delivery", "cancel_delivery", "receive_delivery", "give_delivery_note"}
    | {"open_claim", "withdraw_claim", "answer_claim"}
)


class WebhookEvent(BaseModel):
    """The body of every webhook message (decisions §10)."""

    type: Literal[tuple(WEBHOOK_EVENTS)]  # type: ignore[valid-type]
    idempotency_key: str = Field(description="The same on every attempt and resend of one event.")
    data: Delivery


SECURITY_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer", "description": "`Authorization: Bearer <secret>`."},
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
        "schema": {"type": "integer", "minimum": 1, "maximum": params.MAX_LIMIT, "default": params.DEFAULT_LIMIT},
    },
    {
        "name": "cursor",
        "in": "query",
        "required": False,
        "description": "The `cursor` of the previous page; absent on the last page.",
        "schema": {"type": "string", "minLength": 1},
    },
]


def _paging(paged: bool | tuple[int, int]) -> list[dict]:
    """The paging parameters, with a list's own default and largest `limit` when it has them."""
    if paged is True:
        return PAGING_PARAMETERS
    default, most = paged
    limit = {**PAGING_PARAMETERS[0], "schema": {**PAGING_PARAMETERS[0]["schema"], "maximum": most, "default": default}}
    return [limit, *PAGING_PARAMETERS[1:]]


# Path parameters typed as the ids they name, so a generated client passes back what the API answered (a
# delivery's id is a number). A value outside these still reaches the route, which answers 404 as before.
ID_SCHEMA = {"type": "string", "minLength": 1, "maxLength": ID_MAX_LENGTH, "pattern": ID_PATTERN}
PATH_PARAMETER_SCHEMAS = {
    "product_id": ID_SCHEMA,
    "category_id": ID_SCHEMA,
    "customer_id": ID_SCHEMA,
    "import_id": ID_SCHEMA,
    "deposit_id": {**ID_SCHEMA, "maxLength": DEPOSIT_ID_LENGTH},
    "delivery_id": {"type": "integer", "minimum": 1, "maximum": 10**DELIVERY_ID_DIGITS - 1},
    "token_id": {"type": "string", "minLength": 1, "maxLength": ID_MAX_LENGTH},
    "event_id": {"type": "string", "minLength": 1},
    "asset": {"type": "string", "minLength": 1},
    "standing_id": ID_SCHEMA,
    "date": {"type": "string", "format": "date"},
    "number": {"type": "integer", "minimum": 1, "maximum": CLAIMS},
}
ANY_STRING = {"schema": {"type": "string"}}

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
    "description": f"The same key with the same request within {in_words(REPLAY_WINDOW)} returns the first response "
    "without doing the work again; with another request it is a 400 conflict. The request is its method, path, "
    "query parameters (as a set of name/value pairs), `Content-Type` (media type and charset, in any case) and body "
    "(byte for byte): a dry-run import and a real one are different requests. A 409 or 5xx is not kept, so a retry "
    "gets the real outcome.",
    "schema": {"type": "string", "minLength": 1},
}


@functools.cache
def examples() -> dict[str, dict]:
    """Recorded request and response bodies by operationId (tests/api/example_flow.py)."""
    return json.loads(EXAMPLES_FILE.read_text())


def _is_json_response(operation: Operation) -> bool:
    return operation.response_model is not None and operation.status != 204


def missing_documentation(operations: list[Operation]) -> list[str]:
    """What each operation lacks for the document: a tag, parameter descriptions, examples. One line each."""
    found = []
    recorded = examples()
    for op in operations:
        where = f"{op.method} {op.path} ({op.name})"
        if tag_of(op.path) is None:
            found.append(f"{where}: no tag; add its path prefix to TAG_OF_PATH in chalicelib/http/openapi_text.py")
        for name in PATH_PARAMETER.findall(op.path):
            if name not in PATH_PARAMETERS:
                found.append(f"{where}: path parameter {name} has no description in PATH_PARAMETERS (openapi_text.py)")
            if name not in PATH_PARAMETER_SCHEMAS:
                found.append(f"{where}: path parameter {name} has no type in PATH_PARAMETER_SCHEMAS (openapi.py)")
        for name in op.query:
            if name not in QUERY_PARAMETERS and name not in OPERATION_QUERY_PARAMETERS.get(op.name, {}):
                found.append(f"{where}: query parameter {name} has no entry in QUERY_PARAMETERS (openapi_text.py)")
        if op.response is None and op.status != 204 and op.name not in RESPONSE_CONTENT:
            found.append(f"{where}: no response model; describe its content in RESPONSE_CONTENT (openapi_text.py)")
        if op.name in EXAMPLE_EXEMPT:
            continue
        example = recorded.get(op.name, {})
        fix = "call it in tests/api/example_flow.py and run UPDATE_EXAMPLES=1 pytest tests/api/test_examples.py"
        if op.body is not None and "request" not in example:
            found.append(f"{where}: no example request; {fix}")
        if op.status != 204 and "response" not in example:
            found.append(f"{where}: no example response; {fix}")
    return found


def _schemas(operations: list[Operation]) -> tuple[dict, dict, dict]:
    """The schemas of every body and JSON response, the problem and the webhook event (openapi_schemas.py)."""
    wanted: dict[tuple[Any, str], None] = {}
    for op in operations:
        if op.body_model is not None:
            wanted[(op.body_model, "validation")] = None
        if _is_json_response(op):
            wanted[(op.response_model, "serialization")] = None
    wanted[(Problem, "serialization")] = None
    wanted[(WebhookEvent, "serialization")] = None
    return schemas(list(wanted))


def _versioned_paths(operations: list[Operation]) -> set[str]:
    return {op.path for op in operations if op.method == "GET" and op.response_model in VERSIONED_MODELS}


def _parameters(operation: Operation, versioned: set[str]) -> list[dict]:
    found = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "description": PATH_PARAMETERS.get(name, ""),
            "schema": dict(PATH_PARAMETER_SCHEMAS.get(name, {"type": "string"})),
        }
        for name in PATH_PARAMETER.findall(operation.path)
    ]
    if operation.paged:
        found += _paging(operation.paged)
    paging = {p["name"] for p in PAGING_PARAMETERS} if operation.paged else set()
    own = OPERATION_QUERY_PARAMETERS.get(operation.name, {})
    found += [
        {"name": name, "in": "query", "required": False, **own.get(name, QUERY_PARAMETERS.get(name, ANY_STRING))}
        for name in operation.query
        if name not in paging
    ]
    if (operation.method in WRITE_METHODS and operation.path in versioned) or operation.name in IF_MATCH_OPERATIONS:
        found.append(IF_MATCH)
    if operation.method == "POST" and operation.replayable:
        found.append(IDEMPOTENCY_KEY)
    return found


def _success(operation: Operation, responses: dict, example: dict) -> dict:
    headers: dict = {"X-Request-Id": REQUEST_ID_HEADER}
    if operation.status == 204:
        return {"description": "Done; no body.", "headers": headers}
    response: dict = {"description": "Success.", "headers": headers}
    if _is_json_response(operation):
        content = {"schema": responses[operation.response_model]}
        if "response" in example:
            content["example"] = example["response"]
        response["content"] = {JSON: content}
    else:
        described = RESPONSE_CONTENT.get(operation.name, {})
        response["description"] = described.get("description", "Success.")
        response["content"] = copy.deepcopy(described.get("content", {}))
        for media in response["content"].values():
            if "response" in example:
                media["example"] = example["response"]
    if operation.response_model in VERSIONED_MODELS or operation.name in ETAG_OPERATIONS:
        headers["ETag"] = ETAG_HEADER
    return response


def _problem_statuses(operation: Operation, versioned: set[str]) -> list[int]:
    statuses = [400]
    if operation.role is not None:
        statuses += [401, 403]
    statuses += [404, 405]
    if (
        operation.method == "POST" and operation.replayable and operation.role is not None
    ) or operation.name in CONTENDED:
        statuses.append(409)
    if (operation.method in WRITE_METHODS and operation.path in versioned) or operation.name in IF_MATCH_OPERATIONS:
        statuses.append(412)
    if operation.method in bodies.BODY_METHODS:
        statuses += [413, 415]
    statuses += list(EXTRA_PROBLEMS.get(operation.name, ()))
    return sorted(statuses) + [500]


def _description(operation: Operation) -> str:
    parts = [f"Needs a {operation.role} token." if operation.role else "Needs no token."]
    for extra in (
        RESPONSE_CONTENT.get(operation.name, {}).get("operation_description"),
        OPERATION_NOTES.get(operation.name),
    ):
        if extra:
            parts.append(extra)
    return " ".join(parts)


def _operation(operation: Operation, bodies_: dict, responses: dict, versioned: set[str], operation_id: str) -> dict:
    example = examples().get(operation.name, {})
    result = {str(operation.status): _success(operation, responses, example)}
    for status in _problem_statuses(operation, versioned):
        result[str(status)] = {"$ref": f"#/components/responses/Problem{status}"}
    document: dict = {
        "operationId": operation_id,
        "summary": operation.summary,
        "description": _description(operation),
        "tags": [tag_of(operation.path) or "Service"],
        "parameters": _parameters(operation, versioned),
        "responses": result,
        "security": [] if operation.role is None else [{"bearer": []}, {"token": []}],
    }
    if operation.body_model is not None:
        media: dict = {"schema": bodies_[operation.body_model]}
        if "request" in example:
            media["example"] = example["request"]
        document["requestBody"] = {"required": True, "content": {_body_type(operation.method): media}}
    elif operation.request_content is not None:
        document["requestBody"] = {"required": True, "content": operation.request_content}
    return document


def _body_type(method: str) -> str:
    """One media type per body: generators trip on several (application/json is accepted on PATCH too)."""
    return bodies.MERGE_PATCH if method == "PATCH" else bodies.JSON_BODY


def _webhooks() -> dict:
    delivery = examples().get("get_delivery", {}).get("response")
    if delivery is not None:  # webhook events never carry the integration state (decisions §14)
        delivery = {name: value for name, value in delivery.items() if name != "integration"}
    found = {}
    for event, (summary, description) in WEBHOOK_EVENTS.items():
        body: dict = {"schema": {"$ref": REF_PREFIX + "WebhookEvent"}}
        if delivery is not None:
            body["example"] = {"type": event, "idempotency_key": "evt_2q8NfK3mXb", "data": delivery}
        found[event] = {
            "post": {
                "operationId": f"{event.replace('-', '_')}_event",
                "summary": summary,
                "description": description + " Sent with the method configured in /account/settings/webhooks "
                "(POST unless set otherwise), signed per Standard Webhooks.",
                "tags": ["Webhooks"],
                "security": [],
                "parameters": WEBHOOK_HEADERS,
                "requestBody": {"required": True, "content": {JSON: body}},
                "responses": {
                    "200": {"description": "Received. 201 counts as received too."},
                    "400": {
                        "description": f"Any other status, or no answer within {in_words(SEND_TIMEOUT)}, is "
                        f"retried with exponential backoff for at least {in_words(RETRY_WINDOW)}."
                    },
                },
            }
        }
    return found


def _operation_ids(operations: list[Operation]) -> list[str]:
    """Handler names, made unique if two blueprints chose the same one."""
    seen: dict[str, int] = {}
    ids = []
    for operation in operations:
        count = seen.get(operation.name, 0)
        seen[operation.name] = count + 1
        ids.append(operation.name if count == 0 else f"{operation.name}_{count + 1}")
    return ids


def build(operations: list[Operation]) -> dict:
    bodies_, responses, definitions = _schemas(operations)
    versioned = _versioned_paths(operations)
    paths: dict[str, dict] = {}
    for operation, operation_id in zip(operations, _operation_ids(operations)):
        item = paths.setdefault(operation.path, {})
        item[operation.method.lower()] = _operation(operation, bodies_, responses, versioned, operation_id)
    used_tags = {tag_of(op.path) or "Service" for op in operations} | {"Webhooks"}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Supplier Ordering Service",
            "version": API_VERSION,
            "description": DESCRIPTION,
            "contact": {"name": "Supplier Ordering Service team"},
            "license": {"name": "Proprietary", "identifier": "LicenseRef-Proprietary"},
        },
        "servers": SERVERS,
        "tags": [{"name": name, "description": text} for name, text in TAGS.items() if name in used_tags],
        "paths": dict(sorted(paths.items())),
        "webhooks": _webhooks(),
        "components": {
            "schemas": dict(sorted(definitions.items())),
            "responses": problem_responses(),
            "securitySchemes": SECURITY_SCHEMES,
        },
    }


@functools.cache
def document_json() -> str:
    """The document of every registered route, serialised once per process."""
    return json.dumps(build(list(every_operation())), separators=(",", ":"))


def document() -> dict:
    return json.loads(document_json())
