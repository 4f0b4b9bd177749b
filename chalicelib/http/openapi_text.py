"""The words of the OpenAPI document that the models cannot give: tags, parameters, non-JSON responses, webhooks.

A new operation adds here what it lacks (tests/api/test_examples.py names it): its path prefix in TAG_OF_PATH,
its path parameters in PATH_PARAMETERS, its query parameters in QUERY_PARAMETERS; a response that is not a
model (a file, a page) in RESPONSE_CONTENT.
"""

from ..domain import feed
from ..domain.claim_status import STATUSES as CLAIM_STATUSES
from ..domain.delivery import STATUSES
from ..domain.event_policy import EventType
from ..domain.integration_status import STATUSES as INTEGRATION_STATUSES
from ..domain.limits import (
    DEFAULT_DAYS,
    IMPORT_CHARSET_NAMES,
    IMPORT_FILE_BYTES,
    IMPORT_LISTED_ERRORS,
    IMPORT_ROWS,
    MAX_DAYS,
)
from ..domain.order_file import ENCODINGS

DESCRIPTION = """Supplier Ordering Service: a supplier's catalogue, prices and delivery rules, and the deliveries
its customers request.

Authenticate with `Authorization: token <secret>` or `Authorization: Bearer <secret>`. Supplier tokens use
every endpoint except `/customer/...`, which need a customer token. Errors are `application/problem+json`
(RFC 9457) and name every wrong field. Lists are paged with `limit` and an opaque `cursor`. Every response
carries `X-Request-Id`; every GET also answers HEAD. Responses may gain fields: ignore the ones you do not know."""

SERVERS = [
    {"url": "http://127.0.0.1:8000", "description": "`make run` on a developer's machine"},
    {
        "url": "https://{api_id}.execute-api.{region}.amazonaws.com/api",
        "description": "A deployment on API Gateway (its address is printed by `chalice deploy`).",
        "variables": {
            "api_id": {"default": "abc123defg", "description": "The REST API id."},
            "region": {"default": "eu-central-1", "description": "The AWS region."},
        },
    },
]

TAGS = {
    "Products": "The catalogue: products with packaging, prices, delivery rules and images.",
    "Categories": "Product categories; every product names one.",
    "Customers": "The supplier's customers, their delivery settings and their tokens.",
    "Pricing": "Prices for one customer or one price group of a product.",
    "Account": "The account's delivery settings, which apply to every customer.",
    "Deliveries": "Deliveries customers requested: read, answer (accept, update, reject), export as CSV, and "
    "acknowledge what your ERP imported (integration state).",
    "Customer ordering": "What a customer token may do: browse the catalogue, order, cancel and receive.",
    "Webhooks": "Where events are sent, the log of their attempts, and the events themselves.",
    "Imports": "Catalogue imports from CSV files.",
    "Deposits": "Deposit types of returnable packaging (bottles, crates, kegs, pallets) and each customer's "
    "balance of them.",
    "Changes": "The change feed: every change to the account's data, in order, to keep another system in step.",
    "Claims": "The bar's claims on delivered goods (broken, short, wrong, expired), the supplier's answer line by "
    "line, and the worklist of claims to answer.",
    "Service": "The service's own description: this document and its page for people.",
}

# Path prefixes, most specific first.
TAG_OF_PATH = (
    ("/products/{product_id}/customer-pricing", "Pricing"),
    ("/products/{product_id}/price-groups", "Pricing"),
    ("/products", "Products"),
    ("/categories", "Categories"),
    ("/deposits", "Deposits"),
    ("/customers/{customer_id}/deposits", "Deposits"),
    ("/customers", "Customers"),
    ("/customer/deliveries/{delivery_id}/claims", "Claims"),
    ("/customer/", "Customer ordering"),
    ("/deliveries/{delivery_id}/claims", "Claims"),
    ("/deliveries", "Deliveries"),
    ("/claims", "Claims"),
    ("/account/claims", "Claims"),
    ("/account/integration", "Deliveries"),
    ("/account/settings/deliveries", "Account"),
    ("/account/settings/webhooks", "Webhooks"),
    ("/account/webhook-deliveries", "Webhooks"),
    ("/account/events", "Webhooks"),
    ("/imports", "Imports"),
    ("/changes", "Changes"),
    ("/openapi.json", "Service"),
    ("/docs", "Service"),
)


def tag_of(path: str) -> str | None:
    return next((tag for prefix, tag in TAG_OF_PATH if path.startswith(prefix)), None)


