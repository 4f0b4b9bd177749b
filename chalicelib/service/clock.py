"""The one clock: every use case and every job reads the time here, and deadlines are moments of it.

`current()` is the clock in use; `now()` reads it. Jobs take deadlines as moments of the same clock, never as
time.monotonic() values, so a test moves time for the service and the jobs alike by installing a `FakeClock`
(`use`) and advancing it; nothing patches `now` or time.monotonic.
"""

import datetime as dt
import threading


class Clock:
    """Real time (UTC)."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.timezone.utc)

    def wait(self, seconds: float, stop: threading.Event) -> bool:
        """Pause a loop for `seconds` or until `stop` is set; True when stopped."""
        return stop.wait(seconds)


class FakeClock(Clock):
    """Time that moves only when told (tests, benchmarks)."""

    def __init__(self, start: dt.datetime):
        self._now = start if start.tzinfo else start.replace(tzinfo=dt.timezone.utc)
        self._lock = threading.Lock()

    def now(self) -> dt.datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float | dt.timedelta) -> dt.datetime:
        step = seconds if isinstance(seconds, dt.timedelta) else dt.timedelta(seconds=seconds)
        with self._lock:
            self._now += step
            return self._now

    def set(self, moment: dt.datetime) -> None:
        with self._lock:
            self._now = moment

    def wait(self, seconds: float, stop: threading.Event) -> bool:
        """A loop's pause: only long enough to yield to other threads; the time moves when a test says."""
        return stop.wait(min(seconds, 0.01))


_current: Clock = Clock()


def current() -> Clock:
    return _current


def use(clock: Clock) -> Clock:
    """Put `clock` in use for every use case and job; returns the one it replaces (to put back)."""
    global _current
    previous, _current = _current, clock
    return previous


def now() -> dt.datetime:
    return _current.now()


def after(seconds: float) -> dt.datetime:
    """A deadline `seconds` from now."""
    return now() + dt.timedelta(seconds=seconds)
