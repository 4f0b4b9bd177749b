"""Use case: the supplier's delivery note (decisions §18) makes a REQUESTED or ACCEPTED delivery DELIVERED with what
was really delivered.

DynamoDB requests: the delivery (one BatchGetItem), what its substitutes and the note are checked against (one
BatchGetItem: the account's settings for its time zone, the customer's policy, the substitute products and their
pricing, the deposit types), and one transaction: the summary (conditional on the version read; its deposit basis
when substitutes bring packaging), the note on the items item, the customer's balances and their statement record
(§15), the substitutes' products pinned as read, the feed mark (`delivery.delivered`, by the supplier) and the
Idempotency-Key answer. A receive costs the delivery read and the transaction. A lost race re-reads the delivery
and checks the note again against what won (§16). The integration state is left as it is, as for responses (§14).
"""

from ..domain import delivery_note, deposits, schedule
from ..domain.common import ValidationFailed, parse
from ..domain.feed import SUPPLIER_BY, ChangeType
from ..store import deliveries, delivery_notes
from . import delivery_reads
from . import substitutes as substitute_reads
from .deliveries import Written, _change, collected, require_version
from .deposits import new_empties_check
from .idempotency import IdempotencyClaim


def deliver(
    account: str, delivery_id: str, data, idempotency: IdempotencyClaim | None = None, if_match: str | None = None
) -> dict:
    """POST /deliveries/:id/delivery-note: the delivery as its supplier's single read shows it after the note."""
    body = parse(delivery_note.DeliveryNoteBody, data)
    stored = delivery_reads.read(account, delivery_id, consistent=True)
    require_version(stored, if_match)
    delivery_note.check_deliverable(stored.delivery)  # before reading more: a final delivery reads nothing else
    substitutes = substitute_reads.read(account, stored.delivery, body.substitutions, always=True)
    empties, empties_errors = None, []
    try:
        known = deposits.known_types(stored.delivery, stored.deposit_basis)
        empties = collected(account, body, known, substitutes.context.deposit_types)  # read with the rest
    except ValidationFailed as failed:
        empties_errors = failed.errors
    guards = new_empties_check(account, body.empties, stored.delivery, stored.deposit_basis)

    def step(current: deliveries.StoredDelivery, now) -> Written:
        errors, substituted = [], None
        try:  # checked against the delivery as it is now: a response or an amendment may have won the race
            substituted = substitutes.shown(current.delivery, current.deposit_basis)
        except ValidationFailed as failed:
            errors = failed.errors
        zone = schedule.account_timezone(substitutes.context.settings)
        delivered = delivery_note.deliver(
            current.delivery, current.deposit_basis, body, substituted, empties, now, zone, errors + empties_errors
        )
        also = (*substitutes.checks(), delivery_notes.recording(account, delivered, current.version + 1))
        basis = substitutes.basis(current.deposit_basis)
        return Written(delivered, basis, also, deliveries.items_attributes(current.version + 1))

    return _change(
        account,
        stored,
        step,
        ChangeType.DELIVERY_DELIVERED,
        idempotency=idempotency,
        view=delivery_reads.supplier_view,
        if_match=if_match,
        guards=guards,
        empties=body.empties,
        by=SUPPLIER_BY,
        read_again=substitutes.read_again,
    )
