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
import time

from botocore.exceptions import ClientError

from ..domain.feed import Change, ChangeType
from ..domain.limits import DEPOSIT_TYPES
from ..domain.retry import attempts, back_off
from . import batch, feed, keys, table
from .outcomes import Contended, Gone, InUse, LostClaim, Refusal, Stale

BALANCE_PREFIX = "D#"
PUT_ATTEMPTS = 5


class Full(Refusal):
    """The account holds the most deposit types it may."""


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


def _created(account: str, deposit_id: str) -> dict:
    """The Put of a new type's own item, no product naming it yet."""
    item = {**keys.deposit_type_key(account, deposit_id), "refs": 0}
    return {
        "Put": {
            "TableName": table.name(),
            "Item": table.to_item(item),
            "ConditionExpression": "attribute_not_exists(PK)",
        }
    }


def _update(account: str, expression: str, condition: str, names: dict, values: dict) -> dict:
    return {
        "TableName": table.name(),
        "Key": table.to_item(keys.deposit_types_key(account)),
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": {"#t": "types", **names},
        "ExpressionAttributeValues": table.values(**values),
    }


def put(account: str, deposit_id: str, name: str, price: int, now: dt.datetime) -> dict | Full | Contended:
    """Create or change a type; the same name and price again write nothing (and append no feed entry).
    Contended: others kept changing the account's types between our read and our write, PUT_ATTEMPTS times."""
    types_key = keys.deposit_types_key(account)
    for _ in range(PUT_ATTEMPTS):
        found = batch.get_items([types_key], consistent=True)
        item = batch.pick(found, types_key)
        types = types_of(item)
        current = types.get(deposit_id)
        if current is not None and current["name"] == name and current["price"] == price:
            return public(deposit_id, current)
        if current is None and len(types) >= DEPOSIT_TYPES:
            return Full()
        if item is None:
            whole = {**types_key, "types": {deposit_id: {"name": name, "price": price}}, "count": 1}
            writes = [
                {
                    "Put": {
                        "TableName": table.name(),
                        "Item": table.to_item(whole),
                        "ConditionExpression": "attribute_not_exists(PK)",
                    }
                }
            ]
            writes.append(_created(account, deposit_id))
        elif current is None:
            writes = [
                {
                    "Update": _update(
                        account,
                        "SET #t.#d = :entry ADD #count :one",
                        "attribute_not_exists(#t.#d) AND #count = :seen",
                        {"#d": deposit_id, "#count": "count"},
                        {"entry": {"name": name, "price": price}, "one": 1, "seen": int(item.get("count", 0))},
                    )
                },
                _created(account, deposit_id),
            ]
        else:
            writes = [
                {
                    "Update": _update(
                        account,
                        "SET #t.#d.#n = :name, #t.#d.#p = :price",
                        "attribute_exists(#t.#d)",
                        {"#d": deposit_id, "#n": "name", "#p": "price"},
                        {"name": name, "price": price},
                    )
                }
            ]
        kind = ChangeType.DEPOSIT_UPDATED if current is not None else ChangeType.DEPOSIT_CREATED
        try:
            feed.commit(account, writes, [Change(kind, deposit_id)], now)
            return {"id": deposit_id, "name": name, "price": price}
        except ClientError as error:
            if table.CONDITION_FAILED not in table.cancellation_codes(error):
                raise
    return Contended()


def retire(account: str, deposit_id: str, retiring: bool = True) -> None | Gone | InUse:
    """Mark a type no product names as being deleted (or no longer, `retiring` False), in its definition and its
    own item: from then on adjustments of it are refused, and orders and responses do not take it as new empties.
    No feed entry: nothing a GET shows changes."""
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
    try:
        table.client().transact_write_items(TransactItems=[{"Update": marked}, {"Update": own}])
    except ClientError as error:
        if table.CONDITION_FAILED not in table.cancellation_codes(error):
            raise
        return InUse() if deposit_id in read_types(account, consistent=True) else Gone()
    return None


def usable_check(account: str, deposit_ids) -> list[dict]:
    """The ConditionCheck that each of the types (at most limits.EMPTIES: the expression stays within DynamoDB's 4 KB)
    exists and is not being deleted when the write that names them commits; [] for none."""
    ids = sorted(set(deposit_ids))
    if not ids:
        return []
    names = {"#t": "types", "#r": RETIRING, **{f"#e{i}": d for i, d in enumerate(ids)}}
    condition = " AND ".join(
        f"attribute_exists(#t.#e{i}) AND attribute_not_exists(#t.#e{i}.#r)" for i in range(len(ids))
    )
    return [_check(keys.deposit_types_key(account), condition, names)]


def refused_unusable(failed: table.WriteFailed, account: str) -> bool:
    """Whether a write with a usable_check failed on it: a type it names was deleted, or is being deleted, since
    its read."""
    return failed.reasons.get(table.key_of(keys.deposit_types_key(account))) == table.CONDITION_FAILED


