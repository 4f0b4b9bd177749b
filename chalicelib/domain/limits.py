"""Size limits, designed together from the hard ceilings down (decisions §4, §8; docs/limits.md).

Ceilings: an API Gateway / Lambda answer of at most 6 MB (we keep every answer under 5 MiB), a DynamoDB item of
400 KB, a transaction of 100 items and 4 MB, and list pages of at most 100 items.

Field limits (lengths, counts) live on the shapes; the byte budgets here bound what the field limits alone
cannot: how many of them add up. Sizes are bytes of the JSON text the API answers (rendering.size_in_bytes),
which is never smaller than what DynamoDB counts for the same document.

- Every object a list page shows is at most LISTED_BYTES (a supplier's delivery: LISTED_DELIVERY_BYTES), so 100 of
  them and the envelope stay under 5 MiB.
- A delivery's summary (what lists show) is at most LISTED_DELIVERY_BYTES: the delivery itself DELIVERY_SUMMARY_BYTES
  and its integration state (decisions §14, supplier reads only) INTEGRATION_BYTES. While the delivery
  is open its responses may fill it only up to OPEN_DELIVERY_BYTES: the rest is kept for the one final change (a
  REJECT without items, a cancel or a receive), so limits never trap a delivery.
- The request items of one order together are at most ORDER_ITEMS_BYTES, so a delivery in full (summary and
  items, what GET /deliveries/:id answers and an Idempotency-Key record keeps) stays below one DynamoDB item.
"""

from .errors import FieldError
from .rendering import size_in_bytes

CONTENTION_SECONDS = 5.0  # a write answers 409 only once contention has lasted this long (decisions §8)
NUMBERING_SECONDS = 2.0  # the longest one turn of an account's numbering may take (two reads, a few transactions)
IMAGE_DOWNLOAD_SECONDS = 15  # an image download's timeout (decisions §10)
IMPORT_CHUNK_SECONDS = 5.0  # the longest an import chunk may take; no chunk starts with less time than this left
SHORT_TEXT_CHARS = 256  # a short text field (an image's etag, a name); an image's own ETag longer than this is hashed
PAGE_BYTES = 5 * 1024 * 1024
PAGE_ITEMS = 100  # the largest `limit` of a list page (decisions §4)
# A request body (decisions §3; the CSV import has its own); an event body is never larger either (event_policy.py).
MAX_BODY_BYTES = 1024 * 1024
LISTED_BYTES = 50_000  # 100 x 50,000 + the envelope < 5 MiB

# GET /customer/delivery-dates: at most MAX_DAYS dates in one answer (decisions §7), DEFAULT_DAYS when not asked.
MAX_DAYS = 60
DEFAULT_DAYS = 14

# Products: the customer's view swaps the product's own price and pricing for the level that applies to them.
PRICING_BYTES = 10_000  # one price level (price and scaled pricing) of a product, a customer or a price group
PRODUCT_METADATA_BYTES = 4_000  # what the image download adds later (etag, last_modified)
PRODUCT_BYTES = LISTED_BYTES - PRICING_BYTES - PRODUCT_METADATA_BYTES  # 36,000
PRICE_GROUPS_BYTES = 200_000  # all price groups of one product (one item)

CUSTOM_PROPERTIES = 50  # keys
CUSTOM_PROPERTY_KEY_LENGTH = 128
CUSTOM_STRING_LENGTH = 2_000  # a string value, or one string of an array
CUSTOM_ARRAY_LENGTH = 100
CUSTOM_PROPERTIES_BYTES = 20_000  # all custom_properties of a product together

# Customers (and the dated rules of products and the account): a customer with its profile at its longest and
# both of these full is about 41,000 bytes, within LISTED_BYTES for the customer list.
DATED_RULES = 500  # entries of delivery_date_overrides, and of dates_with_no_delivery

CATEGORIES = 1_000  # per account (decisions §4): GET /categories answers them all on one page (about 200 KB at most)