PATH_PARAMETERS = {
    "product_id": "The product's id (`[a-zA-Z0-9_-]`).",
    "category_id": "The category's id (`[a-zA-Z0-9_-]`).",
    "deposit_id": "The deposit type's id (`[a-zA-Z0-9_-]`, 1 to 64 characters).",
    "customer_id": "The customer's id (`[a-zA-Z0-9_-]`).",
    "delivery_id": "The delivery's numeric id.",
    "token_id": "The token's id, as POST /customers/{customer_id}/tokens returned it.",
    "event_id": "The event's id.",
    "import_id": "The import's id.",
    "asset": "A file of the documentation page.",
    "standing_id": "The standing order's id (`[a-zA-Z0-9_-]`), unique per customer.",
    "date": "A date (YYYY-MM-DD) the standing order counts.",
    "number": "The claim's number: 1, 2, ... per delivery.",
}

QUERY_PARAMETERS = {
    "from": {
        "description": "The first date to list (default: today in the account's time zone).",
        "schema": {"type": "string", "format": "date"},
    },
    "to": {
        "description": "The last date to list (default: `from` + 27 days; at most 92 days after `from`).",
        "schema": {"type": "string", "format": "date"},
    },
    "after": {
        "description": "The sequence the reader has seen (default 0: from the start); `latest` answers the newest "
        "position without entries (where a full resynchronisation starts). Above max_sequence: 400. When the "
        "entry after it is no longer kept (entries are kept 30 days at least): 410 `feed-expired`.",
        "schema": {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "enum": ["latest"]}]},
    },
    "limit": {
        "description": f"At most this many entries (1 to {feed.MAX_PAGE}).",
        "schema": {"type": "integer", "minimum": 1, "maximum": feed.MAX_PAGE, "default": feed.DEFAULT_PAGE},
    },
    "include": {
        "description": "`data` adds each entry's resource as its GET answers now (null when it no longer exists); "
        "a page then ends early rather than pass 5 MiB.",
        "schema": {"type": "string", "enum": ["data"]},
    },
    "dry_run": {
        "description": "`true` checks the file and reports what would change without writing anything.",
        "schema": {"type": "boolean", "default": False},
    },
    "status": {"description": "Only deliveries in this status.", "schema": {"type": "string", "enum": list(STATUSES)}},
    "integration": {
        "description": "Only deliveries in this integration state, as a worklist: oldest first by the time each "
        "entered the state (a delivery that becomes PENDING again moves to the end). Not together with `status`.",
        "schema": {"type": "string", "enum": list(INTEGRATION_STATUSES)},
    },
    "encoding": {
        "description": "The file's character encoding: `utf-8` (with a byte order mark) or `latin1` (characters "
        "it cannot hold become `?`).",
        "schema": {"type": "string", "enum": list(ENCODINGS), "default": ENCODINGS[0]},
    },
    "products": {
        "description": "Comma-separated product ids the order would contain; every one must be deliverable.",
        "schema": {"type": "string", "minLength": 1},
    },
    "deposit": {
        "description": "Only the movements of this deposit type.",
        "schema": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
    },
    "days": {
        "description": f"How many deliverable dates to list (1 to {MAX_DAYS}).",
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_DAYS, "default": DEFAULT_DAYS},
    },
}

# Query parameters that mean something else on one operation than QUERY_PARAMETERS says, by operation name.
OPERATION_QUERY_PARAMETERS = {
    "list_claims": {
        "status": {
            "description": "The worklist of claims in this status (default OPEN), oldest first by the time each "
            "entered it.",
            "schema": {"type": "string", "enum": list(CLAIM_STATUSES), "default": "OPEN"},
        },
        "customer_id": {
            "description": "Only this customer's claims.",
            "schema": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,128}$"},
        },
    }
}

