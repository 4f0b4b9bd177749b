"""Lists of deliveries and the integration overview, read from the single table (store/deliveries.py says how a
delivery is stored): pages of summaries as the JSON texts the API shows, newest first or in a worklist's order,
and the account's counts of PENDING and FAILED deliveries."""

from dataclasses import dataclass
from typing import Callable

from ..domain.field_order import DELIVERY
from ..domain.integration_status import state_text, supplier_text
from . import keys, rendered, table
from .deliveries import INTEGRATION, LEGACY, READ_NAMES, from_summary
from .paging import Page, query_page


@dataclass(frozen=True)
class IntegrationCounts:
    pending: int
    failed: int
    oldest_pending: tuple[int, str] | None  # (delivery id, since)


def _summary_text(item: dict) -> str:
    """A summary as the low-level client answers it, as the JSON a list shows: no parsing, no re-rendering."""
    return rendered.low_level_text(item, DELIVERY, LEGACY)


_REQUESTED_TEXT = state_text(None)


def _low_level_state_text(item: dict) -> str:
    """The integration state's text of a low-level item, without botocore's deserializer: the stored text, or
    rendered from a map of strings stored before it."""
    state = item.get(INTEGRATION)
    if state is None:
        return _REQUESTED_TEXT
    if "S" in state:
        return state["S"]
    return state_text({name: value["S"] for name, value in state["M"].items()})


def _supplier_text(item: dict) -> str:
    """A summary as supplier lists show it: its stored JSON text with the integration state's text (kept beside
    the summary's, never in it, so customers' lists of the same text never show it) appended."""
    return supplier_text(_summary_text(item), _low_level_state_text(item))


def _listed(
    account: str,
    query: str,
    limit: int,
    cursor: str | None,
    pk: str,
    index: str | None,
    forward: bool,
    supplier: bool,
    key_of: Callable[[int], dict] | None,
) -> Page:
    """A page of summaries as their JSON text, from one partition of the table or an index; on supplier pages
    with the integration state. Only the document (and the state) are read: every attribute of a Query's items
    costs botocore a parse. `key_of` gives a delivery's keys in this partition from its id, so the cursor is made
    from the last summary's id; without it (keys not made from the id alone) the keys are read too."""
    key = f"{index}PK" if index else "PK"
    index_keys = f", {index}PK, {index}SK" if index else ""
    read_keys = "" if key_of is not None else f"PK, SK{index_keys}, "
    decode = _supplier_text if supplier else _summary_text
    return query_page(
        account,
        query,
        limit,
        cursor,
        index=index,
        decode=decode,
        last_key=(lambda text: table.to_item(key_of(int(rendered.id_of(text))))) if key_of is not None else None,
        KeyConditionExpression=f"{key} = :pk",
        ExpressionAttributeValues=table.values(pk=pk),
        ProjectionExpression=f"{read_keys}#body, #doc" + (", #integration" if supplier else ""),
        ExpressionAttributeNames={**READ_NAMES, **({"#integration": INTEGRATION} if supplier else {})},
        ScanIndexForward=forward,
    )


def list_page(account: str, limit: int, cursor: str | None, status: str | None = None) -> Page:
    """Newest first, as the JSON texts supplier reads show; with a status, only deliveries in it (read from the
    status index)."""
    if status is None:
        pk = keys.deliveries_pk(account)
        return _listed(
            account, "deliveries", limit, cursor, pk, None, False, True, lambda i: keys.delivery_key(account, i)
        )
    pk = keys.deliveries_by_status_pk(account, status)
    return _listed(
        account,
        f"deliveries?status={status}",
        limit,
        cursor,
        pk,
        keys.GSI1,
        False,
        True,
        lambda i: {**keys.delivery_key(account, i), **keys.delivery_status_gsi(account, status, i)},
    )


def list_customer_page(account: str, customer_id: str, limit: int, cursor: str | None) -> Page:
    """One customer's deliveries, newest first, as JSON texts."""
    pk = keys.deliveries_by_customer_pk(account, customer_id)
    return _listed(
        account,
        f"customer-deliveries?customer={customer_id}",
        limit,
        cursor,
        pk,
        keys.GSI2,
        False,
        False,
        lambda i: {**keys.delivery_key(account, i), **keys.delivery_customer_gsi(account, customer_id, i)},
    )


def list_integration_page(account: str, status: str, limit: int, cursor: str | None) -> Page:
    """The deliveries in one integration state, in the order they entered it (oldest first), as the JSON texts
    supplier reads show: full pages from the state's own index partition, no filter. Its index key holds when the
    delivery entered the state, which the summary does not show, so the keys are read."""
    pk = keys.deliveries_by_integration_pk(account, status)
    return _listed(account, f"deliveries?integration={status}", limit, cursor, pk, keys.GSI3, True, True, None)


def integration_counts(account: str, oldest_of: str) -> IntegrationCounts:
    """The account's counts (its shards summed, read in one TransactGetItems: one serialisable snapshot, so the sum
    is exact) and the oldest delivery of state `oldest_of` (one Query of its index partition, Limit 1)."""
    counts = {"pending": 0, "failed": 0}
    for shard in table.read_together(keys.integration_counts_keys(account)):
        for name in counts:
            counts[name] += int(shard.get(name, 0))
    oldest = table.first_in_index(keys.GSI3, keys.deliveries_by_integration_pk(account, oldest_of))
    first = from_summary(oldest, None) if oldest is not None else None
    return IntegrationCounts(
        int(counts.get("pending", 0)),
        int(counts.get("failed", 0)),
        (int(first.delivery["id"]), first.integration_since) if first is not None else None,
    )