# Deposits and empties (decisions §15).
DEPOSIT_TYPES = 200  # per account: all of them live in one item (store/deposits.py), 200 x ~450 bytes at most
DEPOSIT_PRICE = 100_000  # cents
DEPOSIT_COUNT = 100_000  # an entry of empties; an adjustment is -DEPOSIT_COUNT..DEPOSIT_COUNT
EMPTIES = 50  # entries of an order's or a response's empties
# ... and bytes of such a list as the delivery shows it (names and prices included): an order's empties and two
# responses' empties at this bound take 21,000 of an open delivery's 27,404 bytes, whatever alphabet the types'
# names are written in (64 characters of 4 bytes would make 50 entries ~18,500 bytes each).
EMPTIES_BYTES = 7_000
ADJUSTMENT_MESSAGE_LENGTH = 500

# Deliveries.
MESSAGE_LENGTH = 2_000  # order, item, response, cancel and receive messages
ORDER_ITEMS = 50  # lines per order: 2 items per delivery + 1 event per delivery + 1 per product + 1 claim <= 100
OPEN_RESPONSES = 100  # ACCEPT and UPDATE responses per delivery; the final REJECT is never counted
ORDER_ITEMS_BYTES = 250_000  # the request items of all deliveries of one order
# Amendments (decisions §16) are kept with the request items: 250,000 + 60,000 bytes and the summary's 50,000 keep
# the delivery in full (and an Idempotency-Key record of it) below DynamoDB's 400 KB.
AMENDMENTS = 20
AMENDMENTS_BYTES = 60_000
# The largest final change without items: REJECT with reference, user and message; cancelled / received
# with user and message. 6 bytes per character is the worst case (a control character renders as \u0001).
_WORST_CHAR_BYTES = 6
# The integration state (decisions §14) a supplier read adds to the delivery. Its reference and message at their
# longest in any character of up to 3 bytes (all of Unicode's basic plane: every alphabet, Chinese, Japanese,
# Korean) take 6,500 bytes; at 6 bytes a character (control characters) they would take 13,000, so the state is
# bounded in bytes too. A supplier's listed delivery is then at most 52,000 bytes: 100 of them still fit a page.
INTEGRATION_REFERENCE_LENGTH = 128
INTEGRATION_BYTES = 7_000
DELIVERY_SUMMARY_BYTES = 45_000
LISTED_DELIVERY_BYTES = DELIVERY_SUMMARY_BYTES + INTEGRATION_BYTES  # 52,000: 100 x 52,000 + the envelope < 5 MiB
FINAL_CHANGE_BYTES = 1_000 + _WORST_CHAR_BYTES * (256 + 256 + 254 + MESSAGE_LENGTH)  # 17,596
OPEN_DELIVERY_BYTES = DELIVERY_SUMMARY_BYTES - FINAL_CHANGE_BYTES  # 27,404