def delete(account: str, deposit_id: str, now: dt.datetime) -> None | Gone | InUse:
    """Delete a type no product names; None when deleted. (Balances are checked before: any_balance.)"""
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
    try:
        feed.commit(
            account, [{"Update": write}, {"Delete": unnamed}], [Change(ChangeType.DEPOSIT_DELETED, deposit_id)], now
        )
    except ClientError as error:
        if table.CONDITION_FAILED not in table.cancellation_codes(error):
            raise
        return InUse() if deposit_id in read_types(account, consistent=True) else Gone()
    return None


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


def refs_operations(account: str, deltas: dict[str, int]) -> list[dict]:
    """The transaction items that move the reference counts of deposit types by `deltas`, one per type that
    moves, in id order; each conditional on its type existing when it commits (a type deleted meanwhile
    cancels the write)."""
    return [
        {"Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.deposit_type_key(account, deposit_id)),
            "UpdateExpression": "ADD refs :n",
            "ConditionExpression": "attribute_exists(PK)",
            "ExpressionAttributeValues": table.values(n=deltas[deposit_id]),
        }}
        for deposit_id in sorted(deltas)
        if deltas[deposit_id]
    ]  # fmt: skip


def product_operations(account: str, before: set[str], after: set[str]) -> list[dict]:
    """The reference counts of one product write: +1 for each type it names now and did not, -1 for each it no
    longer names; the types it keeps naming are not touched."""
    return refs_operations(account, {**{d: 1 for d in after - before}, **{d: -1 for d in before - after}})


# Balances.


def balance_operation(account: str, customer_id: str, moves: dict[str, int]) -> dict | None:
    """The transaction item that adds `moves` ({deposit id: count}) to the customer's balances."""
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
ADJUST_ATTEMPTS = 30


def adjust(
    account: str, customer_id: str, deposit_id: str, count: int, message: str, now: dt.datetime, answer=None
) -> dict | Gone | Stale | Contended | LostClaim | Retiring:
    """Add `count` to one balance, with its statement record (the type's name and price now, and the message) and
    its feed entry; (types, balances) as they are after it. Gone when the customer does not exist, Stale when the
    type does not (both checked in the same transaction); Contended when others kept writing between our read and
    our write. `answer(types, balances)`: the Idempotency-Key completion to record in the same write (§11), which
    is then conditional on the balances being as read, so the answer recorded is exactly what was written."""
    from .deposit_statement import record_operation
    from .idempotency import complete_operation

    customer_key, types_key, balance_key = balances_keys(account, customer_id)
    for attempt in attempts(None, ADJUST_ATTEMPTS, 0):  # bounded by count: the store reads no clock
        found = batch.get_items([customer_key, types_key, balance_key], consistent=True)
        if batch.pick(found, customer_key) is None:
            return Gone()
        types, balance = types_of(batch.pick(found, types_key)), batch.pick(found, balance_key)
        current = types.get(deposit_id)
        if current is None:
            return Stale()
        held = held_in(balance)
        held[deposit_id] = held.get(deposit_id, 0) + count
        moved = balance_operation(account, customer_id, {deposit_id: count})
        if ((batch.pick(found, types_key) or {}).get("types") or {}).get(deposit_id, {}).get(RETIRING):
            return Retiring()
        valued = _check(
            types_key, "#t.#d.#n = :name AND #t.#d.#p = :price AND attribute_not_exists(#t.#d.#r)",
            {"#t": "types", "#d": deposit_id, "#n": "name", "#p": "price", "#r": RETIRING},
            {"name": current["name"], "price": current["price"]},
        )  # fmt: skip
        operations = [
            moved,
            record_operation(account, customer_id, now, {deposit_id: {**current, "count": count}}, message=message),
            _check(customer_key, "attribute_exists(PK)"),
            _check(keys.deposit_type_key(account, deposit_id), "attribute_exists(PK)"),
            valued,
        ]
        if answer is not None:
            seen = (balance or {}).get(MOVED)
            update = moved["Update"]
            update["ConditionExpression"] = "attribute_not_exists(#moved)" if seen is None else "#moved = :seen"
            if seen is not None:
                update["ExpressionAttributeValues"].update(table.values(seen=int(seen)))
            operations.append(complete_operation(answer(types, held)))
        change = Change(ChangeType.CUSTOMER_DEPOSITS_UPDATED, customer_id, customer_id=customer_id)
        try:
            feed.commit(account, operations, [change], now)
            return {"types": types, "held": held}
        except ClientError as error:
            reasons = table.cancellation_reasons(error, operations)
            if table.CONDITION_FAILED not in reasons.values():
                raise
            if reasons.get(table.key_of(customer_key)) == table.CONDITION_FAILED:
                return Gone()
            if reasons.get(table.key_of(keys.deposit_type_key(account, deposit_id))) == table.CONDITION_FAILED:
                return Stale()
            if answer is not None and reasons.get(table.item_key(operations[-1])) == table.CONDITION_FAILED:
                return LostClaim()
        back_off(attempt, time.sleep, first=0.002, cap=0.05)
    return Contended()
