"""The tests' DynamoDB and SQS in memory without the round trip: while mock_aws is on, moto's own handlers answer the
table's and the feed queue's clients in this process. mock_aws alone signs each request, matches its URL against
every service, builds a werkzeug request, parses it, serialises the answer and has botocore parse it back: that
took more time than moto's engine itself. Here botocore still validates and serialises the request and runs every
hook a test registers (they come first: this one is registered last), and moto's handler and engine decide the
answer, so every outcome is moto's (tests/test_moto_in_process.py compares the two paths call by call).

A DynamoDB item operation's answer is handed over as moto's handler made it (its items are already the wire's
attribute values); any other answer, and every error, goes through moto's serialiser and botocore's parser as
before. botocore's retries are not run: moto throttles nothing. DynamoDB Local's clients are not touched."""

import contextlib
import functools
import importlib
from urllib.parse import urlparse

import botocore.handlers
from botocore import xform_name
from botocore.awsrequest import AWSResponse, HeadersDict
from botocore.parsers import create_parser

HANDLERS = {"dynamodb": "moto.dynamodb.responses:DynamoHandler", "sqs": "moto.sqs.responses:SQSResponse"}
# Their answers are plain attribute values: botocore's parser would give back what moto's serialiser was given.
ITEM_OPERATIONS = frozenset(
    "GetItem PutItem UpdateItem DeleteItem Query Scan BatchGetItem BatchWriteItem TransactGetItems "
    "TransactWriteItems".split()
)


_over_http = [False]


def install() -> None:
    """Answer in process from now on, in every client made after this (botocore's built-in handlers)."""
    if any(entry[1] is _answered for entry in botocore.handlers.BUILTIN_HANDLERS):
        return
    for service in HANDLERS:
        botocore.handlers.BUILTIN_HANDLERS.append(
            (f"before-call.{service}", _answered, botocore.handlers.REGISTER_LAST)
        )


@contextlib.contextmanager
def over_http():
    """mock_aws's own path for a while (tests/test_moto_in_process.py compares the two)."""
    _over_http[0] = True
    try:
        yield
    finally:
        _over_http[0] = False


@functools.cache
def _handler_class(service: str):
    module, name = HANDLERS[service].split(":")
    return getattr(importlib.import_module(module), name)


def _mocked() -> bool:
    from moto.core.models import botocore_stubber

    return botocore_stubber.enabled


def _answered(model, params, request_signer, **_):
    """botocore's `before-call`: (the HTTP response, the parsed answer) from moto's handler, or None to send it."""
    url = params["url"]
    if "amazonaws.com" not in url or _over_http[0] or not _mocked():
        return None
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.core.exceptions import ServiceException
    from moto.core.parse import PROTOCOL_PARSERS
    from moto.core.responses import ActionResult
    from werkzeug.exceptions import HTTPException

    protocol = model.service_model.protocol
    handler = _handler_class(model.service_model.endpoint_prefix)()
    handler.current_account, handler.region, handler.partition = DEFAULT_ACCOUNT_ID, request_signer.region_name, "aws"
    handler.uri, handler.path, handler.method = url, urlparse(url).path or "/", "POST"
    handler.headers, handler.response_headers, handler.querystring, handler.uri_match = params["headers"], {}, {}, {}
    body = params["body"]
    request = {"method": "POST", "values": {}, "headers": params["headers"], "url_path": "/", "url_params": {}}
    request["body"] = body.decode() if isinstance(body, bytes) else body
    handler.params = handler.body = PROTOCOL_PARSERS[protocol](model, map_type=dict).parse(request)
    try:
        result = getattr(handler, xform_name(model.name))()
        if model.name in ITEM_OPERATIONS and model.service_model.endpoint_prefix == "dynamodb":
            members = model.output_shape.members  # what the serialiser keeps (moto adds a few of its own)
            answer = {name: value for name, value in result.result.items() if name in members}
            return AWSResponse(url, 200, {}, None), {**answer, "ResponseMetadata": {"HTTPStatusCode": 200}}
        status, headers, text = handler.serialized(result)
    except ServiceException as error:
        status, headers, text = handler.serialized(ActionResult(error))
    except HTTPException as error:  # moto's older DynamoDB errors
        status, headers, text = error.code, dict(error.get_headers() or []), error.description
    response = {
        "status_code": status,
        "headers": HeadersDict(headers),
        "body": text.encode() if isinstance(text, str) else text,
    }
    parser = create_parser(protocol)
    parsed = parser.parse(response, model.output_shape)
    error_shape = (
        model.service_model.shape_for_error_code(parsed.get("Error", {}).get("Code")) if status >= 300 else None
    )
    if error_shape is not None:  # the error's own fields (CancellationReasons, Item), as botocore's endpoint adds them
        parsed.update(parser.parse(response, error_shape))
    return AWSResponse(url, status, response["headers"], None), parsed
