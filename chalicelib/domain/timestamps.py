"""The one timestamp format of the service: ISO 8601 in UTC with milliseconds, 2026-05-04T09:30:00.000Z.

Deliveries, responses, events, attempts and imports all write it; sorted as text it sorts by time."""
import datetime as dt


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
