"""Use cases of the bar's claims (decisions §18, second half): a receipt with issues, a claim, its withdrawal and the
supplier's answer, line by line.

Each is one unit of work through service/deliveries.py `_change`, conditional on the delivery's version (a lost race
is checked again against what won, §16): the delivery's summary (its version, which the ETag names, and for the
customer's changes the integration state PENDING, §14), the claims item, the claim's worklist entry (carrying its
feed change: a claim's own requests append no `delivery.*` entry) and the account's OPEN count. A receipt with issues
is the receive's write (balances, statement, `delivery.delivered`) with claim 1 in it. No claim moves a balance.
DynamoDB requests: the delivery (one BatchGetItem), what the claim is checked against (one BatchGetItem: for a claim
the account's settings, for any of them the products of the substitutes it names, so a receipt with issues and an
answer naming none read nothing more), and the transaction.
"""

from ..domain import claims as rules
from ..domain import delivery as delivery_rules
from ..domain.claim_shapes import AnswerBody, ClaimBody, ReceiveBody, WithdrawBody
from ..domain.claim_status import claim_id, parse_number
from ..domain.common import parse
from ..domain.errors import NotFound, ValidationFailed
from ..domain.feed import CUSTOMER_BY, Change, ChangeType, delivery_change
from ..domain.schedule import account_timezone
from ..domain.values import is_by_kg
from ..store import claims as claim_store
from ..store.deliveries import StoredDelivery
from . import clock, delivery_reads
from .deliveries import Written, _change, require_version
from .deliveries import receive as plain_receive
from .idempotency import IdempotencyClaim


def _context(account: str, stored: StoredDelivery, ids, settings: bool = False) -> tuple[dict, dict[str, bool]]:
    """With `settings`, the account's delivery settings (the claim window); and whether each substitute among `ids`
    is ordered by kg (a substitute does not show it; a product gone since counts whole). One BatchGetItem, or none
    when nothing is wanted."""
    substitutes = rules.substitutes_claimed(stored.delivery, stored.deposit_basis, ids)
    if not settings and not substitutes:
        return {}, {}
    found_settings, found = claim_store.context(account, substitutes)
    return found_settings, {product_id: is_by_kg(product) for product_id, product in found.items()}


def _written(account: str, current: StoredDelivery, changed: dict, claim: dict, opened: int) -> Written:
    """The delivery with its claims, and the claim's writes beside it: all claims of the delivery as written by the
    version this write makes, the claim's worklist entry, and the account's OPEN count moved by `opened`."""
    delivery_id, version = changed["id"], current.version + 1
    customer_id = changed["request"]["customer_id"]
    also = (
        claim_store.recording(account, delivery_id, changed[rules.CLAIMS], version),
        claim_store.entering(account, delivery_id, customer_id, claim, rules.since(claim)),
        claim_store.counting(account, delivery_id, opened),
    )
    return Written(changed, current.deposit_basis, also, claim_store.summary_attributes(version))


def _entry(change_type: ChangeType, number: int):
    """The claim's feed change, from the delivery as written: its id, customer and status after the change."""

    def entries(changed: dict) -> list[Change]:
        claim = rules.found(changed, number) if number else changed[rules.CLAIMS][-1]
        ref = claim_id(changed["id"], claim["number"])
        return [Change(change_type, ref, status=claim["status"], customer_id=changed["request"]["customer_id"])]

    return entries


def _number(delivery_id: str, text: str) -> int:
    number = parse_number(text)
    if number is None:
        raise NotFound(f"delivery {delivery_id} has no claim {text}")
    return number


def receive(
    account: str,
    customer_id: str,
    delivery_id: str,
    data,
    idempotency: IdempotencyClaim | None = None,
    if_match: str | None = None,
) -> dict:
    """POST /customer/deliveries/:id/receive: DELIVERED as before; with `items`, claim 1 opened in the same write."""
    try:
        body = parse(ReceiveBody, data)
    except ValidationFailed as failed:
        raise _with_line_problems(account, customer_id, delivery_id, data, failed, receiving=True) from None
    if body.items is None:
        plain = {name: value for name, value in data.items() if name != "items"}
        return plain_receive(account, customer_id, delivery_id, plain, idempotency, if_match)
    claim_body = ClaimBody.model_construct(items=body.items, message=body.message, user=body.user)
    stored = delivery_reads.read(account, delivery_id, customer_id, consistent=True)
    require_version(stored, if_match)
    _, by_kg = _context(account, stored, [item.id for item in body.items])

    def step(current: StoredDelivery, now) -> Written:
        status = delivery_rules.status_after_receive(current.delivery["status"])
        action = delivery_rules.customer_action(now, body, current.delivery["customer"].get("contact"))
        received = delivery_rules.close(current.delivery, "received", status, action)
        rules.check_type(received)
        changed, claim = rules.opened(received, current.deposit_basis, claim_body, now, by_kg)
        return _written(account, current, changed, claim, 1)

    def entries(changed: dict) -> list[Change]:
        delivered = delivery_change(ChangeType.DELIVERY_DELIVERED, changed, by=CUSTOMER_BY)
        return [delivered, *_entry(ChangeType.CLAIM_OPENED, 1)(changed)]

    return _change(account, stored, step, None, idempotency, by_customer=True, if_match=if_match, entries=entries)


