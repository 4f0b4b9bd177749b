"""The unit of work (Cosmic Python's, on one DynamoDB TransactWriteItems): a service opens it, repositories give it
their operations, the service records the feed changes they make, and `commit` writes it all at once or nothing.

    with unit_of_work(account, now) as uow:
        uow.add(products.saving(...))
        uow.record(Change(ChangeType.PRODUCT_UPDATED, product_id))
        refused = uow.commit()  # None, or the outcome (store/outcomes.py) of the refusal

Leaving the `with` without commit writes nothing. The transaction holds the operations, with each recorded change
marked on its resource's item (store/feed_marks.py; the table's stream numbers it: docs/feed.md), and the
Idempotency-Key answer. DynamoDB's refusal becomes an outcome in the store's one door (store/operations.py
`commit`, by item key): a failed condition is the refusal its operation declared, a conflict is Contended, a lost
claim LostClaim, a reason nobody declared table.WriteFailed. A unit with no change (a resend queued, an import
queued, each with its Idempotency-Key answer) is the same transaction without marks.
"""

from __future__ import annotations

import datetime as dt

from ..domain.feed import Change
from . import committed_units, feed_marks, operations
from .operations import Operation
from .outcomes import LostClaim, Refusal


class UnitOfWork:
    """One transaction of one account, at `now` (the time its feed entries say)."""

    def __init__(self, account: str, now: dt.datetime):
        self.account, self.now = account, now
        self.operations: list[Operation] = []
        self.changes: list[Change] = []
        self.committed = False
        self.unit = feed_marks.new_unit()  # its marks' and entries' `unit`: how a writer finds its changes

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
            items = feed_marks.marked(self.account, self.unit, items, self.changes, self.now)
        if not items:
            return None
        refused = operations.commit(items, self.operations)
        if refused is None and self.changes:
            committed_units.add(self.unit)
        return refused


def unit_of_work(account: str, now: dt.datetime) -> UnitOfWork:
    return UnitOfWork(account, now)
