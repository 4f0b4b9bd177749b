"""The unit of work (Cosmic Python's, on one DynamoDB TransactWriteItems): a service opens it, repositories give it
their operations, the service records the feed changes they make, and `commit` writes it all at once or nothing.

    with unit_of_work(account, now) as uow:
        uow.add(products.saving(...))
        uow.record(Change(ChangeType.PRODUCT_UPDATED, product_id))
        refused = uow.commit()  # None, or the outcome (store/outcomes.py) of the refusal

Leaving the `with` without commit writes nothing. The transaction holds the operations, with each recorded change
marked on its resource's item (store/feed_marks.py; the table's stream numbers it: docs/feed.md), and the
Idempotency-Key answer. Here, and nowhere else,
DynamoDB's refusal becomes an outcome: a failed condition is the refusal its operation declared, a conflict is
Contended, a lost claim LostClaim, a reason nobody declared table.WriteFailed.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.feed import Change
from . import feed_marks, table
from .outcomes import Contended, LostClaim, ProductsGone, Refusal, TooLarge

# A single write's call by its kind: a commit of one operation and nothing else costs half a transaction.
_SINGLE = {"Put": "put_item", "Update": "update_item", "Delete": "delete_item"}
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


class UnitOfWork:
    """One transaction of one account, at `now` (the time its feed entries say)."""

    def __init__(self, account: str, now: dt.datetime):
        self.account, self.now = account, now
        self.operations: list[Operation] = []
        self.changes: list[Change] = []
        self.committed = False

    def __enter__(self) -> UnitOfWork:
        return self

    def __exit__(self, *exc) -> None:
        self.operations, self.changes = [], []  # nothing commits on the way out

    def add(self, *operations: Operation | None) -> None:
        """A repository's operations (None: a builder that has nothing to write)."""
        self.operations += [operation for operation in operations if operation is not None]

    def record(self, *changes: Change) -> None:
        self.changes += changes

    def answer(self, claim) -> None:
        """The Idempotency-Key answer (store/idempotency.Completion), written only if the claim is still ours."""
        from . import idempotency

        record, *parts = idempotency.answer_items(claim)  # a long answer continues in parts of its own
        self.add(Operation(record, LostClaim(), rank=-1), *map(Operation, parts))

    def commit(self) -> Refusal | None:
        """Write everything in one transaction (one single write when it is one item): None, or the outcome of the
        refusal (nothing written)."""
        assert not self.committed, "a unit of work commits once"
        self.committed = True
        items = [operation.item for operation in self.operations]
        if self.changes:
            items = feed_marks.marked(self.account, items, self.changes, self.now)
        if not items:
            return None
        if len(items) == 1 and next(iter(items[0])) in _SINGLE:
            return self._single(items[0])
        return self._transact(items)

    def _single(self, item: dict) -> Refusal | None:
        ((kind, request),) = item.items()
        try:
            getattr(table.client(), _SINGLE[kind])(**request)
        except ClientError as error:
            if table.is_conditional_failure(error):
                return self._refusal({table.item_key(item): table.CONDITION_FAILED})
            if table.is_transaction_conflict(error):
                return Contended()
            if table.is_too_large(error):
                return TooLarge()
            raise
        return None

    def _transact(self, items: list[dict]) -> Refusal | None:
        try:
            # One token: botocore's own retries of this call are then idempotent.
            table.client().transact_write_items(TransactItems=items, ClientRequestToken=uuid.uuid4().hex)
        except ClientError as error:
            codes = table.cancellation_codes(error)
            if not codes:
                if table.is_too_large(error):
                    return TooLarge()
                raise
            return self._refusal(dict(zip((table.item_key(item) for item in items), codes)))
        return None

    def _refusal(self, reasons: dict[tuple[str, str], str]) -> Refusal:
        """The outcome of a cancellation, from its reasons by item key."""
        failed = [op for op in self.operations if reasons.get(op.key) == table.CONDITION_FAILED and op.refused]
        if failed:
            top = max(operation.rank for operation in failed)
            first, *others = [operation.refused for operation in failed if operation.rank == top]
            first = _evaluated(first)  # a callable is asked once, after the failure: it may read
            if isinstance(first, ProductsGone):  # products gone on several operations: one answer names them all
                gone = [first, *map(_evaluated, others)]
                if all(isinstance(refused, ProductsGone) for refused in gone):
                    return ProductsGone(frozenset().union(*(refused.product_ids for refused in gone)))
            return first
        if table.CONDITION_FAILED not in reasons.values():
            if table.TRANSACTION_CONFLICT in reasons.values():
                return Contended()
            for operation in self.operations:
                if operation.oversized is not None and reasons.get(operation.key) == TOO_LARGE_CODE:
                    return operation.oversized
        raise table.WriteFailed("the unit of work", reasons)


def _evaluated(refused: Refusal | Callable[[], Refusal]) -> Refusal:
    return refused if isinstance(refused, Refusal) else refused()


def unit_of_work(account: str, now: dt.datetime) -> UnitOfWork:
    return UnitOfWork(account, now)
