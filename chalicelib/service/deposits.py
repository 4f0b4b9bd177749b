"""Use cases of deposit types and customers' balances (decisions §15)."""

from typing import TYPE_CHECKING

from ..domain.errors import Busy, Conflict, NotFound, invalid
from ..domain.feed import Change, ChangeType
from ..domain.identifiers import is_identifier
from ..domain.limits import DEPOSIT_TYPES
from ..store import cursor as cursors
from ..store import deposits, outcomes
from ..store.paging import Page
from ..store.unit_of_work import unit_of_work
from . import clock, contention
from .paging import paged

if TYPE_CHECKING:  # a cold read does not load the Idempotency-Key machinery
    from .idempotency import IdempotencyClaim


LIST_QUERY = "deposits"


def _gone(deposit_id: str) -> NotFound:
    return NotFound(f"deposit type {deposit_id} does not exist")


def put_deposit(account: str, deposit_id: str, body) -> dict:
    from ..domain import common as shapes
    from ..domain import deposit_types as deposit_shapes

    errors = []  # every wrong field at once (decisions §3): the URL's id, a body id unlike it, name, price
    if not is_identifier(deposit_id) or len(deposit_id) > deposit_shapes.DEPOSIT_ID_LENGTH:
        errors.append(shapes.FieldError("id", deposit_shapes.DEPOSIT_ID_RULE))
    elif isinstance(body, dict) and isinstance(body.get("id"), str) and body["id"] != deposit_id:
        errors.append(shapes.FieldError("id", "must equal the id in the URL"))
    try:
        parsed = shapes.parse(deposit_shapes.DepositBody, body)
    except shapes.ValidationFailed as failed:
        errors += [e for e in failed.errors if not (errors and e.path == "id")]
    if errors:
        raise shapes.ValidationFailed(errors)
    saved = save_type(account, deposit_id, parsed.name, parsed.price)
    if isinstance(saved, outcomes.Full):
        raise invalid("id", f"an account has at most {DEPOSIT_TYPES} deposit types")
    if isinstance(saved, outcomes.Refusal):
        contention.raise_for(saved)
    return saved


PUT_ATTEMPTS = 5  # a type's write lost to others this many times in a row: Busy


def save_type(account: str, deposit_id: str, name: str, price: int) -> dict | outcomes.Full:
    """Create or change a type; the same name and price again write nothing (and append no feed entry). Busy
    (409): others kept changing the account's types between our read and our write."""

    def attempt() -> dict | outcomes.Refusal:
        read = deposits.read_definitions(account)
        current = read.types.get(deposit_id)
        if current is not None and current["name"] == name and current["price"] == price:
            return deposits.public(deposit_id, current)
        if current is None and len(read.types) >= DEPOSIT_TYPES:
            return outcomes.Full()
        kind = ChangeType.DEPOSIT_UPDATED if current is not None else ChangeType.DEPOSIT_CREATED
        with unit_of_work(account, clock.now()) as uow:
            uow.add(*deposits.putting(account, deposit_id, name, price, read))
            uow.record(Change(kind, deposit_id))
            return uow.commit() or {"id": deposit_id, "name": name, "price": price}

    return contention.retried(attempt, minimum=PUT_ATTEMPTS, seconds=0)


def retire(account: str, deposit_id: str, retiring: bool = True) -> None | outcomes.Gone | outcomes.InUse:
    """Mark a type no product names as being deleted (or no longer): no feed entry, nothing a GET shows changes."""
    with unit_of_work(account, clock.now()) as uow:
        uow.add(*deposits.retiring(account, deposit_id, retiring))
        return uow.commit()


def delete_type(account: str, deposit_id: str) -> None | outcomes.Gone | outcomes.InUse:
    with unit_of_work(account, clock.now()) as uow:
        uow.add(*deposits.deleting(account, deposit_id))
        uow.record(Change(ChangeType.DEPOSIT_DELETED, deposit_id))
        return uow.commit()


