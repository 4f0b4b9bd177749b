"""Use cases: replay the table's stream into the feed, and mark what it holds as numbered (docs/deploy.md).

The feed is numbered from the stream through the forwarder and the feed queue (service/feed_forwarding.py,
service/feed_numbering.py). A replay reads the stream again from its start (store/stream_records.py), turns its
records into the same Marked records the forwarder sends, and numbers each account's in the stream's order with the
numbering of the queue (store/feed_sequencer.number): each record's item skips what was numbered before, by the queue
or an earlier replay, so it numbers exactly what is missing and nothing twice, while the queue's numbering runs. An
account whose numbering fails keeps the rest of its records for the next run (numbering past one could put a
resource's changes out of order); the other accounts go on.
"""

import logging
import math
from dataclasses import dataclass
from typing import Callable, Iterator

from chalice.app import DynamoDBEvent

from ..store import feed_records, feed_sequencer, stream_records
from ..store.feed_marks import Marked
from . import clock
from .feed_forwarding import records_marked

log = logging.getLogger("supplier-ordering.feed")

CHUNK = 200  # an account's records numbered (and looked up) together: about four numbering transactions
HELD_AT_MOST = 5_000  # records read and not yet numbered, all accounts together, before every account's are
ATTEMPTS = 3  # numberings of a chunk that the running numbering kept overtaking, before the account is left


@dataclass
class Tally:
    """One account's records in a replay."""

    read: int = 0
    now: int = 0  # numbered (or marked numbered) by this run, or by the queue's numbering meanwhile
    before: int = 0  # found numbered before
    left: int = 0  # not numbered: the account's numbering failed (`error`), to be replayed again
    error: str | None = None


def replay(since=None, account: str | None = None, streams=None) -> dict[str, Tally]:
    """Number every change the stream holds that the feed is missing, each account's in the stream's order: only
    records created at or after `since` (a datetime, to the second), only `account`'s. Per account, its tally."""
    return _run(since, account, streams, _number)


def mark_numbered(streams=None) -> dict[str, Tally]:
    """Write the record item of every change the stream holds that has none, without numbering it."""
    return _run(None, None, streams, _mark)


def _run(since, account: str | None, streams, handle: Callable[[str, list[Marked], Tally], None]) -> dict[str, Tally]:
    tallies: dict[str, Tally] = {account: Tally()} if account else {}
    for owner, records in _chunks(since, account, streams):
        tally = tallies.setdefault(owner, Tally())
        tally.read += len(records)
        handle(owner, records, tally)
    return tallies


def _chunks(since, account: str | None, streams) -> Iterator[tuple[str, list[Marked]]]:
    """Each account's records in the stream's order, a chunk at a time."""
    first = math.floor(since.timestamp()) if since is not None else None
    held: dict[str, list[Marked]] = {}
    count = 0
    for _, batch in stream_records.batches(streams):
        for _, record in records_marked(DynamoDBEvent({"Records": batch}, None)):
            if (account is not None and record.account != account) or (first is not None and record.created < first):
                continue
            held.setdefault(record.account, []).append(record)
            count += 1
            if len(held[record.account]) >= CHUNK:
                count -= len(held[record.account])
                yield record.account, held.pop(record.account)
        if count >= HELD_AT_MOST:
            yield from held.items()
            held, count = {}, 0
    yield from held.items()


def _number(account: str, records: list[Marked], tally: Tally) -> None:
    if tally.error is not None:
        tally.left += len(records)
        return
    before = feed_records.numbered(account, [record.id for record in records])
    tally.before += len(before)
    todo = [record for record in records if record.id not in before]
    for _ in range(ATTEMPTS):
        if not todo:
            return
        try:
            done = feed_sequencer.number(account, todo, now=clock.now()).done
        except Exception as error:  # noqa: BLE001 - one account's failure is its own: reported, the others go on
            log.exception("replaying the feed of account %s failed", account)
            tally.error = f"{type(error).__name__}: {error}"
            break
        tally.now += sum(record.id in done for record in todo)
        todo = [record for record in todo if record.id not in done]
    if todo and tally.error is None:
        tally.error = "its feed head kept moving under the replay (another numbering of the account)"
    tally.left += len(todo)


def _mark(account: str, records: list[Marked], tally: Tally) -> None:
    written = feed_records.mark_numbered(account, records)
    tally.now += len(written)
    tally.before += len(records) - len(written)
