"""Routes of the catalogue import from CSV (decisions §12)."""
from chalice import Blueprint

from ..lazy import lazy
from .call import Call
from .endpoint import endpoint
from .responses import ok
from .responses import page as page_body
from ..domain.errors import UnsupportedMediaType
from . import params

imports = lazy("chalicelib.service.imports")

bp = Blueprint(__name__)

EXAMPLE_FILE = """Item ID;Item name;Category name;Vessel size;Vessel unit;Vessel type;Bundle size;Bundle type;Price;Status;Labels
cola-033;Cola 0.33 l;Soft drinks;0,33;l;BO;24;CT;1,20;ACTIVE;"vegan, sugar"
lager-05;Lager 0.5 l;Beer;0,5;l;BO;20;CT;1,95;;
"""
# The file as the body: its own media type, not JSON (decisions §12), up to 5 MiB (bodies.BODY_LIMITS).
CSV_BODY = {
    "text/csv": {
        "schema": {"type": "string", "maxLength": 5 * 1024 * 1024},
        "example": EXAMPLE_FILE,
    }
}


def _csv_charset(content_type: str | None) -> str | None:
    """The charset of a text/csv body (None when not given); 415 for any other media type."""
    media, _, parameters = (content_type or "").partition(";")
    charset = None
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset":
            charset = value
    if media.strip().lower() != "text/csv":
        raise UnsupportedMediaType("send the file as Content-Type: text/csv (charset=utf-8 or latin1)")
    return charset


@endpoint(
    bp,
    "/imports/products",
    "POST",
    response="domain.catalogue_import:ImportReport",
    status=202,
    query=("dry_run",),
    content_types=["*/*"],
    request_content=CSV_BODY,
)
def import_products(call: Call):
    """Import a catalogue from a CSV file (utf-8 or latin1, `,` or `;`); it runs in the background"""
    charset = _csv_charset(call.header("content-type"))
    dry_run = params.boolean(call.queries, "dry_run")
    raw = call.request.raw_body or b""
    body = raw.encode() if isinstance(raw, str) else raw
    report = imports.submit(call.account, body, charset, dry_run)
    return ok(report, status=202, headers={"Location": f"/imports/products/{report['id']}"})


@endpoint(bp, "/imports/products", "GET", response="domain.catalogue_import:ImportList", paged=True)
def list_imports(call: Call):
    """List catalogue imports, newest first"""
    limit, cursor = call.page()
    page = imports.list_imports(call.account, limit, cursor)
    return page_body("imports", page.items, page.cursor)


@endpoint(bp, "/imports/products/{import_id}", "GET", response="domain.catalogue_import:ImportReport")
def get_import(call: Call, import_id: str):
    """Read an import: its status, counts and the errors of its rows"""
    return ok(imports.get_import(call.account, import_id))