def get_deposit(account: str, deposit_id: str) -> dict:
    found = deposits.read_types(account).get(deposit_id) if is_identifier(deposit_id) else None
    if found is None:
        raise _gone(deposit_id)
    return deposits.public(deposit_id, found)


@paged
def list_deposits(account: str, limit: int, cursor: str | None) -> Page:
    """A page of the account's types by id: they are one item, so a page is a slice of it after the cursor's id."""
    after = cursors.decode(account, LIST_QUERY, cursor)["after"] if cursor else None
    types = deposits.read_types(account)
    ids = [d for d in sorted(types) if after is None or d > after]
    shown = [deposits.public(d, types[d]) for d in ids[:limit]]
    more = len(ids) > limit
    return Page(shown, cursors.encode(account, LIST_QUERY, {"after": ids[limit - 1]}) if more else None)


def delete_deposit(account: str, deposit_id: str) -> None:
    """Mark the type as being deleted, check what still names it, delete it (or unmark it). The mark comes first:
    adjustments of it are refused from then on, and a receive turns an open delivery naming it into a balance
    atomically, so checking the open deliveries before the balances misses no interleaving of receives."""
    from ..store import deposit_guard

    get_deposit(account, deposit_id)
    _raise_for_refusal(retire(account, deposit_id), deposit_id)
    deleted = False
    try:
        if deposit_guard.open_delivery_names(account, deposit_id):
            raise Conflict(f"deposit type {deposit_id} is named by a delivery that is not final and cannot be deleted")
        if deposits.any_balance(account, deposit_id):
            raise Conflict(f"deposit type {deposit_id} is in a customer's balance and cannot be deleted")
        _raise_for_refusal(delete_type(account, deposit_id), deposit_id)
        deleted = True
    finally:
        if not deleted:
            retire(account, deposit_id, retiring=False)


def _raise_for_refusal(refused, deposit_id: str) -> None:
    """What marking or deleting a type answers when the store refused it (None: it did not)."""
    if isinstance(refused, outcomes.Gone):
        raise _gone(deposit_id)
    if isinstance(refused, outcomes.InUse):
        raise Conflict(f"deposit type {deposit_id} is named by a product's packaging and cannot be deleted")
    if refused is not None:
        contention.raise_for(refused)


def _customer_gone(customer_id: str) -> NotFound:
    return NotFound(f"customer {customer_id} does not exist")


def customer_balances(account: str, customer_id: str) -> dict:
    """GET /customers/:id/deposits and GET /customer/deposits: every type with this customer's balance."""
    from ..domain import deposits as arithmetic

    read = deposits.read_balances(account, customer_id) if is_identifier(customer_id) else None
    if read is None:
        raise _customer_gone(customer_id)
    return arithmetic.balances(*read)


def adjust_balance(account: str, customer_id: str, body, idempotency: "IdempotencyClaim | None" = None) -> dict:
    """POST /customers/:id/deposits: add a count (an opening balance, a correction) to one balance. A keyed
    request records its answer in the write that adjusts (§11): a retry after a crash replays it, never adjusts
    twice."""
    from ..domain import common as shapes
    from ..domain import deposit_types as deposit_shapes
    from ..domain import deposits as arithmetic

    if not is_identifier(customer_id):
        raise _customer_gone(customer_id)
    try:
        adjustment = shapes.parse(deposit_shapes.Adjustment, body)
    except shapes.ValidationFailed as failed:  # an unknown deposit id is named with the other wrong fields (§3)
        given = body.get("id") if isinstance(body, dict) else None
        if isinstance(given, str) and is_identifier(given) and given not in deposits.read_types(account):
            raise shapes.ValidationFailed(
                [shapes.FieldError("id", "is not a deposit type of this supplier"), *failed.errors]
            ) from None
        raise
    answer = (lambda types, held: idempotency.completion(arithmetic.balances(types, held))) if idempotency else None
    done = adjusted(account, customer_id, adjustment.id, adjustment.count, adjustment.message, answer)
    if isinstance(done, outcomes.Gone):
        raise _customer_gone(customer_id)
    if isinstance(done, deposits.Unknown):
        raise invalid("id", "is not a deposit type of this supplier")
    if isinstance(done, deposits.Retiring):
        raise Busy(f"deposit type {adjustment.id} is being deleted; try again")
    if isinstance(done, outcomes.Refusal):
        contention.raise_for(done)
    # Keyed: the answer recorded with the write; else the balances as they are now.
    return arithmetic.balances(done["types"], done["held"]) if idempotency else customer_balances(account, customer_id)


