"""A delivery's writes, each one unit of work: an order's deliveries placed, a delivery changed. The items hold
the worklist's `since`, the time of the attempt that commits (decisions §14)."""

import datetime as dt

from ..domain.errors import Busy, invalid
from ..domain.feed import Change
from ..store import delivery_writes, outcomes
from ..store.deliveries import IntegrationWrite, StoredDelivery
from ..store.operations import Operation
from ..store.unit_of_work import unit_of_work

LOST_CLAIM = "another request with this Idempotency-Key took over; retry to get its answer"
TOO_LARGE = "the delivery has reached the storage limit of one delivery"


def raise_for(outcome: outcomes.LostClaim | outcomes.TooLarge) -> None:
    """The error of a write that cannot succeed by trying again now."""
    if isinstance(outcome, outcomes.LostClaim):
        raise Busy(LOST_CLAIM)
    raise invalid("body", TOO_LARGE)


def place(
    account: str,
    deliveries: list[dict],
    used_products: list[str],
    claim,
    integration: IntegrationWrite | None,
    *,
    changes: list[Change],
    now: dt.datetime,
    bases: list[dict | None] | None = None,
    guards: list[Operation] = (),
    pinned: dict[str, str] | None = None,
    used_already: frozenset = frozenset(),
) -> outcomes.Refusal | None:
    """Create the deliveries of one order, in one transaction with the "used" flags of their products, the
    integration counts, the Idempotency-Key answer (`claim`, a store/idempotency Completion) and their feed entries
    (which make their events); None when written, else ProductsGone, Stale, Unusable, LostClaim, TooLarge or
    Contended."""
    operations = delivery_writes.placing(
        account, deliveries, used_products, integration, bases=bases, pinned=pinned, used_already=used_already
    )
    with unit_of_work(account, now) as uow:
        uow.add(*operations, *guards)
        uow.record(*changes)
        if claim is not None:
            uow.answer(claim)
        return uow.commit()


def change(
    account: str,
    delivery: dict,
    expected_version: int,
    integration: IntegrationWrite | None = None,
    claim=None,
    *,
    changes: list[Change],
    now: dt.datetime,
    also: list[Operation] = (),
    extra: dict | None = None,
) -> outcomes.Refusal | None:
    """Store the changed delivery if nobody changed it since `expected_version`, with its new integration state and
    counts, its Idempotency-Key answer and its feed entries in the same write. Lost to another write (its version
    or a transaction): Stale. `also`: more operations that belong to the change (a receive's move of deposit
    balances and its statement record, an amendment's new items, checks); `extra`: attributes of the summary to
    set too."""
    operations = delivery_writes.updating(account, delivery["id"], expected_version, delivery, integration, extra)
    return _write(account, operations + list(also), claim, changes, now)


def set_integration(
    account: str, stored: StoredDelivery, integration: IntegrationWrite, *, changes: list[Change], now: dt.datetime
) -> outcomes.Refusal | None:
    """Store a new integration state (and its counts and the feed entries of `changes`) if nobody changed the
    delivery since it was read: Stale otherwise."""
    operations = delivery_writes.updating(account, stored.delivery["id"], stored.version, None, integration)
    return _write(account, operations, None, changes, now)


def _write(account: str, operations: list[Operation], claim, changes: list[Change], now: dt.datetime):
    with unit_of_work(account, now) as uow:
        uow.add(*operations)
        uow.record(*changes)
        if claim is not None:
            uow.answer(claim)
        refused = uow.commit()
    return outcomes.Stale() if isinstance(refused, outcomes.Contended) else refused  # read again, a new time
