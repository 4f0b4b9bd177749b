"""One-off data migrations, run from the command line (never on a request's path)."""
from ..domain import integration
from ..store import deliveries
from . import clock

PAGE = 100


def migrate_integration(account: str, status: str = integration.PENDING) -> int:
    """Give every delivery stored before integration states (decisions §14) its state, listed in its worklist and
    counted; how many it gave one. PENDING by default (the ERP acknowledged none of them here); IMPORTED for a
    supplier whose ERP took all of them already. Each is conditional on the delivery still having none, so a
    second run, or a run beside PUTs and customer changes, counts nothing twice."""
    migrated, start = 0, None
    while True:
        found, start = deliveries.without_integration(account, PAGE, start)
        for stored in found:
            state = {"status": str(status)}
            write = deliveries.IntegrationWrite(state, integration.entered_before(stored.delivery), integration.count_changes(None, state["status"]))
            migrated += deliveries.add_integration(account, stored, write, clock.now()) is None
        if start is None:
            return migrated
