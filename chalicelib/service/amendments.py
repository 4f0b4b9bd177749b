"""Use case: a customer amends an open delivery before its cutoff (decisions §16).

DynamoDB requests: the delivery read (one BatchGetItem), what the new lines are checked against (one BatchGetItem,
as an order's), and one transaction: the summary (conditional on the version read, with its new deposit basis),
the items with their amendment records, the integration counts, the feed entry and the Idempotency-Key answer;
the feed adds one GetItem of its head. An order costs the same four (its UpdateItem of the ids instead of the
delivery read). A lost race re-reads the delivery and checks the amendment again against what won.
"""
from ..domain import amendments, deposits
from ..domain.common import parse
from ..domain.errors import Busy, NotFound
from ..domain.feed import ChangeType, delivery_change
from ..domain.rendering import json_text
from ..store import deliveries, delivery_amendments, outcomes, table
from ..store import deposits as deposit_store
from . import clock, delivery_reads
from .deliveries import _attempts, _back_off, _repended, raise_for, require_version
from .idempotency import IdempotencyClaim
from .ordering import load_context


def amend(
    account: str, customer_id: str, delivery_id: str, data, idempotency: IdempotencyClaim | None = None,
    if_match: str | None = None,
) -> dict:
    """The delivery as its single read shows it after the amendment (unchanged when it changes nothing)."""
    body = parse(amendments.AmendmentBody, data)
    stored = delivery_reads.read(account, delivery_id, customer_id, consistent=True)
    require_version(stored, if_match)
    amendments.check_amendable(stored.delivery)  # before reading the catalogue: a final delivery reads nothing more
    context = load_context(account, customer_id, [item.id for item in body.items])
    # Types of the new empties the delivery did not name yet must still be there when the amendment commits.
    known = deposits.known_types(stored.delivery, stored.deposit_basis)
    guards = deposit_store.usable_check(account, [e.id for e in body.empties or [] if e.id not in known])
    for attempt in _attempts():
        require_version(stored, if_match)
        now = clock.now()
        result = amendments.amend(stored.delivery, stored.deposit_basis, body, context, now)
        if result.delivery is None:
            return delivery_reads.customer_view(stored)
        changed = deposits.with_deposits(result.delivery, result.basis)
        integration = _repended(stored, now)
        written = deliveries.StoredDelivery(changed, stored.version + 1, integration.state, integration.since, result.basis)
        claim = idempotency.completion(delivery_reads.customer_view(written)) if idempotency is not None else None
        try:
            outcome = deliveries.change(
                account, changed, stored.version, claim, integration,
                change=delivery_change(ChangeType.DELIVERY_AMENDED, changed), now=now,
                also=[delivery_amendments.items_operation(account, changed), *guards],
                extra={deliveries.DEPOSIT_BASIS: json_text(result.basis)},
            )
        except table.WriteFailed as failed:  # a type of its new empties was deleted, or is being deleted, meanwhile
            if not deposit_store.refused_unusable(failed, account):
                raise
            from .deposits import empties_refused
            raise empties_refused(account, body.empties) from None
        if isinstance(outcome, deliveries.StoredDelivery):
            return delivery_reads.customer_view(written)
        if not isinstance(outcome, outcomes.Stale):
            raise_for(outcome)
        _back_off(attempt)
        stored = deliveries.refresh(account, stored)
        if stored is None:
            raise NotFound(f"delivery {delivery_id} does not exist")
    raise Busy("the delivery is being changed by many requests at once; try again")
