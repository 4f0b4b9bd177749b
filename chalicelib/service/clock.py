"""The one place use cases read the time (tests replace `now`)."""
import datetime as dt


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)
