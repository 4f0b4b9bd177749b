"""Documents changed field by field (customers, settings): what their contention means to callers, said once."""

from contextlib import contextmanager

from ..domain.errors import Conflict
from ..store.documents import KeptChanging


@contextmanager
def contention_as_conflict():
    """A document other writers kept changing while we wrote it is a Conflict: the caller may try again."""
    try:
        yield
    except KeptChanging:
        raise Conflict("the document kept changing while it was being written; try again") from None
