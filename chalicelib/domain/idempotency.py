"""Safe retries (decisions §11): how long the first answer to an Idempotency-Key is replayed."""

import datetime as dt

REPLAY_WINDOW = dt.timedelta(hours=24)
