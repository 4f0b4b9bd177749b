"""Use case: read the account's change feed (decisions §13; docs/feed.md)."""

from ..domain.errors import FeedExpired, invalid
from ..domain.feed import DEFAULT_EVENTS, SETTINGS_WEBHOOKS, Resource, events_of
from ..domain.field_order import BY_MODEL, FEED_DATA, ordered
from ..domain.limits import PAGE_BYTES
from ..domain.rendering import json_text
from ..store import feed, feed_data, outcomes
from . import clock

DATA_CHUNK = 50  # entries whose resources a chunk reads (at most four keys each, a claim's: get_items splits by 100)
ENVELOPE_BYTES = 1024  # room for {"changes": [...], "last_sequence", "max_sequence"} around the entries


def _travels(entry: dict, data):
    """What of a resource may travel in the feed (the webhook settings without secrets or header values), in
    the field order of its GET."""
    if entry["resource"] == Resource.SETTINGS and entry["id"] == SETTINGS_WEBHOOKS and data is not None:
        return {"url": data["url"], "method": data.get("method", "POST"), "events": events_of(data)}
    if entry["resource"] == Resource.SETTINGS:
        return ordered(data, BY_MODEL["AccountDeliverySettings"])
    if entry["resource"] == Resource.STANDING_ORDER and entry.get("date"):  # a failed date (decisions §17)
        return ordered(data, BY_MODEL["Occurrence"])
    return ordered(data, FEED_DATA.get(entry["resource"]))


def _with_data(account: str, entries: list[dict]) -> list[dict]:
    """The entries with `data`, read in chunks; the page ends before its body would pass 5 MiB."""
    shown, size = [], ENVELOPE_BYTES
    for start in range(0, len(entries), DATA_CHUNK):
        chunk = entries[start : start + DATA_CHUNK]
        for entry, data in zip(chunk, feed_data.current(account, chunk)):
            with_data = {**entry, "data": _travels(entry, data)}
            size += len(json_text(with_data).encode()) + 1
            if size > PAGE_BYTES:
                return shown
            shown.append(with_data)
    return shown


def read_changes(account: str, after: int | None, limit: int, include_data: bool) -> dict:
    """The entries after `after` (None: `latest`), at most `limit`, with the positions a reader needs: a GetItem
    of the head and one Query of the entries (the table's stream numbers every change within §13's 5 seconds)."""
    read = feed.read(account, after, limit, clock.now())
    if isinstance(read, outcomes.Beyond):
        raise invalid("after", f"must not be greater than max_sequence ({read.max_sequence})")
    if isinstance(read, outcomes.Expired):
        raise FeedExpired(
            f"the change after sequence {after} is no longer kept; resynchronise in full: "
            "GET /changes?after=latest, then the lists, then follow the feed from there"
        )
    entries = _with_data(account, read.entries) if include_data and read.entries else read.entries
    last = entries[-1]["sequence"] if entries else (read.max_sequence if after is None else after)
    return {"changes": entries, "last_sequence": last, "max_sequence": read.max_sequence}


def event_body(event: dict) -> str | None:
    """The JSON text a webhook event sends (§10, §13): {type, idempotency_key, sequence, previous_sequence,
    data}, feed types with the entry's resource, id and customer_id before data. Legacy types carry the delivery as
    GET /deliveries/:id shows it now (None: the delivery is gone, the event can never be sent); feed types carry
    `data` as include=data gives it (null when gone). The same text on every attempt and resend but for `data`,
    which is read when sending. Events recorded before the feed have no
    sequence; events recorded before the outbox held no body keep theirs."""
    if "body" in event:
        return event["body"]
    body = {"type": event["type"], "idempotency_key": event["event_id"]}
    if event.get("sequence") is not None:
        body.update(sequence=int(event["sequence"]), previous_sequence=int(event.get("previous_sequence", 0)))
    if event["type"] in DEFAULT_EVENTS:
        from ..store import deliveries  # only legacy delivery events read a delivery: GET /changes does not load it

        stored = deliveries.get(event["account"], int(event["delivery_id"]), consistent=True)
        if stored is None:
            return None
        body["data"] = ordered(stored.delivery, FEED_DATA[Resource.DELIVERY])
    else:  # the entry's resource, id and customer_id: what a `*.deleted` event (data null) is about
        entry = {"resource": event["resource"], "id": event["resource_id"]}
        entry.update({name: event[name] for name in ("customer_id", "date") if event.get(name) is not None})
        body.update({name: entry[name] for name in ("resource", "id", "customer_id", "date") if name in entry})
        body["data"] = _travels(entry, feed_data.current(event["account"], [entry])[0])
    return json_text(body)
