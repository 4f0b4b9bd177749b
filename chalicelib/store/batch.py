"""Reading many items by key: BatchGetItem in chunks of 100 keys, retrying what DynamoDB leaves unprocessed."""
import time

from . import table

MAX_KEYS = 100
MAX_ATTEMPTS = 8


def get_items(keys: list[dict], consistent: bool = False) -> dict[tuple[str, str], dict]:
    """The items found, by (PK, SK). Keys may repeat; missing items are simply absent from the result."""
    unique = list({(key["PK"], key["SK"]): key for key in keys}.values())
    found: dict[tuple[str, str], dict] = {}
    for start in range(0, len(unique), MAX_KEYS):
        chunk = [table.to_item(key) for key in unique[start : start + MAX_KEYS]]
        pending = {table.name(): {"Keys": chunk, "ConsistentRead": consistent}}
        for attempt in range(MAX_ATTEMPTS):
            response = table.client().batch_get_item(RequestItems=pending)
            for raw in response.get("Responses", {}).get(table.name(), []):
                item = table.from_item(raw)
                found[(item["PK"], item["SK"])] = item
            pending = response.get("UnprocessedKeys") or {}
            if not pending:
                break
            # Unprocessed keys mean throttling: back off before asking again.
            time.sleep(min(0.05 * 2**attempt, 1.0))
        else:
            raise RuntimeError("DynamoDB left keys unprocessed after repeated BatchGetItem attempts")
    return found


def pick(found: dict[tuple[str, str], dict], key: dict) -> dict | None:
    return found.get((key["PK"], key["SK"]))
