"""The order in which responses list an object's fields (decisions §3): `id` first, then the order of the
interface's tables, nested objects included, extension fields after.

DynamoDB hands maps back in its own order, so every JSON response is put in this order when it is rendered.
Pure data and one function, without pydantic, so a cold GET pays nothing for it. The response models list their
fields in the same order (tests/api/test_field_order.py holds the two together), so the OpenAPI document shows
the order the responses have.
"""

from types import MappingProxyType
from typing import Any, Mapping, NamedTuple, Union

_NOTHING_NESTED: Mapping = MappingProxyType({})


# NamedTuples, not dataclasses: their classes are built on every cold start, for a tenth of the cost.
class Record(NamedTuple):
    """An object with named fields: `fields` in order; `nested` orders a field's object (or each list element)."""

    fields: tuple[str, ...]
    nested: Mapping[str, "Order"] = _NOTHING_NESTED


class Map(NamedTuple):
    """An object keyed by data (weekdays, dates, group names, property names): keys sorted, values ordered."""

    values: "Order | None" = None


Order = Union[Record, Map]


def ordered(value: Any, order: "Order | None") -> Any:
    """The value with its objects' keys in `order`; unknown keys follow the known ones, sorted."""
    if order is None:
        return value
    if isinstance(value, list):
        return [ordered(item, order) for item in value]
    if not isinstance(value, dict):
        return value
    if isinstance(order, Map):
        return {key: ordered(value[key], order.values) for key in sorted(value)}
    result = {}
    for name in order.fields:
        if name in value:
            result[name] = ordered(value[name], order.nested.get(name))
    if len(result) < len(value):
        for name in sorted(value):
            if name not in result:
                result[name] = value[name]
    return result


