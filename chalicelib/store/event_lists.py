"""The account's events as GET /account/events and GET /account/webhook-deliveries list them (store/events.py
keeps the outbox itself): newest first, one Query per page, without any stored body."""

from . import keys, table
from .paging import Page, query_page

_LISTED = (
    "PK",
    "SK",
    "event_id",
    "#type",
    "#status",
    "created_at",
    "attempt_log",
    "attempts",
    "next_attempt_at",
    "delivery_id",
    "last_status_code",
    "last_error",
    "reason",
    "#sequence",
)


def list_page(account: str, limit: int, cursor: str | None, query: str = "webhook-deliveries") -> Page:
    """The account's events, newest first, without any stored body."""
    return query_page(
        account,
        query,
        limit,
        cursor,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.events_pk(account)),
        ExpressionAttributeNames={"#type": "type", "#status": "status", "#sequence": "sequence"},
        ProjectionExpression=", ".join(_LISTED),
        ScanIndexForward=False,
    )
