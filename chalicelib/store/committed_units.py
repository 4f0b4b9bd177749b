"""The units of work with feed changes this thread committed since `forget` (one request: a Lambda instance, and
each of make run's API processes, serve one at a time). Apart from the unit of work so that every request's edge can
ask without loading it (http/edge.py, tests/api/test_cold_path.py)."""

import threading

_committed = threading.local()


def forget() -> None:
    _committed.units = []


def add(unit: str) -> None:
    _committed.units = [*getattr(_committed, "units", []), unit]


def units() -> list[str]:
    """In the order they committed: their entries carry `unit`."""
    return list(getattr(_committed, "units", []))
