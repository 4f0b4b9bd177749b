"""The write operations of a delivery (store/deliveries.py describes its items), for a service's unit of work:
placing an order's deliveries, updating one (its document, its integration state, or both), and the first
integration state of one stored before states existed (a migration). The account's integration counts move in
the same transaction, unconditionally: the delivery's own conditional item makes them count once.
"""

from __future__ import annotations

from ..domain.delivery_summary import without_items
from ..domain.field_order import DELIVERY
from ..domain.integration_status import state_text
from ..domain.rendering import json_text
from . import keys, rendered, table
from .deliveries import DEPOSIT_BASIS, INTEGRATION, LEGACY, REVISION, IntegrationWrite
from .operations import Operation
from .outcomes import ProductsGone, Refusal, Stale, Taken


def _summary_attributes(account: str, delivery: dict) -> dict:
    return {
        rendered.BODY: rendered.pack(without_items(delivery), DELIVERY),
        "status": delivery["status"],
        **keys.delivery_status_gsi(account, delivery["status"], delivery["id"]),
    }


def _integration_attributes(account: str, delivery_id: int, write: IntegrationWrite) -> dict:
    return {
        INTEGRATION: state_text(write.state),
        "integration_since": write.since,
        **keys.delivery_integration_gsi(account, write.state["status"], write.since, delivery_id),
    }


def counting(account: str, delivery_id: int, counts: dict) -> Operation | None:
    """Add `counts` to the account's integration counts, in the shard of `delivery_id` (so writes of other
    deliveries rarely share it); None when nothing changes. Unconditional: the delivery's own conditional item in
    the same transaction makes it count once."""
    counts = {name: n for name, n in counts.items() if n}
    if not counts:
        return None
    names = {f"#{name}": name for name in counts}
    return Operation(
        {
            "Update": {
                "TableName": table.name(),
                "Key": table.to_item(keys.integration_counts_key(account, delivery_id % keys.INTEGRATION_COUNT_SHARDS)),
                "UpdateExpression": "ADD " + ", ".join(f"#{name} :{name}" for name in counts),
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": table.values(**counts),
            }
        }
    )


