"""One-off data migrations, run from the command line (never on a request's path)."""

from ..domain import integration
from ..store import deliveries, delivery_writes, outcomes
from ..store import migrations as store_migrations
from ..store.unit_of_work import unit_of_work
from . import clock, contention

PAGE = 100
ADD_ATTEMPTS = 10  # at least; and on while contention lasts under CONTENTION_SECONDS (service/contention.py)


def migrate_integration(account: str, status: str = integration.PENDING) -> int:
    """Give every delivery stored before integration states (decisions §14) its state, listed in its worklist and
    counted; how many it gave one. PENDING by default (the ERP acknowledged none of them here); IMPORTED for a
    supplier whose ERP took all of them already. Each is conditional on the delivery still having none, so a
    second run, or a run beside PUTs and customer changes, counts nothing twice."""
    migrated, start = 0, None
    while True:
        found, start = store_migrations.without_integration(account, PAGE, start)
        for stored in found:
            state = {"status": str(status)}
            write = deliveries.IntegrationWrite(
                state, integration.entered_before(stored.delivery), integration.count_changes(None, state["status"])
            )
            migrated += _add_integration(account, stored, write)
        if start is None:
            return migrated


def _add_integration(account: str, stored: deliveries.StoredDelivery, write: deliveries.IntegrationWrite) -> bool:
    """Whether the delivery took its first state (False: it had one already); tried again while another write
    holds the account's counts for a moment."""

    def attempt() -> outcomes.Refusal | None:
        # No feed entry: a GET showed PENDING before (a missing state reads PENDING) and shows it after.
        with unit_of_work(account, clock.now()) as uow:
            uow.add(*delivery_writes.adding_integration(account, stored.delivery["id"], write))
            return uow.commit()

    return contention.retried(attempt, again=(outcomes.Contended,), minimum=ADD_ATTEMPTS) is None


def migrate_deposits(account: str) -> int:
    """Give each deposit type stored before types had an item of their own (issue 25) that item, with its
    reference count; how many it gave one (none on a second run). Until then a product write that names or stops
    naming such a type, and the type's delete, are refused."""
    return store_migrations.give_types_their_items(account)
