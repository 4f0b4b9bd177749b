"""`make run`: the table's stream wakes the loop whose work a record shows, as it starts that work in AWS.

Each of `make run`'s event, image and import loops waits on its `Bell`: a stream record of new
work rings it (jobs/handlers.on_table_change with `wake`), and its own slow interval is only the safety net the
one-minute schedule is in AWS (a retry coming due, a record missed). So an idle `make run` reads no queue several
times a second (issue 34).
"""

import threading

from ..service import clock


class Bell:
    """Rung for one loop, with the events the stream brought (the events loop sends them without reading its queue)."""

    def __init__(self, stop_event: threading.Event):
        self.stop_event = stop_event
        self._rung = threading.Event()
        self._lock = threading.Lock()
        self._events: list[dict] = []

    def ring(self, events: list[dict] = ()) -> None:
        with self._lock:
            self._events.extend(events)
        self._rung.set()

    def wait(self, seconds: float) -> bool:
        """Until rung, stopped or `seconds` passed; True when it was rung (or stopped), False on the interval."""
        rung = clock.current().wait(seconds, self._rung)
        self._rung.clear()  # before the work: a ring during the work makes the next wait return at once
        return rung or self.stop_event.is_set()

    def take_events(self) -> list[dict]:
        with self._lock:
            events, self._events = self._events, []
        return events


def pause(stop_event: threading.Event, seconds: float, bell: Bell | None = None) -> bool:
    """A loop's pause: on its bell when it has one (True when rung), else `seconds` or until stopped."""
    if bell is None:
        return clock.current().wait(seconds, stop_event)
    return bell.wait(seconds)


class Bells:
    """The bells of `make run`'s loops (`feed`: the feed queue's poller, rung when the forwarder sent to it);
    `stop()` ends every loop waiting on one."""

    def __init__(self, stop_event: threading.Event | None = None):
        self.stop_event = stop_event or threading.Event()
        self.events, self.images, self.imports, self.feed = (Bell(self.stop_event) for _ in range(4))

    def stop(self) -> None:
        self.stop_event.set()
        for bell in (self.events, self.images, self.imports, self.feed):
            bell.ring()
