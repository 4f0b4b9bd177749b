"""The resources feed entries name, read as they are now (GET /changes?include=data, webhook bodies): one
consistent BatchGetItem in chunks of the items each resource's row declares (store/feed_resources.py)."""

from ..domain.feed import Resource
from . import batch
from .feed_resources import FEED_RESOURCES


def current(account: str, entries: list[dict]) -> list:
    """The resource of each entry as it is now (None when gone, or for an entry of no resource this release
    knows), in the entries' order."""
    rows = [FEED_RESOURCES.get(_resource(entry)) for entry in entries]
    wanted = [row.reads(account, entry) if row is not None else [] for row, entry in zip(rows, entries)]
    found = batch.get_items([key for group in wanted for key in group], consistent=True)
    return [
        row.shown(entry, [batch.pick(found, key) for key in group]) if row is not None else None
        for row, entry, group in zip(rows, entries, wanted)
    ]


def _resource(entry: dict) -> Resource | None:
    try:
        return Resource(entry["resource"])
    except ValueError:  # feed.unreadable, or a resource of a newer release
        return None
