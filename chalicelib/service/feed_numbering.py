"""Use case: give pending feed entries their sequences (decisions §13; docs/feed.md "Numbering").

The table stream (AWS) numbers the accounts whose pending entries it sees, the background loop (`make run`, and
the one-minute schedule in AWS) sweeps every account with pending entries, and a reader of the feed numbers its
own account first, so an entry is readable as soon as anyone reads.
"""
import datetime as dt

from ..store import feed_numbering
from . import clock

SWEEP_ACCOUNTS = 100  # accounts one sweep reads from each shard of the pending index


def number_accounts(accounts: list[str], deadline: dt.datetime) -> dict:
    """Number each account's pending entries until none is left or `deadline` passes."""
    numbered, left = 0, 0
    for account in dict.fromkeys(accounts):
        while True:
            if clock.now() >= deadline:
                return {"numbered": numbered, "left": left + 1}
            outcome = feed_numbering.number(account, clock.now())
            numbered += outcome.count
            if outcome.done or outcome.count == 0:
                left += not outcome.done
                break
    return {"numbered": numbered, "left": left}


def sweep(deadline: dt.datetime) -> dict:
    """Every account with pending entries (as the pending index shows them)."""
    return number_accounts(feed_numbering.accounts_pending(clock.now(), SWEEP_ACCOUNTS), deadline)
