"""The statement of a customer's deposit balances (decisions §15): every move of a balance, kept.

One record per move of the balances (a receive, an adjustment) holds every type it moved, `moves` `{deposit id:
{"name", "price", "count"}}`: a receive may move far more types than one DynamoDB transaction has items (up to
200 charged plus 50 returned, against 100 actions), so the record is one Put in the move's own transaction. A
record shows as one movement per type, in id order; the statement lists records newest first.
"""

from pydantic import Field

from .common import Shape


class Movement(Shape):
    """One move of one balance."""

    at: str = Field(description="When the balance moved (ISO 8601, UTC)")
    id: str = Field(description="The deposit type")
    name: str = Field(description="The type's name as the move valued it (the delivery's; the type's at an adjustment)")
    price: int = Field(description="The type's price in cents as the move valued it")
    count: int = Field(description="Signed: + charged, − returned, an adjustment's own sign")
    delivery_id: int | None = Field(None, description="A receive: the delivery received")
    message: str | None = Field(None, description="An adjustment: its message")


class MovementList(Shape):
    """GET /customers/:id/deposits/movements and GET /customer/deposits/movements."""

    movements: list[Movement]
    cursor: str | None = None


def receive_moves(deposits: dict | None) -> dict[str, dict]:
    """What receiving a delivery moves, per type, valued as the delivery values it: charged counts up, returned
    counts down; a type whose counts cancel out moves nothing."""
    moves: dict[str, dict] = {}
    for entry_list, sign in (((deposits or {}).get("charged") or (), 1), ((deposits or {}).get("returned") or (), -1)):
        for entry in entry_list:
            moved = moves.setdefault(entry["id"], {"name": entry["name"], "price": entry["price"], "count": 0})
            moved["count"] += sign * entry["count"]
    return {d: m for d, m in moves.items() if m["count"]}


def counts(moves: dict[str, dict]) -> dict[str, int]:
    """{deposit id: count} of a record's moves: what the balances item adds."""
    return {d: m["count"] for d, m in moves.items()}


def movements_of(record: dict, deposit: str | None = None) -> list[dict]:
    """The movements a record shows, in id order (only `deposit`'s when given), fields in the statement's order."""
    shown = []
    for deposit_id in sorted(record["moves"]):
        if deposit is not None and deposit_id != deposit:
            continue
        moved = record["moves"][deposit_id]
        movement = {
            "at": record["at"],
            "id": deposit_id,
            "name": moved["name"],
            "price": int(moved["price"]),
            "count": int(moved["count"]),
        }
        if record.get("delivery_id") is not None:
            movement["delivery_id"] = int(record["delivery_id"])
        if record.get("message") is not None:
            movement["message"] = record["message"]
        shown.append(movement)
    return shown
