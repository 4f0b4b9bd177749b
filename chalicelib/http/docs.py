"""The API's own description: GET /openapi.json, readable without a token."""
from typing import Any

from chalice import Blueprint, Response

from .api import Call, endpoint
from .responses import JSON

bp = Blueprint(__name__)


@endpoint(bp, "/openapi.json", "GET", role=None, response=dict[str, Any])
def get_openapi_document(_call: Call):
    """The OpenAPI 3.1 document of this service"""
    from . import openapi  # its schema models cost ~3 ms to import; only this route needs them

    return Response(body=openapi.document_json(), status_code=200, headers={"Content-Type": JSON})
