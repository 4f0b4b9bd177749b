"""The image job: downloads queued product images in per-account turns (decisions §5 and §10).

An entry point like http/: the schedule, the table stream and the `make run` loop call `run`, which reads the
queue and gives each account's images turns (jobs/turns.py); downloading one is the service's use case
(service/images.py).
"""

import datetime as dt

from ..service import clock
from .turns import in_turns

BATCH = 10  # downloads one run starts
SCAN = 100  # queued images read from each shard, so the batch can take turns between accounts


def run(deadline: dt.datetime | None = None, limit: int = BATCH) -> dict:
    """Download queued images, accounts taking turns, at most `limit`, none started at or after `deadline`;
    returns counts of what happened (`due`: how many were queued and due, up to the read's size)."""
    from ..service import images

    summary = {
        "due": 0,
        "downloaded": 0,
        "failed": 0,
        "unchanged": 0,
        "changed": 0,
        "claimed_elsewhere": 0,
        "crashed": 0,
    }
    due = images.due_images(max(limit, SCAN))
    summary["due"] = len(due)
    for item in in_turns(due, lambda queued: queued["account"])[:limit]:
        if deadline is not None and clock.now() >= deadline:
            break
        summary[images.download(item)] += 1
    return summary
