"""The one timestamp format of the service: ISO 8601 in UTC with milliseconds, 2026-05-04T09:30:00.000Z.

Deliveries, responses, events, attempts and imports all write it; sorted as text it sorts by time."""

import datetime as dt


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def local_iso(moment: dt.datetime, zone_name: str, timespec: str = "seconds") -> str:
    """RFC 3339 with the offset of an IANA time zone (an account's), to the second unless `timespec` says more."""
    from zoneinfo import ZoneInfo  # here, not at the top: cold reads of timestamps never load it

    return moment.astimezone(ZoneInfo(zone_name)).isoformat(timespec=timespec)


def parse_iso(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


def in_words(span: dt.timedelta) -> str:
    """A policy's duration as messages and the OpenAPI document write it: "24 hours", "10 seconds", "1 minute"."""
    seconds = int(span.total_seconds())
    for unit, size in (("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return "0 seconds"
