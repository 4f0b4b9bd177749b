"""Deposit types and balances (decisions §15).

- The definitions of all deposit types of an account are one item (`keys.deposit_types_key`): a map `types` of
  id -> {"name", "price"} and `count`. At most 200 types of at most ~450 bytes fit far inside 400 KB, and an
  order reads them in the BatchGetItem it makes anyway (store/order_context.py).
- Each type also has its own item (`keys.deposit_type_key`), created and deleted with the type in one
  transaction: `refs` counts the products whose vessel or bundles name the type. A product write moves only the
  items of the types it names (or named), conditional on their existing, so writes of products naming different
  types, or none, share no item (issue 25); a type's delete is conditional on `refs = 0`, so no product can
  name a deleted type. Adjusting a balance checks the type's own item too.
- A customer's balances are one item (`keys.deposit_balance_key`), one number attribute per type (`D#<id>`),
  moved with ADD inside the receive's (or the adjustment's) transaction: concurrent receives of one customer add
  up, none is lost.
"""

import datetime as dt
from dataclasses import dataclass

from . import batch, keys, table
from .operations import Operation
from .outcomes import Gone, InUse, Refusal, Stale

BALANCE_PREFIX = "D#"
_NEW = "attribute_not_exists(PK)"


class Retiring(Refusal):
    """The type is being deleted: its balances may not move by adjustment now."""


RETIRING = "retiring"  # set on a type while its DELETE checks what still names it


def types_of(item: dict | None, usable_only: bool = False) -> dict[str, dict]:
    """The types of the types item; `usable_only` leaves out those being deleted (new names of them are refused)."""
    found = ((item or {}).get("types") or {}).items()
    return {d: {"name": t["name"], "price": int(t["price"])} for d, t in found if not (usable_only and t.get(RETIRING))}


def public(deposit_id: str, entry: dict) -> dict:
    return {"id": deposit_id, "name": entry["name"], "price": int(entry["price"])}


def types_in(found: dict, account: str) -> dict[str, dict]:
    """The deposit types an order may name, in the items of a BatchGetItem that asked for `keys.deposit_types_key`."""
    return types_of(batch.pick(found, keys.deposit_types_key(account)), usable_only=True)


def read_types(account: str, consistent: bool = False, usable_only: bool = False) -> dict[str, dict]:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.deposit_types_key(account)), ConsistentRead=consistent
    )
    return types_of(table.from_item(response["Item"]) if "Item" in response else None, usable_only)


