"""Pages of lists: a cursor the store cannot resume from is a 400 on the cursor parameter, said here once."""

import functools

from ..domain.errors import invalid
from ..store.cursor import BadCursor

_MESSAGES = {
    BadCursor.Reason.FORGED: "is not a valid cursor",
    BadCursor.Reason.FOREIGN: "belongs to another list or query",
}


def paged(list_page):
    """Wrap a use case that lists a page, turning the store's BadCursor into the cursor's field error."""

    @functools.wraps(list_page)
    def listed(*args, **kwargs):
        try:
            return list_page(*args, **kwargs)
        except BadCursor as refused:
            raise invalid("cursor", _MESSAGES[refused.reason]) from None

    return listed