def open_claim(
    account: str,
    customer_id: str,
    delivery_id: str,
    data,
    idempotency: IdempotencyClaim | None = None,
    if_match: str | None = None,
) -> dict:
    """POST /customer/deliveries/:id/claims: the delivery as the customer's single read shows it, with its new claim."""
    try:
        body = parse(ClaimBody, data)
    except ValidationFailed as failed:
        raise _with_line_problems(account, customer_id, delivery_id, data, failed) from None
    stored = delivery_reads.read(account, delivery_id, customer_id, consistent=True)
    require_version(stored, if_match)
    settings, by_kg = _context(account, stored, [item.id for item in body.items], settings=True)
    hours, zone = int(settings["claim_window_hours"]), account_timezone(settings)

    def step(current: StoredDelivery, now) -> Written:
        rules.check_claimable(current.delivery, now, hours, zone)
        changed, claim = rules.opened(current.delivery, current.deposit_basis, body, now, by_kg)
        return _written(account, current, changed, claim, 1)

    entries = _entry(ChangeType.CLAIM_OPENED, 0)
    return _change(account, stored, step, None, idempotency, by_customer=True, if_match=if_match, entries=entries)


def _with_line_problems(
    account: str, customer_id: str, delivery_id: str, data, failed: ValidationFailed, receiving: bool = False
):
    """`failed` with what its well-formed items get wrong against the delivery (decisions §3), read only once the
    body is refused anyway; a delivery that takes no claim now (or, `receiving`, no receipt) says so first (400
    invalid-transition)."""
    given = rules.items_that_parse(data) if "items" not in failed.named() else []  # a wrong list: items unchecked
    try:
        stored = delivery_reads.read(account, delivery_id, customer_id, consistent=True)
    except NotFound:
        return failed
    settings, by_kg = _context(account, stored, [item.id for _, item in given], settings=not receiving)
    if receiving:
        delivery_rules.status_after_receive(stored.delivery["status"])
        if given:
            rules.check_type(stored.delivery)
    else:
        hours, zone = int(settings["claim_window_hours"]), account_timezone(settings)
        rules.check_claimable(stored.delivery, clock.now(), hours, zone)
    return failed.joined(rules.claimed_items(stored.delivery, stored.deposit_basis, given, by_kg)[1])


def withdraw(
    account: str,
    customer_id: str,
    delivery_id: str,
    number_text: str,
    data,
    idempotency: IdempotencyClaim | None = None,
    if_match: str | None = None,
) -> dict:
    """POST /customer/deliveries/:id/claims/:number/withdraw: the claim WITHDRAWN, only while OPEN."""
    number = _number(delivery_id, number_text)
    stored = delivery_reads.read(account, delivery_id, customer_id, consistent=True)
    rules.found(stored.delivery, number)
    parse(WithdrawBody, data)
    require_version(stored, if_match)

    def step(current: StoredDelivery, now) -> Written:
        changed, claim = rules.withdrawn(current.delivery, number, now)
        return _written(account, current, changed, claim, -1)

    entries = _entry(ChangeType.CLAIM_WITHDRAWN, number)
    return _change(account, stored, step, None, idempotency, by_customer=True, if_match=if_match, entries=entries)


def answer(
    account: str,
    delivery_id: str,
    number_text: str,
    data,
    idempotency: IdempotencyClaim | None = None,
    if_match: str | None = None,
) -> dict:
    """POST /deliveries/:id/claims/:number/answer: every claimed line answered once; the claim's status follows.
    The integration state is left as it is (the supplier's own answer is no news to its ERP)."""
    number = _number(delivery_id, number_text)
    stored = delivery_reads.read(account, delivery_id, consistent=True)
    claim = rules.found(stored.delivery, number)
    _, by_kg = _context(account, stored, [item["id"] for item in claim["items"]])
    try:
        body = parse(AnswerBody, data)
    except ValidationFailed as failed:
        if "items" in failed.named():  # a wrong list: its items are not checked
            raise
        lines = rules.delivered_lines(stored.delivery, stored.deposit_basis)
        raise failed.joined(rules.answer_problems(claim, data, lines, by_kg)) from None
    require_version(stored, if_match)

    def step(current: StoredDelivery, now) -> Written:
        changed, answered = rules.answered(current.delivery, current.deposit_basis, number, body, now, by_kg)
        return _written(account, current, changed, answered, -1)

    return _change(
        account,
        stored,
        step,
        None,
        idempotency,
        view=delivery_reads.supplier_view,
        if_match=if_match,
        entries=_entry(ChangeType.CLAIM_ANSWERED, number),
    )