# The interface's tables, in their order.
RULE = Record(("lead_days", "cutoff"))
RULES_BY_KEY = Map(RULE)
SCHEDULE_FIELDS = {"delivery_days": RULES_BY_KEY, "delivery_date_overrides": RULES_BY_KEY}
VESSEL = Record(("id", "size", "unit", "type", "deposit"))  # deposit: extension (decisions §15)
PALLET_BUNDLE = Record(("id", "type", "size"))
BUNDLE = Record(
    ("id", "id_override", "type", "size", "unit", "pallet_bundle", "deposit"), {"pallet_bundle": PALLET_BUNDLE}
)
PRICE_POINT = Record(("from", "price"))
DATE_OVERRIDE = Record(("from_date", "to_date", "price_points"), {"price_points": PRICE_POINT})
SCALED_PRICING = Record(
    ("strategy", "price_points", "date_overrides"), {"price_points": PRICE_POINT, "date_overrides": DATE_OVERRIDE}
)
IMAGE = Record(("url", "etag", "last_modified"))
PRODUCT = Record(
    (
        "id",
        "status",
        "category",
        "name",
        "order_by",
        "vessel",
        "bundles",
        "price",
        "price_per",
        "min_order_count",
        "delivery_days",
        "delivery_date_overrides",
        "dates_with_no_delivery",
        "pricing",
        "gtin",
        "custom_properties",
        "image",
    ),
    {
        "vessel": VESSEL,
        "bundles": BUNDLE,
        "pricing": SCALED_PRICING,
        "custom_properties": Map(),
        "image": IMAGE,
        **SCHEDULE_FIELDS,
    },
)
CATEGORY = Record(("id", "name"))
ADDRESS = Record(("address1", "address2", "zip", "city", "country"))
CONTACT = Record(("name", "email"))
CUSTOMER = Record(
    (
        "id",
        "name",
        "price_group",
        "delivery_days",
        "delivery_date_overrides",
        "dates_with_no_delivery",  # then the extension: the profile of PUT /customers/:id
        "company",
        "address",
        "contact",
        "substitutions",  # extension (decisions §18)
    ),
    {"address": ADDRESS, "contact": CONTACT, **SCHEDULE_FIELDS},
)
CUSTOMER_TOKEN = Record(("id", "token", "customer_id"))
ACCOUNT_DELIVERY_SETTINGS = Record(
    (
        "allow_delivery_comments",
        "allow_product_comments",
        "delivery_days",
        "delivery_date_overrides",
        "dates_with_no_delivery",
        "timezone",  # extension (decisions §7)
        "claim_window_hours",  # extension (decisions §18)
    ),
    SCHEDULE_FIELDS,
)
PRICE_LEVEL = Record(("price", "pricing"), {"pricing": SCALED_PRICING})
SCHEDULED = Record(("date", "time"))
USER = CONTACT
ITEM_DEPOSIT = Record(("id", "count"))
DEPOSIT_ENTRY = Record(("id", "name", "price", "count"))  # extension (decisions §15)
REQUEST_ITEM = Record(
    (
        "id",
        "name",
        "order_by",
        "vessel",
        "count",
        "bundle",
        "vessel_count",
        "price",
        "price_per",
        "message",
        "deposits",
        "substitute",  # extension (decisions §18), only when false
    ),
    {"vessel": VESSEL, "bundle": BUNDLE, "deposits": ITEM_DEPOSIT},
)
DELIVERY_REQUEST = Record(
    (
        "timestamp",
        "company",
        "customer_id",
        "cost_center",
        "address",
        "scheduled",
        "user",
        "message",
        "items",
        "deposits",
        "empties",
    ),
    {
        "address": ADDRESS,
        "scheduled": SCHEDULED,
        "user": USER,
        "items": REQUEST_ITEM,
        "deposits": DEPOSIT_ENTRY,
        "empties": DEPOSIT_ENTRY,
    },
)
RESPONSE_ITEM = Record(("id", "count", "bundle", "vessel_count", "price", "reason"), {"bundle": BUNDLE})
SUBSTITUTION = Record(("for", "id", "count", "bundle", "vessel_count", "price"), {"bundle": BUNDLE})  # decisions §18
DELIVERY_RESPONSE = Record(
    ("type", "timestamp", "reference", "scheduled", "items", "user", "message", "empties", "substitutions"),
    {
        "scheduled": SCHEDULED,
        "items": RESPONSE_ITEM,
        "user": USER,
        "empties": DEPOSIT_ENTRY,
        "substitutions": SUBSTITUTION,
    },
)
DELIVERY_DEPOSITS = Record(("charged", "returned", "total"), {"charged": DEPOSIT_ENTRY, "returned": DEPOSIT_ENTRY})
DELIVERY_CUSTOMER = Record(("id", "company", "address", "contact"), {"address": ADDRESS, "contact": CONTACT})
CUSTOMER_ACTION = Record(("timestamp", "user", "message"), {"user": USER})
INTEGRATION = Record(("status", "reference", "message", "updated"))  # extension (decisions §14)
AMENDMENT = Record(  # extension (decisions §16)
    ("sequence", "timestamp", "user", "message", "scheduled", "items"),
    {
        "user": USER,
        "scheduled": Record(("from", "to"), {"from": SCHEDULED, "to": SCHEDULED}),
        "items": Record(("id", "bundle", "action", "count_before", "count"), {"bundle": BUNDLE}),
    },
)
DELIVERY_NOTE = Record(  # extension (decisions §18)
    ("number", "delivered_at", "items", "substitutions", "empties", "proof", "message", "user", "timestamp"),
    {
        "items": Record(
            ("id", "bundle", "ordered", "confirmed", "count", "vessel_count", "reason"), {"bundle": BUNDLE}
        ),
        "substitutions": SUBSTITUTION,
        "empties": DEPOSIT_ENTRY,
        "proof": Record(("received_by", "signature_url", "photo_urls", "note")),
        "user": USER,
    },
)
CLAIM_LINE = Record(("id", "issue", "count", "message", "evidence", "accepted", "resolution", "credit", "reason"))
_CLAIM_NESTED = {"user": USER, "items": CLAIM_LINE, "answer": Record(("timestamp", "user", "message"), {"user": USER})}
CLAIM = Record(("number", "status", "opened_at", "user", "message", "items", "answer", "withdrawn_at"), _CLAIM_NESTED)
DELIVERY = Record(
    (
        "id",
        "type",
        "status",
        "customer",
        "request",
        "responses",
        "cancelled",
        "received",
        "amendments",
        "delivery_note",
        "claims",
        "deposits",
        "integration",
        "standing_order",
    ),
    {
        "customer": DELIVERY_CUSTOMER,
        "request": DELIVERY_REQUEST,
        "responses": DELIVERY_RESPONSE,
        "cancelled": CUSTOMER_ACTION,
        "received": CUSTOMER_ACTION,  # extension
        "amendments": AMENDMENT,  # extension (decisions §16), single reads only
        "delivery_note": DELIVERY_NOTE,  # extension (decisions §18), single reads only
        "claims": CLAIM,  # extension (decisions §18), single reads only
        "deposits": DELIVERY_DEPOSITS,  # extension (decisions §15), single reads only
        "integration": INTEGRATION,  # extension, supplier reads only
        "standing_order": Record(("id", "date")),  # extension (decisions §17), the last field
    },
)
WEBHOOK_SETTINGS = Record(
    ("url", "method", "headers", "authorization", "events", "signing_secret"),
    {"headers": Map(), "authorization": Record(("type", "username"))},
)
WEBHOOK_DELIVERY = Record(
    ("id", "type", "status", "created_at", "delivery_id", "attempts", "next_attempt_at"),
    {"attempts": Record(("at", "status_code", "error", "duration_ms"))},
)
EVENT = Record(
    (
        "id",
        "type",
        "delivery_id",
        "sequence",
        "status",
        "attempts",
        "created",
        "last_status_code",
        "last_error",
        "next_attempt_at",
        "reason",
    )
)
IMPORT_SUMMARY_FIELDS = (
    "id",
    "status",
    "dry_run",
    "rows",
    "processed",
    "created",
    "updated",
    "unchanged",
    "invalid",
    "categories_created",
    "error_count",
    "submitted_at",
    "finished_at",
    "reason",
)
IMPORT = Record(IMPORT_SUMMARY_FIELDS + ("errors",), {"errors": Record(("row", "column", "message"))})


