"""One page of a Query, read with a single request.

We ask for one item more than the page holds: if it comes back there is a next page, so a page is never short
unless it is the last, and the last page carries no cursor.
"""

from typing import Any, Callable, NamedTuple

from . import cursor as cursors
from . import table
from .cursor import BadCursor  # noqa: F401  (what query_page raises for a cursor it cannot resume from)


class Page(NamedTuple):  # not a dataclass: its class is built on every cold start, a tenth of the cost
    items: list[dict]
    cursor: str | None


def query_page(
    account: str,
    query: str,
    limit: int,
    cursor: str | None,
    index: str | None = None,
    decode: Callable[[dict], Any] = table.from_item,
    last_key: Callable[[Any], dict] | None = None,
    **request,
) -> Page:
    """decode turns each low-level item into what the page holds (by default a plain dict). last_key, when given,
    names the key (table and index keys, low-level) of what decode made, so the request need not fetch the key
    attributes of every item: each costs botocore a parse, and only the last item's key makes the cursor."""
    key_names = ["PK", "SK"] + ([f"{index}PK", f"{index}SK"] if index else [])
    if index:
        request["IndexName"] = index
    if cursor:
        request["ExclusiveStartKey"] = cursors.decode(account, query, cursor)
    raw: list[dict] = []
    while True:  # more than one request only when DynamoDB stops at its 1 MB page size
        response = table.client().query(TableName=table.name(), Limit=limit + 1 - len(raw), **request)
        raw.extend(response.get("Items", []))
        if len(raw) > limit or "LastEvaluatedKey" not in response:
            break
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    more = len(raw) > limit
    items = [decode(item) for item in raw[:limit]]
    next_cursor = None
    if more and items:
        last = last_key(items[-1]) if last_key is not None else {k: raw[limit - 1][k] for k in key_names}
        next_cursor = cursors.encode(account, query, last)
    return Page(items, next_cursor)
