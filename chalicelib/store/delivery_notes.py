"""The delivery note on the delivery's items item (decisions §18), written once in the note's unit of work beside
store/delivery_writes.py `updating`, whose summary update carries the version condition."""

from ..domain.rendering import json_text
from . import keys, table
from .deliveries import NOTE
from .operations import Operation
from .outcomes import Stale


def recording(account: str, delivery: dict, version: int) -> Operation:
    """Keep the note beside the items and the amendments, which it freezes, written by the summary's `version` (the
    summary's update sets deliveries.items_attributes: a read tells the two apart); Stale if a note is there
    already."""
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.delivery_items_key(account, delivery["id"])),
        "UpdateExpression": "SET #note = :note, #version = :version",
        "ConditionExpression": "attribute_exists(PK) AND attribute_not_exists(#note)",
        "ExpressionAttributeNames": {"#note": NOTE, "#version": "version"},
        "ExpressionAttributeValues": table.values(note=json_text(delivery[NOTE]), version=version),
    }
    return Operation({"Update": update}, Stale())
