"""Documents changed field by field (customers, settings): the read-decide-write of their changes, retried as every
lost race is (service/contention.py: a 409 once contention lasted)."""

from typing import Callable

from ..domain.feed import Change
from ..store import documents
from ..store.outcomes import Gone, Refusal
from . import clock, contention

WRITE_ATTEMPTS = 5
KEPT_CHANGING = "the document kept changing while it was being written; try again"


def update(
    account: str,
    key: dict,
    set_fields: dict,
    remove_fields: tuple[str, ...] = (),
    create_with: dict | None = None,
    *,
    created: Change | None = None,
    updated: Change | None = None,
    shown: Callable[[dict | None], object] = lambda document: document,
    also: Callable[[object, object], list] = lambda before, after: [],
) -> dict | Gone:
    """Set and remove fields of the document (`key`, as its repository names it) in one conditional write with its
    feed entry (`created` when the write creates it, else `updated`); the new document.

    A missing item stays missing and gives Gone, unless create_with is given: then the item is created holding
    create_with (which should already include set_fields). The document is read first (one consistent
    BatchGetItem): a write that changes nothing `shown` (what a GET shows) writes nothing and appends no entry.
    `also(shown before, shown after)`: more operations the change brings into its write.
    """
    from ..store.unit_of_work import unit_of_work

    if not set_fields and not remove_fields:
        # Nothing to change, so nothing to create either: a missing item still reads as create_with.
        current = documents.get(key, consistent=True)
        if current is None:
            return create_with if create_with is not None else Gone()
        return current

    def attempt() -> dict | Refusal:
        current = documents.read_for_write(key)
        if current is None and create_with is None:
            return Gone()
        changed = documents.applied(current, set_fields, remove_fields) if current is not None else create_with
        if documents.same(shown(current), shown(changed)):
            return changed  # nothing a reader sees would change (a missing item reads as create_with)
        with unit_of_work(account, clock.now()) as uow:
            uow.add(*also(shown(current), shown(changed)))
            if current is None:
                uow.add(documents.creating(key, create_with))
                uow.record(*([created] if created is not None else []))
            else:
                uow.add(documents.updating(key, set_fields, remove_fields))
                uow.record(*([updated] if updated is not None else []))
            return uow.commit() or changed  # Stale: created, changed or removed by someone else; read again

    return contention.retried(attempt, minimum=WRITE_ATTEMPTS, seconds=0, busy=KEPT_CHANGING)
