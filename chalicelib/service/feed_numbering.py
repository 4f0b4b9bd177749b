"""Use case: give pending feed entries their sequences (decisions §13; docs/feed.md "Numbering").

The table stream (AWS) numbers the accounts whose pending entries it sees, the background loop (`make run`, and
the one-minute schedule in AWS) sweeps every account with pending entries, and a reader of the feed numbers its
own account first, so an entry is readable as soon as anyone reads.
"""

import datetime as dt
import logging

from ..store import feed_numbering, feed_queue
from . import clock

log = logging.getLogger("supplier-ordering.feed")

SWEEP_ACCOUNTS = 100  # accounts one sweep reads from each shard of the pending index
# A sweep leaves changes younger than this to a reader of the feed, which numbers inline: two sequencers of one
# account racing waste each other's transactions. Entries are still readable well within §13's 5 seconds.
SWEEP_SETTLE = dt.timedelta(seconds=0.5)
# A pending entry a numbering emptied while its resource was busy is deleted once it stayed empty this long
# (deleting it at once would refuse writes appending to it; keeping it keeps a key in the pending index).
CLEAR_EMPTIED_AFTER = dt.timedelta(seconds=5)
# Transactions (each up to ~49 changes) one account's turn takes before the next account's turn: an account's
# import of thousands of rows is numbered in turns, never ahead of another account's one change.
TURN_ROUNDS = 5


def number_accounts(
    accounts: list[str], deadline: dt.datetime, settle: dt.timedelta | None = None, failed: set[str] | None = None
) -> dict:
    """Number the accounts' pending entries in turns (each account at most TURN_ROUNDS transactions a turn, the
    next turn for those that had more) until none is left or `deadline` passes. `settle`: leave changes younger
    than that (to a reader) and delete entries emptied CLEAR_EMPTIED_AFTER ago; None numbers everything.
    `failed`: an account whose numbering raises is added to it (and logged) and the others go on."""
    numbered, left, waiting = 0, 0, list(dict.fromkeys(accounts))
    while waiting:
        more: list[str] = []
        for index, account in enumerate(waiting):
            now = clock.now()
            if now >= deadline:
                return {"numbered": numbered, "left": left + len(more) + len(waiting) - index}
            ages = {} if settle is None else {"settled_before": now - settle, "clear_before": now - CLEAR_EMPTIED_AFTER}
            try:
                outcome = feed_numbering.number(account, now, rounds=TURN_ROUNDS, **ages)
            except Exception:
                if failed is None:
                    raise
                log.exception("numbering the feed of account %s failed", account)
                failed.add(account)
                continue
            numbered += outcome.count
            if not outcome.done:
                if outcome.count:
                    more.append(account)  # another turn after the others'
                else:
                    left += 1  # lost its races: the next run tries again
        waiting = more
    return {"numbered": numbered, "left": left}


def sweep(deadline: dt.datetime) -> dict:
    """Every account with pending entries (as the pending index shows them, one turn each), but their newest
    changes."""
    return number_accounts(feed_queue.accounts_pending(SWEEP_ACCOUNTS), deadline, SWEEP_SETTLE)
