"""The shapes of decisions §15: deposit types, empties, balances and adjustments (pydantic; the arithmetic is
domain/deposits.py)."""

from typing import Annotated

from pydantic import AfterValidator, Field, Strict

from . import limits
from .common import FieldError, Identifier, Shape, one_line_name


def _deposit_name(name: str) -> str:
    return one_line_name(name, 3, 64)


DEPOSIT_ID_LENGTH = 64
DEPOSIT_ID_RULE = f"must be 1-{DEPOSIT_ID_LENGTH} characters of [a-zA-Z0-9_-]"
DepositId = Annotated[Identifier, Field(max_length=DEPOSIT_ID_LENGTH)]
DepositPrice = Annotated[int, Strict(), Field(ge=0, le=limits.DEPOSIT_PRICE)]


class DepositBody(Shape):
    """PUT /deposits/:id."""

    id: DepositId | None = None
    name: Annotated[str, Strict(), AfterValidator(_deposit_name)]
    price: DepositPrice


class Deposit(Shape):
    id: str
    name: str
    price: int


class DepositList(Shape):
    deposits: list[Deposit]
    cursor: str | None = None


class Empty(Shape):
    """What comes back of one deposit type: announced with an order (count 1 or more) or collected with a response."""

    id: Identifier
    count: Annotated[int, Strict(), Field(ge=0, le=limits.DEPOSIT_COUNT)]


Empties = Annotated[list[Empty], Field(max_length=limits.EMPTIES)]


class DepositEntry(Shape):
    """An entry of `request.deposits`, `request.empties` and a response's `empties`: name and price as they were."""

    id: str
    name: str
    price: int
    count: int


class DeliveryDeposits(Shape):
    """A delivery's `deposits` on single reads."""

    charged: list[DepositEntry]
    returned: list[DepositEntry]
    total: int = Field(description="Σ charged count × price − Σ returned count × price, in cents; may be negative")


class ItemDeposit(Shape):
    id: str
    count: int


class Balance(Shape):
    id: str
    name: str
    price: int
    balance: int


class CustomerDeposits(Shape):
    """GET /customers/:id/deposits and GET /customer/deposits."""

    deposits: list[Balance]
    total: int


def _not_zero(count: int) -> int:
    if count == 0:
        raise ValueError("must not be 0")
    return count


class Adjustment(Shape):
    """POST /customers/:id/deposits: an opening balance or a correction."""

    id: Identifier
    count: Annotated[int, Strict(), Field(ge=-limits.DEPOSIT_COUNT, le=limits.DEPOSIT_COUNT), AfterValidator(_not_zero)]
    message: Annotated[str, Strict(), Field(min_length=1, max_length=limits.ADJUSTMENT_MESSAGE_LENGTH)]


def empties_errors(empties: list[Empty], known: dict, path: str, least: int) -> list[FieldError]:
    """Each deposit id at most once and known; counts of at least `least` (1 in orders, 0 in responses)."""
    errors, seen = [], set()
    for i, empty in enumerate(empties):
        if empty.id in seen:
            errors.append(FieldError(f"{path}[{i}].id", "names a deposit type already listed"))
        elif empty.id not in known:
            errors.append(FieldError(f"{path}[{i}].id", "is not a deposit type of this supplier"))
        seen.add(empty.id)
        if empty.count < least:
            errors.append(FieldError(f"{path}[{i}].count", f"must be at least {least}"))
    return errors


def empties_entries(empties: list[Empty], known: dict) -> list[dict]:
    """The empties as a delivery shows them, in id order, with the types' name and price now."""
    return [
        {"id": e.id, "name": known[e.id]["name"], "price": known[e.id]["price"], "count": e.count}
        for e in sorted(empties, key=lambda e: e.id)
    ]


def empties_size_errors(entries: list[dict], path: str) -> list[FieldError]:
    """A list of empties as the delivery shows it is bounded in bytes too (limits.EMPTIES_BYTES)."""
    return limits.size_errors(entries, limits.EMPTIES_BYTES, path, "a list of empties holds")