def _created(account: str, deposit_id: str) -> Operation:
    """The Put of a new type's own item, no product naming it yet."""
    item = {**keys.deposit_type_key(account, deposit_id), "refs": 0}
    return Operation(
        {"Put": {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": _NEW}}, Stale()
    )


def _update(account: str, expression: str, condition: str, names: dict, values: dict) -> dict:
    return {
        "TableName": table.name(),
        "Key": table.to_item(keys.deposit_types_key(account)),
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": {"#t": "types", **names},
        "ExpressionAttributeValues": table.values(**values),
    }


@dataclass(frozen=True)
class Definitions:
    """The account's types as a write of them starts from."""

    types: dict[str, dict]  # id -> {"name", "price"}
    exists: bool  # whether the types item exists
    count: int


def read_definitions(account: str) -> Definitions:
    types_key = keys.deposit_types_key(account)
    item = batch.pick(batch.get_items([types_key], consistent=True), types_key)
    return Definitions(types_of(item), item is not None, int((item or {}).get("count", 0)))


def putting(account: str, deposit_id: str, name: str, price: int, read: Definitions) -> list[Operation]:
    """Create or change a type, conditional on the definitions read (Stale: they changed meanwhile, read again)."""
    entry = {"name": name, "price": price}
    if not read.exists:
        whole = {**keys.deposit_types_key(account), "types": {deposit_id: entry}, "count": 1}
        put = {"TableName": table.name(), "Item": table.to_item(whole), "ConditionExpression": _NEW}
        return [Operation({"Put": put}, Stale()), _created(account, deposit_id)]
    if deposit_id not in read.types:
        added = _update(
            account,
            "SET #t.#d = :entry ADD #count :one",
            "attribute_not_exists(#t.#d) AND #count = :seen",
            {"#d": deposit_id, "#count": "count"},
            {"entry": entry, "one": 1, "seen": read.count},
        )
        return [Operation({"Update": added}, Stale()), _created(account, deposit_id)]
    changed = _update(
        account,
        "SET #t.#d.#n = :name, #t.#d.#p = :price",
        "attribute_exists(#t.#d)",
        {"#d": deposit_id, "#n": "name", "#p": "price"},
        {"name": name, "price": price},
    )
    return [Operation({"Update": changed}, Stale())]


def _in_use_or_gone(account: str, deposit_id: str):
    """What a refused mark or delete of a type means, read after the refusal: InUse while the type is still there
    (a product names it), else Gone."""
    return lambda: InUse() if deposit_id in read_types(account, consistent=True) else Gone()


def retiring(account: str, deposit_id: str, retiring: bool = True) -> list[Operation]:
    """Mark a type no product names as being deleted (or no longer, `retiring` False), in its definition and its
    own item: from then on adjustments of it are refused, and orders and responses do not take it as new empties.
    Nothing a GET shows changes (no Change to record)."""
    expression = "SET #t.#d.#r = :yes" if retiring else "REMOVE #t.#d.#r"
    values = {"yes": True} if retiring else {}
    marked = _update(account, expression, "attribute_exists(#t.#d)", {"#d": deposit_id, "#r": RETIRING}, values)
    if not values:
        del marked["ExpressionAttributeValues"]
    own = {
        "TableName": table.name(),
        "Key": table.to_item(keys.deposit_type_key(account, deposit_id)),
        "UpdateExpression": "SET #r = :yes" if retiring else "REMOVE #r",
        "ConditionExpression": "refs = :zero" if retiring else "attribute_exists(PK)",
        "ExpressionAttributeNames": {"#r": RETIRING},
        "ExpressionAttributeValues": table.values(**({"zero": 0, "yes": True} if retiring else {})),
    }
    if not retiring:
        del own["ExpressionAttributeValues"]
    refused = _in_use_or_gone(account, deposit_id)
    return [Operation({"Update": marked}, refused), Operation({"Update": own}, refused)]


class Unusable(Refusal):
    """A type a write names (usable_check) was deleted, or is being deleted, since its read."""


def usable_check(account: str, deposit_ids) -> list[Operation]:
    """The check that each of the types (at most limits.EMPTIES: the expression stays within DynamoDB's 4 KB)
    exists and is not being deleted when the write that names them commits (Unusable); [] for none."""
    ids = sorted(set(deposit_ids))
    if not ids:
        return []
    names = {"#t": "types", "#r": RETIRING, **{f"#e{i}": d for i, d in enumerate(ids)}}
    condition = " AND ".join(
        f"attribute_exists(#t.#e{i}) AND attribute_not_exists(#t.#e{i}.#r)" for i in range(len(ids))
    )
    return [Operation(_check(keys.deposit_types_key(account), condition, names), Unusable(), rank=1)]


def deleting(account: str, deposit_id: str) -> list[Operation]:
    """Delete a type no product names (InUse, Gone). (Balances are checked before: any_balance.)"""
    write = _update(
        account,
        "REMOVE #t.#d ADD #count :minus",
        "attribute_exists(#t.#d)",
        {"#d": deposit_id, "#count": "count"},
        {"minus": -1},
    )
    unnamed = {
        "TableName": table.name(),
        "Key": table.to_item(keys.deposit_type_key(account, deposit_id)),
        "ConditionExpression": "refs = :zero",
        "ExpressionAttributeValues": table.values(zero=0),
    }
    refused = _in_use_or_gone(account, deposit_id)
    return [Operation({"Update": write}, refused), Operation({"Delete": unnamed}, refused)]


def any_balance(account: str, deposit_id: str) -> bool:
    """Whether any customer's balance of the type is not zero: a Query of the account's balance items that
    DynamoDB filters, reading only their keys."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
        "FilterExpression": "attribute_exists(#b) AND #b <> :zero",
        "ProjectionExpression": "PK, SK",
        "ExpressionAttributeNames": {"#b": BALANCE_PREFIX + deposit_id},
        "ExpressionAttributeValues": table.values(
            pk=keys.account_pk(account), prefix=keys.DEPOSIT_BALANCE_PREFIX, zero=0
        ),
        "ConsistentRead": True,
    }
    while True:
        response = table.client().query(**request)
        if response.get("Items"):
            return True
        if "LastEvaluatedKey" not in response:
            return False
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


# Products: the reference counts, moved in the product's own transaction.


def refs_operations(account: str, deltas: dict[str, int], refused=None) -> list[Operation]:
    """The transaction items that move the reference counts of deposit types by `deltas`, one per type that
    moves, in id order; each conditional on its type existing when it commits (a type deleted meanwhile
    cancels the write: Stale, read again and validate again, unless `refused` says otherwise)."""
    return [
        Operation({"Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.deposit_type_key(account, deposit_id)),
            "UpdateExpression": "ADD refs :n",
            "ConditionExpression": "attribute_exists(PK)",
            "ExpressionAttributeValues": table.values(n=deltas[deposit_id]),
        }}, refused or Stale(), rank=1)
        for deposit_id in sorted(deltas)
        if deltas[deposit_id]
    ]  # fmt: skip


def product_operations(account: str, before: set[str], after: set[str], refused=None) -> list[Operation]:
    """The reference counts of one product write: +1 for each type it names now and did not, -1 for each it no
    longer names; the types it keeps naming are not touched."""
    return refs_operations(account, {**{d: 1 for d in after - before}, **{d: -1 for d in before - after}}, refused)


# Balances.


def _balance_update(account: str, customer_id: str, moves: dict[str, int]) -> dict | None:
    moves = {d: n for d, n in moves.items() if n}
    if not moves:
        return None
    names = {f"#b{i}": BALANCE_PREFIX + d for i, d in enumerate(sorted(moves))}
    values = {f"b{i}": moves[d] for i, d in enumerate(sorted(moves))}
    return {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.deposit_balance_key(account, customer_id)),
            "UpdateExpression": "ADD " + ", ".join(f"#b{i} :b{i}" for i in range(len(moves))) + ", #moved :one",
            "ExpressionAttributeNames": {**names, "#moved": MOVED},
            "ExpressionAttributeValues": table.values(**values, one=1),
        }
    }


def moving_balances(account: str, customer_id: str, moves: dict[str, int]) -> Operation | None:
    """Add `moves` ({deposit id: count}) to the customer's balances (None: nothing moves). Unconditional: moves
    of one customer at once add up, none is lost."""
    update = _balance_update(account, customer_id, moves)
    return Operation(update) if update is not None else None


def held_in(item: dict | None) -> dict[str, int]:
    return {k[len(BALANCE_PREFIX) :]: int(v) for k, v in (item or {}).items() if k.startswith(BALANCE_PREFIX)}


def balances_keys(account: str, customer_id: str) -> list[dict]:
    """What GET /customers/:id/deposits reads, in one BatchGetItem: the customer, the types, the balances."""
    return [
        keys.customer_key(account, customer_id),
        keys.deposit_types_key(account),
        keys.deposit_balance_key(account, customer_id),
    ]


def read_balances(account: str, customer_id: str) -> tuple[dict[str, dict], dict[str, int]] | None:
    """(types, balances) of an existing customer, read consistently in one request; None: no such customer."""
    customer, types, balance = balances_keys(account, customer_id)
    found = batch.get_items([customer, types, balance], consistent=True)
    if batch.pick(found, customer) is None:
        return None
    return types_of(batch.pick(found, types)), held_in(batch.pick(found, balance))


def _check(key: dict, condition: str, names: dict | None = None, values: dict | None = None) -> dict:
    check = {"TableName": table.name(), "Key": table.to_item(key), "ConditionExpression": condition}
    if names:
        check["ExpressionAttributeNames"] = names
    if values:
        check["ExpressionAttributeValues"] = table.values(**values)
    return {"ConditionCheck": check}


MOVED = "moved"  # how many moves a customer's balances item has taken: what a keyed adjustment is conditional on


@dataclass(frozen=True)
class Balances:
    """A customer's balances as an adjustment starts from them (read_for_adjustment)."""

    types: dict[str, dict]
    held: dict[str, int]
    retiring: frozenset  # the types being deleted
    moved: int | None  # how many moves the balances item has taken (None: no item yet)


class Unknown(Refusal):
    """The deposit type does not exist."""


def read_for_adjustment(account: str, customer_id: str) -> Balances | None:
    """The types and the customer's balances, read consistently in one request; None: no such customer."""
    customer_key, types_key, balance_key = balances_keys(account, customer_id)
    found = batch.get_items([customer_key, types_key, balance_key], consistent=True)
    if batch.pick(found, customer_key) is None:
        return None
    item, balance = batch.pick(found, types_key), batch.pick(found, balance_key)
    retiring = frozenset(d for d, t in ((item or {}).get("types") or {}).items() if t.get(RETIRING))
    moved = (balance or {}).get(MOVED)
    return Balances(types_of(item), held_in(balance), retiring, int(moved) if moved is not None else None)


def adjusting(
    account: str,
    customer_id: str,
    deposit_id: str,
    count: int,
    message: str,
    now: dt.datetime,
    read: Balances,
    keyed: bool = False,
) -> list[Operation]:
    """Add `count` to one balance, with its statement record (the type's name and price as read, and the message).
    Gone when the customer went, Unknown when the type did; Stale when the type's name or price changed or it is
    being deleted (read again). `keyed`: conditional on the balances being as read too, so an Idempotency-Key answer
    recorded with it is exactly what was written."""
    from .deposit_statement import record_operation

    customer_key, types_key, _ = balances_keys(account, customer_id)
    current = read.types[deposit_id]
    moved = _balance_update(account, customer_id, {deposit_id: count})
    valued = _check(
        types_key, "#t.#d.#n = :name AND #t.#d.#p = :price AND attribute_not_exists(#t.#d.#r)",
        {"#t": "types", "#d": deposit_id, "#n": "name", "#p": "price", "#r": RETIRING},
        {"name": current["name"], "price": current["price"]},
    )  # fmt: skip
    if keyed:
        update = moved["Update"]
        update["ConditionExpression"] = "attribute_not_exists(#moved)" if read.moved is None else "#moved = :seen"
        if read.moved is not None:
            update["ExpressionAttributeValues"].update(table.values(seen=read.moved))
    record = record_operation(account, customer_id, now, {deposit_id: {**current, "count": count}}, message=message)
    return [
        Operation(moved, Stale()),
        record,
        Operation(_check(customer_key, "attribute_exists(PK)"), Gone(), rank=2),
        Operation(_check(keys.deposit_type_key(account, deposit_id), "attribute_exists(PK)"), Unknown(), rank=1),
        Operation(valued, Stale()),
    ]