# What an operation's description adds, by operation name.
OPERATION_NOTES = {
    "import_products": (
        "The file comes as the part `file` of a `multipart/form-data` body (its charset from the part's "
        f"`Content-Type`, utf-8 when it has none), or as the whole body with `Content-Type: text/csv` and an "
        f"optional `charset` ({IMPORT_CHARSET_NAMES}). Either way the file is at most {IMPORT_FILE_BYTES:,} bytes, "
        f"{IMPORT_ROWS:,} rows. `GET /imports/products/{{import_id}}` lists the first {IMPORT_LISTED_ERRORS:,} "
        "errors in file order; `error_count` counts them all."
    ),
    "put_deposit": "An account has at most 200 deposit types: a new id beyond that is a 400 naming `id`. The same "
    "name and price again change nothing.",
    "delete_deposit": "400 `conflict` while a product's vessel or bundle names the type, a delivery that is not final "
    "(REQUESTED, ACCEPTED) charges, announces or collects it (or was ordered in packaging that names it), or a "
    "customer's balance of it is not 0.",
    "list_customer_deposit_movements": "Every move of the customer's balances, one movement per type a receive or an "
    "adjustment moved, newest first: `count` signed (+ charged, − returned, an adjustment's own sign), `name` and "
    "`price` as the move valued them, `delivery_id` for a receive, `message` for an adjustment. For every type the "
    "counts add up to the balance. 404 for an unknown customer.",
    "list_own_deposit_movements": "The statement of `GET /customers/{customer_id}/deposits/movements`, for the "
    "customer's own balances.",
    "adjust_customer_deposits": "Adds `count` (non-zero, -100,000 to 100,000) to the customer's balance of one "
    "deposit type, for opening balances and corrections; a balance may go below 0. Answers the balances as the GET "
    "does; each adjustment is a movement of the statement, with its `message`. 409 while the type is being deleted.",
    "receive_delivery": "With `items` (the lines of a claim), claim 1 opens in the same write (decisions §18); a "
    "delivery the supplier's note made DELIVERED is a 400 `invalid-transition`, with or without them.",
    "open_claim": "Only on a DELIVERED delivery of type DELIVERY, within the account's `claim_window_hours` after the "
    "note's `delivered_at` or the receive (else 400 `invalid-transition`, after the window with `closed_at`). Each "
    "line once, at most what was delivered less what claims that are not WITHDRAWN or DECLINED hold; at most 10 "
    "claims per delivery (400 naming `items`). The integration state becomes PENDING; no balance moves.",
    "answer_claim": "Every claimed line exactly once; `credit` defaults, for CREDIT, to the accepted count valued at "
    "the line's price as delivered. The claim becomes ACCEPTED, PARTIALLY_ACCEPTED or DECLINED (which needs a "
    "`message`); only an OPEN claim is answered (else 400 `invalid-transition`). The integration state stays.",
    "give_delivery_note": "Once, on a REQUESTED or ACCEPTED delivery of either type (else 400 `invalid-transition`): "
    "the delivery becomes DELIVERED and shows `delivery_note`, every line as ordered, confirmed and delivered (a line "
    "left out was delivered as the latest response confirmed it). Deposits are charged from what was delivered and "
    "returned from the note's `empties` (else what decisions §15 counts), and the customer's balances move. The "
    "integration state stays as it is. The change is `delivery.delivered` with `by: supplier`; the legacy "
    "`receive-delivery` webhook is not sent for a note (select `delivery.delivered` to hear of it).",
}

# Problems an operation answers beyond those every operation of its kind does (429: a per-account rate,
# decisions §10).
EXTRA_PROBLEMS = {"list_changes": (410,), "resend_event": (429,)}

# Operations whose success body is not a JSON model: what they answer.
RESPONSE_CONTENT = {
    "delivery_order_file": {
        "description": "The order file: two sections (order, items) with the same columns, RFC 4180 quoting.",
        "operation_description": "The file is sent only to a request whose `Accept` header names `text/csv` "
        "(or `*/*`); any other `Accept` is a 400 naming `Accept`. A text cell that begins with `=`, `+`, `-`, `@`, "
        "a tab or a carriage return is written with a leading `'` so that no spreadsheet runs it as a formula; ids "
        "and numbers are written as they are.",
        "content": {"text/csv": {"schema": {"type": "string"}}},
    },
    "get_openapi_document": {
        "description": "This document.",
        "content": {"application/json": {"schema": {"type": "object"}}},
    },
    "get_docs_page": {
        "description": "The reference for people, rendered from /openapi.json.",
        "content": {"text/html": {"schema": {"type": "string"}}},
    },
    "get_docs_asset": {
        "description": "A script or style sheet of the page, from the service's own package (no CDN).",
        "content": {"text/javascript": {"schema": {"type": "string"}}, "text/css": {"schema": {"type": "string"}}},
    },
}

# Operations other than POSTs that may answer 409 (a POST with Idempotency-Key always may).
CONTENDED = {"set_delivery_integration"}

# Operations without recorded examples, and why.
EXAMPLE_EXEMPT = {
    "get_openapi_document": "its answer is this document",
    "get_docs_page": "an HTML page",
    "get_docs_asset": "a script or style sheet",
}

WEBHOOK_EVENTS = {
    EventType.REQUEST_DELIVERY: ("A customer requested a delivery", "A customer placed an order (or a return)."),
    EventType.CANCEL_DELIVERY: (
        "A customer cancelled a delivery",
        "A customer cancelled a REQUESTED or ACCEPTED delivery.",
    ),
    EventType.RECEIVE_DELIVERY: ("A customer received a delivery", "A customer confirmed that a delivery arrived."),
}

WEBHOOK_HEADERS = [
    {
        "name": "webhook-id",
        "in": "header",
        "required": True,
        "description": "The event's id; the same on every attempt, so a receiver can drop duplicates.",
        "schema": {"type": "string"},
    },
    {
        "name": "webhook-timestamp",
        "in": "header",
        "required": True,
        "description": "Seconds since the Unix epoch when this attempt was signed; refuse old ones.",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
    {
        "name": "webhook-signature",
        "in": "header",
        "required": True,
        "description": "`v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>` with the "
        "account's `signing_secret` (Standard Webhooks).",
        "schema": {"type": "string"},
    },
]
