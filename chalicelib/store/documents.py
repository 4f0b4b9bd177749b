"""Items whose document is one `data` map (customers, settings): changed field by field in one conditional write.

Setting top-level fields of `data` instead of rewriting it lets two writers own different fields of the same
document (the profile and the settings of a customer) without reading it first.
"""

import datetime as dt
from dataclasses import dataclass
from typing import Callable

from botocore.exceptions import ClientError

from ..domain.feed import Change
from . import batch, feed, table
from .outcomes import Gone

CREATE_ATTEMPTS = 5


class KeptChanging(Exception):
    """Other writers kept creating and changing the document between our read and our write (retries ran out)."""


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
        "ReturnValues": "ALL_NEW",
    }
    if values:
        request["ExpressionAttributeValues"] = values
    return request


def get(key: dict, consistent: bool = False) -> dict | None:
    response = table.client().get_item(TableName=table.name(), Key=table.to_item(key), ConsistentRead=consistent)
    return table.from_item(response["Item"])["data"] if "Item" in response else None


@dataclass(frozen=True)
class Entry:
    """The feed entry a change of the document appends: `created` when the write creates it, else `updated`."""

    account: str
    created: Change
    updated: Change


def _applied(current: dict, set_fields: dict, remove_fields: tuple[str, ...]) -> dict:
    changed = {k: v for k, v in current.items() if k not in remove_fields}
    changed.update(set_fields)
    return changed


def update(
    key: dict,
    set_fields: dict,
    remove_fields: tuple[str, ...] = (),
    create_with: dict | None = None,
    *,
    entry: Entry | None = None,
    now: dt.datetime,
    shown: Callable[[dict | None], object] = lambda document: document,
):
    """Set and remove fields of the document in one conditional write with its feed entry; the new document.

    A missing item stays missing and gives Gone, unless create_with is given: then the item is created holding
    create_with (which should already include set_fields). The document is read first (one consistent
    BatchGetItem): a write that changes nothing `shown` (what a GET shows) writes nothing and appends no entry.
    """
    if not set_fields and not remove_fields:
        # Nothing to change, so nothing to create either: a missing item still reads as create_with.
        current = get(key, consistent=True)
        if current is None:
            return create_with if create_with is not None else Gone()
        return current
    for _ in range(CREATE_ATTEMPTS):
        found = batch.get_items([key], consistent=True)
        item = batch.pick(found, key)
        current = item.get("data") if item is not None else None
        if current is None and create_with is None:
            return Gone()
        changed = _applied(current, set_fields, remove_fields) if current is not None else create_with
        if table.plain(shown(current)) == table.plain(shown(changed)):
            return changed  # nothing a reader sees would change (a missing item reads as create_with)
        if current is None:
            operation = {
                "Put": {
                    "TableName": table.name(),
                    "Item": table.to_item({**key, "data": create_with}),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            }
        else:
            request = _update_request(key, set_fields, remove_fields)
            del request["ReturnValues"]
            operation = {"Update": request}
        changes = [entry.created if current is None else entry.updated] if entry is not None else []
        try:
            feed.commit(entry.account if entry else "", [operation], changes, now)
            return changed
        except ClientError as error:
            if table.CONDITION_FAILED not in table.cancellation_codes(error):
                raise
        # Created, changed or removed by someone else between our read and our write: read again.
    raise KeptChanging()
