"""The API's own description, readable without a token: GET /openapi.json and the page for people at /docs.

The page is Swagger UI, served from the swagger-ui-bundle-v2 package deployed with the Lambda (no CDN), so it
works offline and behind a firewall. Its links are relative, so it works under API Gateway's stage prefix too.
"""

from pathlib import Path
from typing import Any

from chalice import Blueprint, Response

from ..domain.errors import NotFound
from .call import Call
from .endpoint import endpoint
from .responses import JSON

bp = Blueprint(__name__)

ASSETS = {"swagger-ui.css": "text/css; charset=utf-8", "swagger-ui-bundle.js": "text/javascript; charset=utf-8"}
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Supplier Ordering Service API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({url: "openapi.json", dom_id: "#reference", deepLinking: true});
</script>
</body>
</html>
"""


def _asset_folder() -> Path:
    import swagger_ui_bundle

    return Path(str(swagger_ui_bundle.swagger_ui_path))


@endpoint(bp, "/openapi.json", "GET", role=None, response=dict[str, Any])
def get_openapi_document(_call: Call):
    """The OpenAPI 3.1 document of this service"""
    from . import openapi  # its schema models import pydantic; only this route needs them

    return Response(body=openapi.document_json(), status_code=200, headers={"Content-Type": JSON})


@endpoint(bp, "/docs", "GET", role=None)
def get_docs_page(_call: Call):
    """The API reference for people, rendered from /openapi.json"""
    return Response(body=PAGE, status_code=200, headers={"Content-Type": "text/html; charset=utf-8"})


@endpoint(bp, "/docs/{asset}", "GET", role=None)
def get_docs_asset(_call: Call, asset: str):
    """A script or style sheet of the reference page"""
    if asset not in ASSETS:
        raise NotFound(f"no such file: {asset}")
    body = (_asset_folder() / asset).read_text(encoding="utf-8")
    return Response(
        body=body, status_code=200, headers={"Content-Type": ASSETS[asset], "Cache-Control": "public, max-age=86400"}
    )
