"""What the outbox keeps per account, beside its events (store/events.py): the parked lane and the resend window.

The lane item (keys.outbox_lane_key) says an account is parked: its receiver failed and it is not tried again
before `parked_until` (jobs/event_lanes.py); a PUT of the webhook settings removes it. The resend window item
(keys.resend_window_key) holds the times of the account's accepted resend requests (decisions §10).
"""

import datetime as dt
import time
from dataclasses import dataclass

from ..domain import event_policy
from ..domain.retry import attempts, back_off
from ..domain.timestamps import iso, parse_iso
from . import batch, keys, operations, table
from .operations import Operation
from .outcomes import Stale, Throttled


@dataclass(frozen=True)
class Lane:
    account: str
    parked_until: str
    reason: str


def accept_resend(account: str, now: dt.datetime, tries: int = 5) -> None | Throttled:
    """Count a resend request against the account's window (decisions §10): None when accepted, else Throttled
    until the next one will be. One small item per account holds the times of the accepted requests in the window;
    it is written conditionally on the version read, so concurrent requests never both take the last place."""
    key = table.to_item(keys.resend_window_key(account))
    for attempt in attempts(None, tries, 0):  # bounded by count: the store reads no clock
        if attempt:
            back_off(attempt - 1, time.sleep, first=0.005, cap=0.05)
        response = table.client().get_item(TableName=table.name(), Key=key, ConsistentRead=True)
        stored = table.from_item(response["Item"]) if "Item" in response else {}
        times = [parse_iso(moment) for moment in stored.get("times", [])]
        kept, allowed_at = event_policy.resend_window(times, now)
        if allowed_at is not None:
            return Throttled(allowed_at)
        version = int(stored.get("version", 0))
        put = {
            "TableName": table.name(),
            "Item": table.to_item(
                {**keys.resend_window_key(account), "times": [iso(t) for t in kept + [now]], "version": version + 1}
            ),
            "ConditionExpression": "attribute_not_exists(PK) OR version = :version",
            "ExpressionAttributeValues": table.values(version=version),
        }
        refused = operations.write(Operation({"Put": put}, Stale()))
        if refused is None:
            return None
    return Throttled(now + dt.timedelta(seconds=1))  # contended past all tries: ask the caller to come back shortly


def lanes(accounts: list[str]) -> dict[str, Lane]:
    """The parked lanes among these accounts (one BatchGetItem per 100)."""
    wanted = [keys.outbox_lane_key(account) for account in accounts]
    found = batch.get_items(wanted, consistent=True)
    parked = {}
    for account, key in zip(accounts, wanted):
        item = batch.pick(found, key)
        if item is not None:
            parked[account] = Lane(account, item["parked_until"], item.get("reason", ""))
    return parked


def parking(account: str, until: dt.datetime, reason: str) -> Operation:
    """Park the account until `until`: written with the failed attempt that parks it (event_attempts.record_attempt),
    and with it only while the webhook settings it was made under are current."""
    item = table.to_item({**keys.outbox_lane_key(account), "parked_until": iso(until), "reason": reason})
    return Operation({"Put": {"TableName": table.name(), "Item": item}})


def unpark(account: str) -> None:
    operations.write(
        Operation({"Delete": {"TableName": table.name(), "Key": table.to_item(keys.outbox_lane_key(account))}})
    )
