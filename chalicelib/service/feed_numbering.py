"""Use case: give pending feed entries their sequences (decisions §13; docs/feed.md "Numbering").

The table stream (AWS) numbers the accounts whose pending entries it sees, the background loop (`make run`, and
the one-minute schedule in AWS) sweeps every account with pending entries, and a reader of the feed numbers its
own account first, so an entry is readable as soon as anyone reads.
"""
import datetime as dt

from ..store import feed_numbering
from . import clock

SWEEP_ACCOUNTS = 100  # accounts one sweep reads from each shard of the pending index
# A sweep leaves changes younger than this to a reader of the feed, which numbers inline: two sequencers of one
# account racing waste each other's transactions. Entries are still readable well within §13's 5 seconds.
SWEEP_SETTLE = dt.timedelta(seconds=0.5)
# A pending entry a numbering emptied is deleted once it stayed empty this long (deleting it at once would refuse
# writes appending to a busy resource; keeping it keeps its account in the pending index).
CLEAR_EMPTIED_AFTER = dt.timedelta(seconds=5)


def number_accounts(accounts: list[str], deadline: dt.datetime, settle: dt.timedelta | None = None) -> dict:
    """Number each account's pending entries until none is left or `deadline` passes. `settle`: leave changes
    younger than that (to a reader) and delete entries emptied CLEAR_EMPTIED_AFTER ago; None numbers everything."""
    numbered, left = 0, 0
    for account in dict.fromkeys(accounts):
        while True:
            now = clock.now()
            if now >= deadline:
                return {"numbered": numbered, "left": left + 1}
            ages = {} if settle is None else {"settled_before": now - settle, "clear_before": now - CLEAR_EMPTIED_AFTER}
            outcome = feed_numbering.number(account, now, **ages)
            numbered += outcome.count
            if outcome.done or outcome.count == 0:
                left += not outcome.done
                break
    return {"numbered": numbered, "left": left}


def sweep(deadline: dt.datetime) -> dict:
    """Every account with pending entries (as the pending index shows them), but their newest changes."""
    return number_accounts(feed_numbering.accounts_pending(clock.now(), SWEEP_ACCOUNTS), deadline, SWEEP_SETTLE)
