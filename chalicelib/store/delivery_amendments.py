"""The items item of an amended delivery (decisions §16): its new request items and its amendment records, written
whole in the amendment's transaction (store/deliveries.py `change`, whose summary update carries the condition)."""

from ..domain.rendering import json_text
from . import keys, table
from .deliveries import AMENDMENTS


def items_operation(account: str, delivery: dict) -> dict:
    """The transaction item that replaces the delivery's items and amendment records."""
    item = {
        **keys.delivery_items_key(account, delivery["id"]),
        "items": delivery["request"]["items"],
        AMENDMENTS: json_text(delivery["amendments"]),
    }
    return {"Put": {"TableName": table.name(), "Item": table.to_item(item)}}
