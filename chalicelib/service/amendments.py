"""Use case: a customer amends an open delivery before its cutoff (decisions §16).

DynamoDB requests: the delivery read (one BatchGetItem), what the new lines are checked against (one BatchGetItem,
as an order's), and one transaction: the summary (conditional on the version read, with its new deposit basis),
the items with their amendment records, the integration counts, the feed entry and the Idempotency-Key answer;
the feed adds one GetItem of its head. An order costs the same four (its UpdateItem of the ids instead of the
delivery read). A lost race re-reads the delivery and checks the amendment again against what won.
"""

from ..domain import amendments, deposit_orders, deposits
from ..domain.common import parse
from ..domain.feed import ChangeType, delivery_change
from ..domain.rendering import json_text
from ..store import deliveries, delivery_amendments, delivery_writes, outcomes, products
from ..store import deposits as deposit_store
from . import clock, contention, delivery_reads, write_units
from .deliveries import AGAIN, KEPT_CHANGING, MAX_ATTEMPTS, _repended, answered, fresh, require_version
from .deposits import empties_refused, new_empties_check
from .idempotency import IdempotencyClaim
from .ordering import load_context, pinned_products


def amend(
    account: str,
    customer_id: str,
    delivery_id: str,
    data,
    idempotency: IdempotencyClaim | None = None,
    if_match: str | None = None,
) -> dict:
    """The delivery as its single read shows it after the amendment (unchanged when it changes nothing)."""
    body = parse(amendments.AmendmentBody, data)
    stored = delivery_reads.read(account, delivery_id, customer_id, consistent=True)
    require_version(stored, if_match)
    amendments.check_amendable(stored.delivery)  # before reading the catalogue: a final delivery reads nothing more
    product_ids = [item.id for item in body.items]
    # The order's own lines too: an ACCEPTED delivery is amended only before their cutoff (decisions §16).
    ordered = [item["id"] for item in stored.delivery["request"].get("items") or ()]
    overridden = deposit_orders.products_of(stored.deposit_basis)  # lines shown under a bundle's id_override
    read_ids = list(dict.fromkeys(product_ids + [overridden.get(item_id, item_id) for item_id in ordered]))
    context = load_context(account, customer_id, read_ids)
    guards = new_empties_check(account, body.empties, stored.delivery, stored.deposit_basis)

    def attempt() -> dict | outcomes.Refusal:
        nonlocal stored, context
        require_version(stored, if_match)
        now = clock.now()
        result = amendments.amend(stored.delivery, stored.deposit_basis, body, context, now)
        if result.delivery is None:
            return delivery_reads.customer_view(stored)
        changed = deposits.with_deposits(result.delivery, result.basis)
        integration = _repended(stored, now)
        written = deliveries.StoredDelivery(
            changed, stored.version + 1, integration.state, integration.since, result.basis
        )
        claim = idempotency.completion(delivery_reads.customer_view(written)) if idempotency is not None else None
        # Products whose packaging charges deposits must be as read when it commits (§15's delete guard); those first
        # ordered now are marked used in the same write, so they can no longer be deleted (§5).
        pinned = pinned_products(context, product_ids)
        used = [delivery_writes.marking_used(account, pid, pinned.get(pid)) for pid in result.added]
        checks = [products.unchanged_check(account, pid, rev) for pid, rev in pinned.items() if pid not in result.added]
        extra = {deliveries.DEPOSIT_BASIS: json_text(result.basis), **deliveries.items_attributes(stored.version + 1)}
        operations = delivery_writes.updating(account, changed["id"], stored.version, changed, integration, extra)
        also = [delivery_amendments.replacing_items(account, changed, stored.version + 1), *guards, *checks, *used]
        change = delivery_change(ChangeType.DELIVERY_AMENDED, changed)
        outcome = write_units.commit(account, now, operations + also, [change], claim)
        if outcome is None:
            return delivery_reads.customer_view(written)
        if isinstance(outcome, deposit_store.Unusable):
            raise empties_refused(account, body.empties)
        if isinstance(outcome, (outcomes.Changed, outcomes.ProductsGone)):  # planned again from the catalogue as it is
            context = load_context(account, customer_id, read_ids, consistent=True)
            return outcomes.Changed()
        if isinstance(outcome, contention.lost_races()):
            stored = fresh(account, stored)
        return outcome

    return answered(contention.retried(attempt, again=AGAIN, minimum=MAX_ATTEMPTS, busy=KEPT_CHANGING))