ADJUST_ATTEMPTS = 30


def adjusted(
    account: str, customer_id: str, deposit_id: str, count: int, message: str, answer=None
) -> dict | outcomes.Refusal:
    """Add `count` to one balance, with its statement record and its feed entry; {types, held} as they are after
    it. Gone when the customer does not exist, deposits.Unknown when the type does not (both checked in the same
    transaction), Retiring while it is being deleted; Busy (409) when others kept writing between our read and our
    write. `answer(types, held)`: the Idempotency-Key completion to record in the same write (§11), which is then
    conditional on the balances being as read, so the answer recorded is exactly what was written."""

    def attempt() -> dict | outcomes.Refusal:
        read = deposits.read_for_adjustment(account, customer_id)
        if read is None:
            return outcomes.Gone()
        if deposit_id not in read.types:
            return deposits.Unknown()
        if deposit_id in read.retiring:
            return deposits.Retiring()
        held = {**read.held, deposit_id: read.held.get(deposit_id, 0) + count}
        now = clock.now()
        with unit_of_work(account, now) as uow:
            uow.add(
                *deposits.adjusting(account, customer_id, deposit_id, count, message, now, read, answer is not None)
            )
            uow.record(Change(ChangeType.CUSTOMER_DEPOSITS_UPDATED, customer_id, customer_id=customer_id))
            if answer is not None:
                uow.answer(answer(read.types, held))
            return uow.commit() or {"types": read.types, "held": held}

    return contention.retried(attempt, minimum=ADJUST_ATTEMPTS, seconds=0)


@paged
def movements(account: str, customer_id: str, deposit: str | None, limit: int, cursor: str | None, reader: str) -> Page:
    """GET /customers/:id/deposits/movements and GET /customer/deposits/movements: the statement, newest first."""
    from ..store import customers, deposit_statement

    if not is_identifier(customer_id) or customers.get(account, customer_id) is None:
        raise _customer_gone(customer_id)
    from ..domain.deposit_types import DEPOSIT_ID_LENGTH, DEPOSIT_ID_RULE

    if deposit is not None and (not is_identifier(deposit) or len(deposit) > DEPOSIT_ID_LENGTH):
        raise invalid("deposit", DEPOSIT_ID_RULE)
    return deposit_statement.read_page(account, customer_id, deposit, limit, cursor, reader)


def new_empties_check(account: str, empties, delivery: dict, basis: dict | None) -> list:
    """The check, put in the write, that the types of `empties` the delivery did not name yet still exist and are
    not being deleted when it commits (decisions §15's delete guard counts the types open deliveries name)."""
    from ..domain.deposits import known_types

    known = known_types(delivery, basis)
    return deposits.usable_check(account, [e.id for e in empties or [] if e.id not in known])


def empties_refused(account: str, empties) -> Exception:
    """What an order or a response answers when a type of its empties was deleted, or is being deleted, between
    its read and its write (the store's deposits.Unusable): 400 naming each such entry (409 when the delete gave up
    meanwhile)."""
    from ..domain.common import FieldError, ValidationFailed

    usable = deposits.read_types(account, consistent=True, usable_only=True)
    message = "is not a deposit type of this supplier"
    errors = [
        FieldError(f"empties[{i}].id", message) for i, empty in enumerate(empties or []) if empty.id not in usable
    ]
    return ValidationFailed(errors) if errors else Busy("a deposit type of the empties was being deleted; try again")
