"""Routes of the catalogue import from CSV (decisions §12)."""

from chalice import Blueprint

from ..domain.errors import ServiceError, UnsupportedMediaType, invalid
from ..domain.limits import IMPORT_CHARSET_NAMES, IMPORT_FILE_BYTES
from ..domain.problems import ProblemType
from . import params
from .call import Call
from .endpoint import endpoint
from .responses import ok, problem
from .responses import page as page_body

bp = Blueprint(__name__)

EXAMPLE_FILE = """Item ID;Item name;Category name;Vessel size;Vessel unit;Vessel type;Bundle size;Bundle type;Price;Status;Labels
cola-033;Cola 0.33 l;Soft drinks;0,33;l;BO;24;CT;1,20;ACTIVE;"vegan, sugar"
lager-05;Lager 0.5 l;Beer;0,5;l;BO;20;CT;1,95;;
"""  # noqa: E501 - the barmate Connect header row, one line
CSV = "text/csv"
FORM = "multipart/form-data"
FILE_PART = "file"
# The upload as documented: a form with the file in its part `file` (what browsers, Postman and generated clients
# send). The same file may come as the whole body with Content-Type: text/csv; the operation's description says
# so (openapi_text.OPERATION_NOTES), since stock generators warn about a text/csv body and leave the operation out.
UPLOAD_BODY = {
    FORM: {
        "schema": {
            "type": "object",
            "properties": {
                FILE_PART: {
                    "type": "string",
                    "format": "binary",
                    "description": f"The CSV file, at most {IMPORT_FILE_BYTES:,} bytes; its part's Content-Type "
                    f"may give its charset ({IMPORT_CHARSET_NAMES}; utf-8 when none)",
                }
            },
            "required": [FILE_PART],
        },
        "encoding": {FILE_PART: {"contentType": "text/csv"}},
        "example": {FILE_PART: EXAMPLE_FILE},
    }
}
_FORM_LIMITS = {"max_header_size": 4_096, "max_header_count": 8, "max_segment_count": 16, "strict": True}


class TooLarge(Exception):
    """The file is over IMPORT_FILE_BYTES."""


def _media(content_type: str | None) -> tuple[str, dict]:
    import multipart  # here, not at the top: only uploads need it, and cold starts stay short

    media, options = multipart.parse_options_header(content_type or "")
    return media.strip().lower(), options


def _form_file(body: bytes, boundary: str | None) -> tuple[bytes, str | None]:
    """The part `file` of a multipart/form-data body and its charset (None when its Content-Type has none)."""
    import multipart

    if not boundary:
        raise invalid("Content-Type", "multipart/form-data needs its boundary parameter")
    chunks: list[bytes] | None = None  # the file part's content, once it has begun
    charset, receiving, size = None, False, 0
    try:
        with multipart.PushMultipartParser(boundary, content_length=len(body), **_FORM_LIMITS) as parser:
            for event in (*parser.parse(body), *parser.parse(b"")):
                if isinstance(event, multipart.MultipartSegment):
                    receiving = event.name == FILE_PART
                    if receiving and chunks is not None:
                        raise invalid("body", f"the form has more than one part named {FILE_PART}")
                    if receiving:
                        chunks, charset = [], event.charset
                elif event is None:
                    receiving = False
                elif receiving:
                    size += len(event)
                    if size > IMPORT_FILE_BYTES:
                        raise TooLarge
                    chunks.append(event)
    except (multipart.MultipartError, ValueError) as error:  # a UnicodeDecodeError of a header is a ValueError
        raise invalid("body", f"the multipart/form-data body cannot be read: {str(error)[:200]}") from None
    if chunks is None:
        raise invalid(FILE_PART, f"the form has no part named {FILE_PART}: send the CSV file in it")
    return b"".join(chunks), charset


def _uploaded_file(content_type: str | None, body: bytes) -> tuple[bytes, str | None]:
    """(the file, its charset or None); 415 for a media type the import does not take."""
    media, options = _media(content_type)
    if media == CSV:
        if len(body) > IMPORT_FILE_BYTES:
            raise TooLarge
        return body, options.get("charset")
    if media == FORM:
        return _form_file(body, options.get("boundary"))
    raise UnsupportedMediaType(
        f"send the file as the part {FILE_PART} of a {FORM} body, or as the body with Content-Type: {CSV} "
        f"(charset {IMPORT_CHARSET_NAMES})"
    )


def _file_as_read(call: Call):
    """What Idempotency-Key compares of a form: the file part and its charset, not the boundary around them."""
    content_type = call.header("content-type")
    if _media(content_type)[0] != FORM:
        return None
    raw = call.request.raw_body or b""
    try:
        file, charset = _uploaded_file(content_type, raw.encode() if isinstance(raw, str) else raw)
    except (TooLarge, ServiceError):
        return None
    return (FORM, (("charset", charset.lower()),) if charset else ()), file


@endpoint(
    bp,
    "/imports/products",
    "POST",
    response="domain.catalogue_import:ImportReport",
    status=202,
    query=("dry_run",),
    content_types=["*/*"],
    request_content=UPLOAD_BODY,
    reads=_file_as_read,
)
def import_products(call: Call):
    """Import a catalogue from a CSV file (utf-8 or latin1, `,` or `;`); it runs in the background"""
    from ..service import importing

    raw = call.request.raw_body or b""
    body = raw.encode() if isinstance(raw, str) else raw
    try:
        file, charset = _uploaded_file(call.header("content-type"), body)
    except TooLarge:
        return problem(413, ProblemType.PAYLOAD_TOO_LARGE, f"the file is limited to {IMPORT_FILE_BYTES} bytes")
    dry_run = params.boolean(call.queries, "dry_run")
    if call.idempotency is not None:
        call.idempotency.headers_of = _location  # the answer recorded with the queued import has it too
    report = importing.submit(call.account, file, charset, dry_run, call.idempotency)
    return ok(report, status=202, headers=_location(report))


def _location(report: dict) -> dict:
    return {"Location": f"/imports/products/{report['id']}"}


@endpoint(bp, "/imports/products", "GET", response="domain.catalogue_import:ImportList", paged=True)
def list_imports(call: Call):
    """List catalogue imports, newest first"""
    from ..service import importing

    limit, cursor = call.page()
    page = importing.list_imports(call.account, limit, cursor)
    return page_body("imports", page.items, page.cursor)


@endpoint(bp, "/imports/products/{import_id}", "GET", response="domain.catalogue_import:ImportReport")
def get_import(call: Call, import_id: str):
    """Read an import: its status, counts and the errors of its rows"""
    from ..service import importing

    return ok(importing.get_import(call.account, import_id))