def _creating(
    account: str, delivery: dict, integration: IntegrationWrite | None, basis: dict | None = None
) -> list[Operation]:
    """Create a delivery (given in full, with its request items): Stale when its id is taken (the ids were just
    allocated to us: only a broken counter gets there)."""
    delivery_id = delivery["id"]
    customer_id = delivery["request"].get("customer_id")
    summary = {
        **keys.delivery_key(account, delivery_id),
        **_summary_attributes(account, delivery),
        "customer_id": customer_id,
        "version": 0,
    }
    if integration is not None:
        summary.update(_integration_attributes(account, delivery_id, integration))
    if basis is not None:  # beside the document, never in it: lists do not show deposits (decisions §15)
        summary[DEPOSIT_BASIS] = json_text(basis)
    if customer_id is not None:
        summary.update(keys.delivery_customer_gsi(account, customer_id, delivery_id))
    items = {**keys.delivery_items_key(account, delivery_id), "items": delivery["request"]["items"]}
    return [
        Operation(
            {
                "Put": {
                    "TableName": table.name(),
                    "Item": table.to_item(item),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            },
            Stale(),
            rank=1,
        )
        for item in (summary, items)
    ]


def marking_used(
    account: str, product_id: str, revision: str | None = None, already: bool = False, refused: Refusal | None = None
) -> Operation:
    """Flag a product as used by a delivery (so it can no longer be deleted); with `revision`, only while the
    product is still as read. ProductsGone naming it otherwise (the unit of work names them all), answered first,
    or `refused` (a substitute: Changed, read again). `already`: it was read flagged: a check that it still is (no
    write, so orders of one product placed at once do not contend for its item; a product deleted and made again
    meanwhile has no flag, and the order plans again)."""
    condition, values = "attribute_exists(PK)", {"true": True}
    if revision is not None:
        condition, values = "rev = :rev", {**values, "rev": revision}
    request = {
        "TableName": table.name(),
        "Key": table.to_item(keys.product_key(account, product_id)),
        "ConditionExpression": condition + (" AND used = :true" if already else ""),
        "ExpressionAttributeValues": table.values(**values),
    }
    refused = refused or ProductsGone(frozenset({product_id}))
    if already:
        return Operation({"ConditionCheck": request}, refused, rank=2)
    return Operation({"Update": {**request, "UpdateExpression": "SET used = :true"}}, refused, rank=2)


def placing(
    account: str,
    deliveries: list[dict],
    used_products: list[str],
    integration: IntegrationWrite | None = None,
    *,
    bases: list[dict | None] | None = None,
    pinned: dict[str, str] | None = None,
    used_already: frozenset = frozenset(),
) -> list[Operation]:
    """Create the deliveries of one order with the "used" flags of their products and the integration counts.
    `integration` is each new delivery's state, its `counts` those of the whole order; `pinned`: products
    (id -> revision) that must still be as read (ProductsGone names them otherwise); `used_already`: products read
    with their flag set (checked, not written)."""
    bases = bases or [None] * len(deliveries)
    creates = [
        op for delivery, basis in zip(deliveries, bases) for op in _creating(account, delivery, integration, basis)
    ]
    counts = counting(account, deliveries[0]["id"], integration.counts) if integration is not None else None
    pinned = pinned or {}
    used = [marking_used(account, pid, pinned.get(pid), pid in used_already) for pid in used_products]
    return creates + ([counts] if counts is not None else []) + used


def updating(
    account: str,
    delivery_id: int,
    expected_version: int,
    delivery: dict | None,
    integration: IntegrationWrite | None,
    extra: dict | None = None,
) -> list[Operation]:
    """Store the changed delivery and/or its new integration state (and its counts) if nobody changed the
    delivery since `expected_version`: Stale otherwise, answered before any other refusal. The status index moves
    with the status, the integration worklist with the state, in the same write. `extra`: attributes of the
    summary to set too (an amendment's new deposit basis)."""
    changes = {}
    if delivery is not None:
        attributes = _summary_attributes(account, delivery)
        # The document as its JSON text; a summary stored before as a map (`doc`) loses the map (REMOVE below).
        changes.update(
            {rendered.BODY: attributes[rendered.BODY], "status": attributes["status"], "GSI1PK": attributes["GSI1PK"]}
        )
    if integration is not None:
        changes.update(_integration_attributes(account, delivery_id, integration))
    changes.update(extra or {})
    names = {f"#a{i}": name for i, name in enumerate(changes)}
    values = {f"a{i}": value for i, value in enumerate(changes.values())}
    sets = ", ".join(f"#a{i} = :a{i}" for i in range(len(changes)))
    # A summary without a revision yet showed its version: it starts from there.
    revision = "if_not_exists(#revision, :expected)" + (" + :one" if delivery is not None else "")
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.delivery_key(account, delivery_id)),
        "UpdateExpression": f"SET {sets}, #version = :next, #revision = {revision}"
        + (" REMOVE #doc" if delivery is not None else ""),
        "ConditionExpression": "#version = :expected",
        "ExpressionAttributeNames": {
            **names,
            "#version": "version",
            "#revision": REVISION,
            **({"#doc": LEGACY} if delivery else {}),
        },
        "ExpressionAttributeValues": table.values(
            **values, next=expected_version + 1, expected=expected_version, **({"one": 1} if delivery else {})
        ),
    }
    counts = counting(account, delivery_id, integration.counts) if integration is not None else None
    return [Operation({"Update": update}, Stale(), rank=3), *([counts] if counts is not None else [])]


def adding_integration(account: str, delivery_id: int, integration: IntegrationWrite) -> list[Operation]:
    """Give a delivery stored before integration states its first one, counted; Taken when it has one already
    (a second run of the migration, or a PUT in between). The version moves too, so a PUT or a customer change
    that read the delivery without a state writes nothing over it and is evaluated again (counted once)."""
    attributes = _integration_attributes(account, delivery_id, integration)
    names = {f"#a{i}": name for i, name in enumerate(attributes)}
    values = {f"a{i}": value for i, value in enumerate(attributes.values())}
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.delivery_key(account, delivery_id)),
        "UpdateExpression": "SET "
        + ", ".join(f"#a{i} = :a{i}" for i in range(len(attributes)))
        + ", #revision = if_not_exists(#revision, #version) ADD #version :one",
        "ConditionExpression": "attribute_exists(PK) AND attribute_not_exists(#integration)",
        "ExpressionAttributeNames": {
            **names,
            "#integration": "integration",
            "#version": "version",
            "#revision": REVISION,
        },
        "ExpressionAttributeValues": table.values(**values, one=1),
    }
    counts = counting(account, delivery_id, integration.counts)
    return [Operation({"Update": update}, Taken()), *([counts] if counts is not None else [])]
