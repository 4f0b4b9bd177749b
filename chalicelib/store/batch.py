"""Reading many items by key: BatchGetItem in chunks of 100 keys, retrying what DynamoDB leaves unprocessed."""

import datetime as dt
import time
from typing import Callable

from ..domain import retry
from ..domain.limits import CONTENTION_SECONDS
from . import table

MAX_KEYS = 100
MAX_ATTEMPTS = 8  # at least this many requests for keys DynamoDB leaves unprocessed (it is throttling)
THROTTLED_SECONDS = CONTENTION_SECONDS  # and on for as long as a contended write, when the caller gives its clock

Clock = Callable[[], dt.datetime]


class StillThrottled(Exception):
    """DynamoDB kept leaving items unprocessed (throttling) through every attempt: one of DynamoDB's own errors."""


def unprocessed_attempts(clock: Clock | None):
    """Attempt numbers for a batch request with items left over: at least MAX_ATTEMPTS, and on for
    THROTTLED_SECONDS of the caller's clock when it gives one (the store reads no clock of its own)."""
    return retry.attempts(clock, MAX_ATTEMPTS, THROTTLED_SECONDS)


def back_off(attempt: int) -> None:
    """A jittered pause growing to 1 s, so a throttled table gets room (a pause, not a reading of the time)."""
    retry.back_off(attempt, time.sleep, first=0.05, cap=1.0)


def get_items(keys: list[dict], consistent: bool = False, clock: Clock | None = None) -> dict[tuple[str, str], dict]:
    """The items found, by (PK, SK). Keys may repeat; missing items are simply absent from the result.
    `clock`: the caller's, bounding the retries of unprocessed keys (unprocessed_attempts)."""
    unique = list({(key["PK"], key["SK"]): key for key in keys}.values())
    found: dict[tuple[str, str], dict] = {}
    for start in range(0, len(unique), MAX_KEYS):
        chunk = [table.to_item(key) for key in unique[start : start + MAX_KEYS]]
        pending = {table.name(): {"Keys": chunk, "ConsistentRead": consistent}}
        for attempt in unprocessed_attempts(clock):
            if attempt:
                back_off(attempt - 1)
            response = table.client().batch_get_item(RequestItems=pending)
            for raw in response.get("Responses", {}).get(table.name(), []):
                item = table.from_item(raw)
                found[(item["PK"], item["SK"])] = item
            pending = response.get("UnprocessedKeys") or {}
            if not pending:
                break
        else:
            raise StillThrottled("DynamoDB left keys unprocessed after repeated BatchGetItem attempts")
    return found


def write_items(requests: list[dict], clock: Clock | None = None) -> None:
    """BatchWriteItem (puts and deletes) in chunks of 25, retrying what DynamoDB leaves unprocessed."""
    for start in range(0, len(requests), 25):
        pending = {table.name(): requests[start : start + 25]}
        for attempt in unprocessed_attempts(clock):
            if attempt:
                back_off(attempt - 1)
            pending = table.client().batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
        else:
            raise StillThrottled("DynamoDB left items unprocessed after repeated BatchWriteItem attempts")


def pick(found: dict[tuple[str, str], dict], key: dict) -> dict | None:
    return found.get((key["PK"], key["SK"]))
