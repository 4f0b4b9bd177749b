"""BatchGetItem over any number of keys: chunks of 100 (the API's limit), UnprocessedKeys retried."""
import random
import time

from . import table

MAX_KEYS = 100
MAX_ROUNDS = 8


def _identity(item: dict) -> tuple[str, str]:
    return item["PK"]["S"], item["SK"]["S"]


def get_items(keys: list[dict], consistent: bool = False) -> dict[tuple[str, str], dict]:
    """The items that exist among `keys` (plain key dicts), by (PK, SK), decoded.

    One request per 100 distinct keys; more only when DynamoDB returns UnprocessedKeys (throttling).
    """
    unique = list({(k["PK"], k["SK"]): k for k in keys}.values())
    found: dict[tuple[str, str], dict] = {}
    for start in range(0, len(unique), MAX_KEYS):
        request = {"Keys": [table.to_item(k) for k in unique[start : start + MAX_KEYS]], "ConsistentRead": consistent}
        for attempt in range(MAX_ROUNDS):
            response = table.client().batch_get_item(RequestItems={table.name(): request})
            for item in response.get("Responses", {}).get(table.name(), []):
                found[_identity(item)] = table.from_item(item)
            request = response.get("UnprocessedKeys", {}).get(table.name())
            if not request:
                break
            time.sleep(min(0.05 * 2**attempt, 1.0) * random.random())
        else:
            raise RuntimeError("DynamoDB kept returning unprocessed keys; try again")
    return found


def key_of(key: dict) -> tuple[str, str]:
    return key["PK"], key["SK"]
