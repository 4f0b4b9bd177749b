"""How a writer finds its own changes in the feed (decisions §13: an entry is readable within 5 seconds of its
change, not at once): every answer of a request that committed feed changes names their unit of work, and each of
their entries carries it as `unit` (docs/sync.md "Reading your own write")."""

from ..store import committed_units


def begin_request() -> None:
    committed_units.forget()


def committed() -> list[str]:
    """The units of work with feed changes the request committed, in order."""
    return committed_units.units()
