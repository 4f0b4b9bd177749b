"""How a writer finds its own changes in the feed (decisions §13: an entry is readable within 5 seconds of its
change, not at once): every answer of a request that committed feed changes names their unit of work, and each of
their entries carries it as `unit` (docs/sync.md "Reading your own write")."""

from ..store import committed_units


def begin_request() -> None:
    committed_units.forget()


def committed() -> list[str]:
    """The units of work with feed changes the request committed, in order."""
    return committed_units.units()


def commit(account: str, now, operations: list, changes: list, claim=None):
    """One unit of work of a use case: the repositories' `operations`, the feed `changes` they make and the
    Idempotency-Key answer (`claim`, a store/idempotency Completion) in one transaction: None, or the refusal."""
    from ..store.unit_of_work import unit_of_work

    with unit_of_work(account, now) as uow:
        uow.add(*operations)
        uow.record(*changes)
        if claim is not None:
            uow.answer(claim)
        return uow.commit()
