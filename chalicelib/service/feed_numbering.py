"""Use case: give the changes a stream batch shows their sequences (decisions §13; docs/feed.md "Numbering").

The table stream hands one shard's records at a time to jobs/handlers.py, in AWS as with `make run`; the marks on
them (store/feed_marks.py) say which changes they are. The batch's accounts take turns, TURN_RECORDS records each,
so an import's thousands of rows are numbered in turns, never ahead of another account's one change.
"""

import datetime as dt
import logging

from ..store import feed_marks, feed_numbering
from ..store.feed_numbering import Marked
from . import clock

log = logging.getLogger("supplier-ordering.feed")

TURN_RECORDS = 200  # about four numbering transactions: one account's turn before the next account's
# A deletion's entry says when it happened: the record's creation, which the stream gives to the second (to the
# minute in DynamoDB Local), or the numbering's time when it is that close behind.
RECORD_TIME_TRUSTED_AFTER = dt.timedelta(minutes=5)


def marked(records) -> dict[str, list[Marked]]:
    """The batch's changes per account, in the stream's order: `records` are Chalice DynamoDBRecords."""
    now = clock.now()
    found: dict[str, list[Marked]] = {}
    for record in records:
        created = record.timestamp.replace(tzinfo=dt.timezone.utc)
        deleted_at = now if now - created < RECORD_TIME_TRUSTED_AFTER else created
        shown = feed_marks.changes_of(record.event_name, record.new_image, record.old_image, deleted_at)
        if shown is not None:
            account, changes = shown
            found.setdefault(account, []).append(Marked(record.sequence_number, int(created.timestamp()), changes))
    return found


def number_batch(
    shard: str, by_account: dict[str, list[Marked]], deadline: dt.datetime, failed: set[str] | None = None
) -> dict:
    """Number the accounts' records in turns until all are numbered or `deadline` passes (the rest are left: the
    stream hands them over again). `failed`: an account whose numbering raised or kept losing is added to it (and
    logged) and the others go on; None raises."""
    numbered, waiting = 0, {account: list(records) for account, records in by_account.items() if records}
    while waiting:
        for account in list(waiting):
            if clock.now() >= deadline:
                if failed is not None:
                    failed.update(waiting)
                return {"numbered": numbered, "left": len(waiting)}
            turn, rest = waiting[account][:TURN_RECORDS], waiting[account][TURN_RECORDS:]
            try:
                outcome = feed_numbering.number(account, shard, turn)
            except Exception:
                if failed is None:
                    raise
                log.exception("numbering the feed of account %s failed", account)
                outcome = None
            if outcome is None or not outcome.done:
                if failed is not None:
                    failed.add(account)
                del waiting[account]
                continue
            numbered += outcome.count
            if rest:
                waiting[account] = rest
            else:
                del waiting[account]
    return {"numbered": numbered, "left": 0}