DEPOSIT = Record(("id", "name", "price"))
CUSTOMER_DEPOSITS = Record(("deposits", "total"), {"deposits": Record(("id", "name", "price", "balance"))})
MOVEMENT = Record(("at", "id", "name", "price", "count", "delivery_id", "message"))
STANDING_ORDER = Record(
    (
        "id",
        "customer_id",
        "name",
        "items",
        "weekdays",
        "every_weeks",
        "starts_on",
        "ends_on",
        "place_days_ahead",
        "paused",
        "type",
        "empties",
        "message",
        "cost_center",
        "company",
        "address",
        "user",
        "created",
        "updated",
    ),
    {
        "items": Record(("id", "count", "bundle", "message", "substitute"), {"bundle": Record(("id", "type", "size"))}),
        "empties": Record(("id", "count")),
        "address": ADDRESS,
        "user": USER,
    },
)
OCCURRENCE = Record(
    ("date", "status", "place_at", "delivery_ids", "left_out", "errors"),
    {"left_out": Record(("id", "reason")), "errors": Record(("path", "message"))},
)


def page(name: str, item: Order) -> Record:
    """A list page: the items, then the cursor."""
    return Record((name, "cursor"), {name: item})


# Response shapes by the name of the model that documents them (the `response=` of an endpoint).
BY_MODEL: dict[str, Order] = {
    "Product": PRODUCT,
    "ProductList": page("products", PRODUCT),
    "Category": CATEGORY,
    "CategoryList": page("categories", CATEGORY),
    "Customer": CUSTOMER,
    "CustomerList": page("customers", CUSTOMER),
    "CustomerToken": CUSTOMER_TOKEN,
    "DeliveryDates": Record(("dates",)),
    "AccountDeliverySettings": ACCOUNT_DELIVERY_SETTINGS,
    "PriceLevel": PRICE_LEVEL,
    "PriceGroups": Map(PRICE_LEVEL),
    "Delivery": DELIVERY,
    "DeliveryList": page("deliveries", DELIVERY),
    "PlacedDeliveries": Record(("deliveries",), {"deliveries": DELIVERY}),
    "SupplierDelivery": DELIVERY,
    "SupplierDeliveryList": page("deliveries", DELIVERY),
    "Integration": INTEGRATION,
    "IntegrationOverview": Record(("pending", "failed", "oldest_pending"), {"oldest_pending": Record(("id", "since"))}),
    "ClaimList": page("claims", Record(("delivery_id", "customer_id", "number", "status", "opened_at", "since"))),
    "ClaimsOverview": Record(("open", "oldest_open"), {"oldest_open": Record(("delivery_id", "number", "since"))}),
    "WebhookSettingsView": WEBHOOK_SETTINGS,
    "WebhookDeliveryList": page("webhook_deliveries", WEBHOOK_DELIVERY),
    "Event": EVENT,
    "EventList": page("events", EVENT),
    "ImportReport": IMPORT,
    "ImportList": page("imports", Record(IMPORT_SUMMARY_FIELDS)),
    "Deposit": DEPOSIT,
    "DepositList": page("deposits", DEPOSIT),
    "CustomerDeposits": CUSTOMER_DEPOSITS,
    "MovementList": page("movements", MOVEMENT),
    "StandingOrder": STANDING_ORDER,
    "StandingOrderList": page("standing_orders", STANDING_ORDER),
    "Occurrence": OCCURRENCE,
    "OccurrenceList": Record(("occurrences",), {"occurrences": OCCURRENCE}),
    "ChangePage": Record(
        ("changes", "last_sequence", "max_sequence"),
        {
            "changes": Record(
                (
                    "sequence",
                    "type",
                    "resource",
                    "id",
                    "at",
                    "status",
                    "by",  # decisions §18: delivery.delivered, who delivered
                    "integration",
                    "customer_id",
                    "date",
                    "reason",  # feed.unreadable: why the record could not be numbered as it is
                    "unit",  # the write's unit of work (X-Feed-Unit on its answer)
                    "data",
                )
            )
        },
    ),
}

# The `data` of a change feed entry (GET /changes?include=data), by the entry's resource: as its GET orders it.
FEED_DATA: dict[str, Order] = {
    "product": PRODUCT,
    "category": CATEGORY,
    "customer": CUSTOMER,
    "customer-pricing": PRICE_LEVEL,
    "price-groups": Map(PRICE_LEVEL),
    "delivery": DELIVERY,
    "deposit": DEPOSIT,
    "customer-deposits": CUSTOMER_DEPOSITS,
    "standing-order": STANDING_ORDER,  # a standing-order.failed entry's data is the failed date (OCCURRENCE)
}
