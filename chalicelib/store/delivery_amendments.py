"""The items item of an amended delivery (decisions §16): its new request items and its amendment records, written
whole in the amendment's unit of work (beside store/delivery_writes.py `updating`, whose summary update carries the
condition)."""

from ..domain.rendering import json_text
from . import keys, table
from .deliveries import AMENDMENTS
from .operations import Operation


def replacing_items(account: str, delivery: dict, version: int) -> Operation:
    """Replace the delivery's items and amendment records, written by the summary's `version` (which the summary
    update names: store/deliveries.py `items_attributes`, so a read tells the two apart)."""
    item = {
        **keys.delivery_items_key(account, delivery["id"]),
        "items": delivery["request"]["items"],
        AMENDMENTS: json_text(delivery["amendments"]),
        "version": version,
    }
    return Operation({"Put": {"TableName": table.name(), "Item": table.to_item(item)}})
