"""A TransactWriteItems' capacity recounted item by item (bench/harness.py `attach(..., recount_transactions=True)`).

DynamoDB Local 3.x answers a whole transaction with the capacity of one of its items (a 20-item transaction of
small items: 2.0; AWS and Local 2.6 charge 2 units per item and KB: awslabs/amazon-dynamodb-local-samples#31).
Recounted here as Local charges one item in a transaction (checked against it: 2 units per KB on the table and 2
per KB on each index the item is in, an update's larger image counting; a ConditionCheck 2), from the items'
images read just before and just after the transaction on a client of its own (not metered).
"""

import math
import threading

INDEXES = ("GSI1", "GSI2", "GSI3")


def _value_size(value: dict) -> int:
    ((kind, found),) = value.items()
    if kind == "S":
        return len(found.encode())
    if kind == "N":
        return _number_size(found)
    if kind == "B":
        return len(found)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(member.encode()) for member in found)
    if kind == "NS":
        return sum(_number_size(member) for member in found)
    if kind == "BS":
        return sum(len(member) for member in found)
    if kind == "L":
        return 3 + sum(1 + _value_size(member) for member in found)
    if kind == "M":
        return 3 + sum(1 + len(name.encode()) + _value_size(member) for name, member in found.items())
    raise ValueError(kind)


def _number_size(text: str) -> int:
    digits = text.lstrip("-").replace(".", "").strip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def item_size(item: dict | None) -> int:
    """An item's size as DynamoDB counts it (attribute names and values), from its low-level form."""
    return sum(len(name.encode()) + _value_size(value) for name, value in (item or {}).items())


def _units(size: int) -> int:
    return max(1, math.ceil(size / 1024))


def write_units(kind: str, old: dict | None, new: dict | None) -> float:
    """One transaction item's capacity: the table's, then each index's the item leaves, enters or stays in."""
    if kind == "ConditionCheck":
        return 2  # whatever the item's size, as Local charges a check alone
    larger = max(item_size(old), item_size(new))
    units = 2 * _units(larger)
    for index in INDEXES:
        was, now = (image is not None and f"{index}PK" in image for image in (old, new))
        if was and now and all(old[f"{index}{part}"] == new[f"{index}{part}"] for part in ("PK", "SK")):
            units += 2 * _units(larger)
        else:
            units += 2 * _units(item_size(old)) * was + 2 * _units(item_size(new)) * now
    return units


class Recount:
    def __init__(self, client):
        import boto3

        self.reader = boto3.client(
            "dynamodb", endpoint_url=client.meta.endpoint_url, region_name=client.meta.region_name
        )
        self._local = threading.local()  # each thread's transaction under way (a client is shared by threads)

    @property
    def pending(self) -> list[tuple[str, str, dict, dict | None]]:
        return getattr(self._local, "pending", [])

    @pending.setter
    def pending(self, found: list) -> None:
        self._local.pending = found

    def _read(self, table: str, key: dict) -> dict | None:
        return self.reader.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")

    def before(self, items: list[dict]) -> None:
        self.pending = []
        for item in items:
            ((kind, operation),) = item.items()
            key = operation.get("Key") or {name: operation["Item"][name] for name in ("PK", "SK")}
            self.pending.append((kind, operation["TableName"], key, self._read(operation["TableName"], key)))

    def after(self) -> list[tuple[dict, float]]:
        """Each item of the transaction (its key) with its units."""
        found = []
        for kind, table, key, old in self.pending:
            new = None if kind in ("Delete", "ConditionCheck") else self._read(table, key)
            found.append((key, write_units(kind, old, new)))
        self.pending = []
        return found