# The delivery outcome (decisions §18). The delivery note is kept on the items item, beside the request items and
# the amendments, which it freezes (a DELIVERED delivery changes no more): 250,000 + 60,000 + 90,000 bytes and the
# keys stay under DynamoDB's 409,600. The summary (what lists show) does not grow: only its status changes.
NOTE_BYTES = 90_000  # the `delivery_note` object as single reads show it
NOTE_NUMBER_LENGTH = 35  # the paper note's number
RECEIVED_BY_LENGTH = 200  # the note's proof: who signed for it
URL_LENGTH = 2_000  # a proof or evidence link (https only: the service keeps links, not files)
PROOF_PHOTOS = 5  # photo links of a note's proof (and evidence links of a claim's line, issue 47)
DELIVERED_AT_AHEAD_SECONDS = 300  # a note's delivered_at may be at most 5 minutes in the future
# Claims (decisions §18): at most CLAIMS per delivery, each at most CLAIM_BYTES as opened (1-100 lines with their
# messages and evidence links) and CLAIM_ANSWER_BYTES of its answer (each line's accepted count, resolution, credit
# and reason; the answer's message and user). Ten of them take at most 360,000 bytes: an item of their own.
CLAIMS = 10
CLAIM_BYTES = 24_000
CLAIM_ANSWER_BYTES = 12_000
CLAIM_LINES = 100  # lines of a claim (and of its answer)
CLAIM_EVIDENCE = 5  # evidence links of a claimed line (URL_LENGTH each)
CLAIM_CREDIT = 100_000_000  # cents a line's answer may credit
# A delivery's `deposits` on single reads: at most every deposit type of the account charged (an entry is at most
# 520 bytes: a 64-character id, 64 characters of name at 6 bytes, price and count), and the returned empties.
DEPOSIT_ENTRY_BYTES = 520
DEPOSITS_BYTES = DEPOSIT_TYPES * DEPOSIT_ENTRY_BYTES + EMPTIES_BYTES + 100  # 111,100
# The delivery in full, as single reads, the feed's data and a webhook event's body show it: the summary with its
# integration state, the request items, amendments, deposits, note and claims. An event's body carries it whole
# (at most MAX_BODY_BYTES); an Idempotency-Key answer this long is kept in parts (store/idempotency.py).
FULL_DELIVERY_BYTES = (
    LISTED_DELIVERY_BYTES + ORDER_ITEMS_BYTES + AMENDMENTS_BYTES + DEPOSITS_BYTES + NOTE_BYTES
) + CLAIMS * (CLAIM_BYTES + CLAIM_ANSWER_BYTES)  # 923,100
ITEMS_ITEM_BYTES = ORDER_ITEMS_BYTES + AMENDMENTS_BYTES + NOTE_BYTES  # 400,000 of DynamoDB's 409,600


def size_errors(value, limit: int, path: str, holder: str) -> list[FieldError]:
    """[] when `value` fits in `limit` bytes, else the error naming `path`: "takes N bytes of JSON; <holder> at
    most <limit>"."""
    size = size_in_bytes(value)
    if size <= limit:
        return []
    return [FieldError(path, f"takes {size:,} bytes of JSON; {holder} at most {limit:,}")]


# Catalogue import (decisions §12). The file is at most IMPORT_FILE_BYTES, however it comes: as the body, or as
# the `file` part of a multipart/form-data body, whose envelope (boundaries, part headers, other small fields)
# may add up to IMPORT_ENVELOPE_BYTES; Lambda takes 6 MB.
IMPORT_FILE_BYTES = 5 * 1024 * 1024
IMPORT_ENVELOPE_BYTES = 64 * 1024
IMPORT_UPLOAD_BYTES = IMPORT_FILE_BYTES + IMPORT_ENVELOPE_BYTES
IMPORT_ROWS = 20_000
# The report (GET /imports/products/:id) lists the first IMPORT_LISTED_ERRORS errors, each rendered within
# IMPORT_ERROR_BYTES, so with its counts it stays under IMPORT_REPORT_BYTES whatever the file holds.
IMPORT_REPORT_BYTES = 1024 * 1024
IMPORT_LISTED_ERRORS = 1_000
IMPORT_ERROR_BYTES = 1_000
IMPORT_QUOTED_CHARS = 100  # characters of a cell an error message quotes
# The charsets an import file may come in (the Content-Type's or the form part's) and the order file's `encoding`
# (decisions §8, §12): each name a client may give, in lower case, and the codec it means. Here, not in
# catalogue_import.py, so that http/ names them without loading pydantic on a cold start.
CHARSETS = {"utf-8": "utf-8", "utf8": "utf-8", "latin1": "latin1", "latin-1": "latin1", "iso-8859-1": "latin1"}
IMPORT_CHARSET_NAMES = "utf-8 or latin1 (iso-8859-1)"
assert IMPORT_LISTED_ERRORS * (IMPORT_ERROR_BYTES + 1) + 2_000 < IMPORT_REPORT_BYTES
assert FULL_DELIVERY_BYTES + 1_000 < MAX_BODY_BYTES
assert ITEMS_ITEM_BYTES + 1_000 < 400 * 1024
assert CLAIMS * (CLAIM_BYTES + CLAIM_ANSWER_BYTES) + 1_000 < 400 * 1024
