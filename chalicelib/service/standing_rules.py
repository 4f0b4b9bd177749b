"""A change of the delivery rules brings the standing orders' placing moments with it (decisions §17: a moment it
brings forward is acted on within a minute): the write that changes the rules of a product, a customer or the
account puts the account's standing orders back at the front of the placing queue, in the same transaction.

Kept apart from service/standing_orders.py so a write of the catalogue or the settings loads none of it."""

from . import clock


def standing_rules_changed(account: str, before, after) -> list:
    """The operation a write adds when its change (`before` and `after`, as reads show them) may bring a placing
    moment forward; none otherwise."""
    from ..domain.standing_calendar import moves_moments

    if not moves_moments(before, after):
        return []
    from ..store import standing_orders

    return [standing_orders.rechecking(account, clock.now())]
