"""Items whose document is one `data` map (customers, settings): changed field by field in one conditional write
(service/documents.py reads, decides and writes them in its unit of work).

Setting top-level fields of `data` instead of rewriting it lets two writers own different fields of the same
document (the profile and the settings of a customer) without reading it first.
"""

from . import batch, table
from .operations import Operation
from .outcomes import Stale

_NEW = "attribute_not_exists(PK)"


def _update_request(key: dict, set_fields: dict, remove_fields: tuple[str, ...]) -> dict:
    names = {"#data": "data"}
    values = {}
    sets, removes = [], []
    for i, (field, value) in enumerate(set_fields.items()):
        names[f"#s{i}"] = field
        values[f":s{i}"] = table.to_attr(value)
        sets.append(f"#data.#s{i} = :s{i}")
    for i, field in enumerate(remove_fields):
        names[f"#r{i}"] = field
        removes.append(f"#data.#r{i}")
    clauses = [("SET", sets), ("REMOVE", removes)]
    expression = " ".join(f"{verb} {', '.join(paths)}" for verb, paths in clauses if paths)
    request = {
        "TableName": table.name(),
        "Key": table.to_item(key),
        "UpdateExpression": expression,
        "ConditionExpression": "attribute_exists(#data)",
        "ExpressionAttributeNames": names,
    }
    if values:
        request["ExpressionAttributeValues"] = values
    return request


def get(key: dict, consistent: bool = False) -> dict | None:
    response = table.client().get_item(TableName=table.name(), Key=table.to_item(key), ConsistentRead=consistent)
    return table.from_item(response["Item"])["data"] if "Item" in response else None


def applied(current: dict, set_fields: dict, remove_fields: tuple[str, ...]) -> dict:
    """The document with the fields set and removed."""
    changed = {k: v for k, v in current.items() if k not in remove_fields}
    changed.update(set_fields)
    return changed


def read_for_write(key: dict) -> dict | None:
    """The document read consistently (what a write starts from)."""
    item = batch.pick(batch.get_items([key], consistent=True), key)
    return item.get("data") if item is not None else None


def same(shown: object, other: object) -> bool:
    """Two documents (or what readers see of them) read the same: writing one over the other changes nothing."""
    return table.plain(shown) == table.plain(other)


def creating(key: dict, document: dict) -> Operation:
    """Create the item holding `document`; Stale when someone created it meanwhile (read again)."""
    put = {"TableName": table.name(), "Item": table.to_item({**key, "data": document}), "ConditionExpression": _NEW}
    return Operation({"Put": put}, Stale())


def updating(key: dict, set_fields: dict, remove_fields: tuple[str, ...]) -> Operation:
    """Set and remove fields of the existing document; Stale when it went meanwhile (read again)."""
    return Operation({"Update": _update_request(key, set_fields, remove_fields)}, Stale())
