"""The OpenAPI examples (chalicelib/http/examples.json) are recorded from tests/api/example_flow.py and valid."""

import json
import os
from decimal import Decimal

import pytest

import app  # noqa: F401  (registers every operation)
from chalicelib.http import openapi
from chalicelib.http.route_table import all_operations
from tests.api.example_flow import masked, record_examples

EXAMPLES_FILE = openapi.EXAMPLES_FILE


def test_the_examples_are_what_the_flow_records(api, monkeypatch):
    recorded = record_examples(api, monkeypatch)
    if os.environ.get("UPDATE_EXAMPLES"):
        EXAMPLES_FILE.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n")
    committed = json.loads(EXAMPLES_FILE.read_text())
    assert masked(recorded) == masked(committed), (
        "the API answers differently from chalicelib/http/examples.json; if that is intended, run "
        "UPDATE_EXAMPLES=1 .venv/bin/python -m pytest tests/api/test_examples.py"
    )


def test_every_operation_has_an_example_request_and_response():
    problems = openapi.missing_documentation(all_operations())
    assert problems == [], "\n".join(problems)


def _numbers(value):
    return json.loads(json.dumps(value), parse_float=Decimal)


@pytest.mark.parametrize(
    "operation", [op for op in all_operations() if op.name in openapi.examples()], ids=lambda op: op.name
)
def test_examples_match_the_models(operation):
    example = openapi.examples()[operation.name]
    if "request" in example:
        operation.body_model.model_validate(_numbers(example["request"]))
    if operation.response_model is not None and operation.response_name != "dict":
        operation.response_model.model_validate(_numbers(example["response"]))
