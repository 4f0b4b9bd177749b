"""What a repository gives the unit of work (store/unit_of_work.py): one transaction item and what a refusal of
it means; and the one door every conditional write of the store goes through (`write`, `commit`), whose `refusal`
turns DynamoDB's answer into the outcome the refused item declared, found by the item's key, never by its position.
Its own module, so that what the unit of work imports to mark changes (store/feed_resources.py, which reads
resources through the repositories) never leads back to it."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from . import table

if TYPE_CHECKING:  # the outcomes are loaded by a refusal, not by a write (tests/api/test_cold_path.py)
    from .outcomes import Refusal

TOO_LARGE_CODE = "ValidationError"  # a transaction item's code when it would pass 400 KB


@dataclass(frozen=True)
class Operation:
    """One TransactWriteItems entry ({"Put": ...}, {"Update": ...}, {"Delete": ...}, {"ConditionCheck": ...}) and
    what a failed condition on it means: an outcome, a function that tells which (called after the failure: it may
    read), or None when it has no condition that may fail. When several fail, the highest `rank` answers (the first
    added among equals). `oversized`: the outcome of the item refused for passing 400 KB, when its writer plans
    for that."""

    item: dict
    refused: Refusal | Callable[[], Refusal] | None = None
    rank: int = 0
    oversized: Refusal | None = None  # what DynamoDB's ValidationError on this item (past 400 KB) means, if planned

    @property
    def key(self) -> tuple[str, str]:
        return table.item_key(self.item)


def write(operation: Operation, returning: str | None = None) -> Refusal | dict | None:
    """One operation on its own: None when written (with `returning`, DynamoDB's ReturnValues such as "ALL_NEW":
    the item's attributes as it answered them, decoded), or the outcome of its refusal."""
    return commit([operation.item], [operation], returning)


def commit(items: list[dict], declared: Sequence[Operation], returning: str | None = None) -> Refusal | dict | None:
    """Write `items` at once (a single write when it is one Put, Update or Delete, else one TransactWriteItems):
    None (or the returned attributes of a single write), or the refusal `declared` says it means (`refusal`)."""
    ddb = table.client()
    ((kind, request),) = items[0].items()
    single = {"Put": ddb.put_item, "Update": ddb.update_item, "Delete": ddb.delete_item}
    try:
        if len(items) == 1 and kind in single:
            response = single[kind](**request, **({"ReturnValues": returning} if returning else {}))
            return table.from_item(response.get("Attributes", {})) if returning else None
        # One token: botocore's own retries of this call are then idempotent.
        ddb.transact_write_items(TransactItems=items, ClientRequestToken=uuid.uuid4().hex)
    except ClientError as error:
        return refusal(error, items, declared)
    return None


def refusal(error: ClientError, items: list[dict], declared: Sequence[Operation]) -> Refusal:
    """The outcome of a refused write of `items`: a failed condition is the refusal its operation declared (the
    highest rank; products gone on several, one answer naming them all), a conflict is Contended, an item past
    400 KB its declared `oversized`. Anything else is raised: table.WriteFailed for a cancellation no one
    declared, DynamoDB's own error otherwise."""
    from .outcomes import Contended, ProductsGone, TooLarge

    codes = table.cancellation_codes(error)
    if not codes:  # a single write's refusal, or an error of the whole call
        if table.is_conditional_failure(error):
            codes = [table.CONDITION_FAILED]
        elif table.is_transaction_conflict(error):
            return Contended()
        elif table.is_too_large(error):
            sizes = [op.oversized for op in declared if op.oversized is not None]
            return sizes[0] if len(items) == 1 and sizes else TooLarge()
        else:
            raise error
    reasons = dict(zip((table.item_key(item) for item in items), codes))
    failed = [op for op in declared if reasons.get(op.key) == table.CONDITION_FAILED and op.refused]
    if failed:
        top = max(operation.rank for operation in failed)
        first, *others = [operation.refused for operation in failed if operation.rank == top]
        first = _evaluated(first)  # a callable is asked once, after the failure: it may read
        if isinstance(first, ProductsGone):
            gone = [first, *map(_evaluated, others)]
            if all(isinstance(refused, ProductsGone) for refused in gone):
                return ProductsGone(frozenset().union(*(refused.product_ids for refused in gone)))
        return first
    if table.CONDITION_FAILED not in reasons.values():
        if table.TRANSACTION_CONFLICT in reasons.values():
            return Contended()
        for operation in declared:
            if operation.oversized is not None and reasons.get(operation.key) == TOO_LARGE_CODE:
                return operation.oversized
    raise table.WriteFailed("a write", reasons) from error


def _evaluated(refused: Refusal | Callable[[], Refusal]) -> Refusal:
    return refused() if callable(refused) else refused
