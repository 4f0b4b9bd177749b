"""The calendar of a standing order (decisions §17): its counted dates, the cutoff and placing moment of each, the
dates on which the rules as they stand deliver nothing, and when the placer looks at it next.

Pure: the time, the account's settings and the products arrive as parameters. A standing order is a plain dict as
the API shows it (every field, defaults filled in).
"""

import datetime as dt
from typing import Mapping, Sequence

from . import schedule

# Every counted date of an open-ended order is at most every_weeks (8) weeks from the previous one.
NEXT_HORIZON_DAYS = 8 * 7 + 7
# A planned date is looked at again at least this often: dates further ahead than a look reaches come into reach.
# (A change of the delivery rules is acted on within a minute, whenever it comes: store/standing_orders.py `recheck`.)
RECHECK = dt.timedelta(hours=24)
# Lead days reach a year (§7), so a date's placing moment may come that long before it.
LOOK_AHEAD_DAYS = 366 + 14 + NEXT_HORIZON_DAYS
CUTOFF_SECONDS = dt.timedelta(seconds=59)  # the cutoff minute is still in time (§7 compares minutes)


def _monday(date: dt.date) -> dt.date:
    return date - dt.timedelta(days=date.weekday())


def _weekday(date: dt.date) -> int:
    return date.isoweekday() % 7  # 0 = Sunday


def first_date(standing: Mapping) -> dt.date:
    """The first of `weekdays` on or after starts_on: the week every_weeks is counted from."""
    starts_on = dt.date.fromisoformat(standing["starts_on"])
    return next(
        starts_on + dt.timedelta(days=n)
        for n in range(7)
        if _weekday(starts_on + dt.timedelta(days=n)) in standing["weekdays"]
    )


def counts(standing: Mapping, date: dt.date, first_day: dt.date) -> bool:
    """Whether `date` is a counted date: a chosen weekday, in the period, in a week a whole number of every_weeks
    after the week of the first such weekday on or after starts_on, and not before the day the standing order was
    first written."""
    starts_on = dt.date.fromisoformat(standing["starts_on"])
    ends_on = standing.get("ends_on")
    if date < starts_on or date < first_day or (ends_on and date > dt.date.fromisoformat(ends_on)):
        return False
    if _weekday(date) not in standing["weekdays"]:
        return False
    weeks = (_monday(date) - _monday(first_date(standing))).days // 7
    return weeks % int(standing["every_weeks"]) == 0


def counted_dates(standing: Mapping, first_day: dt.date, start: dt.date, end: dt.date) -> list[dt.date]:
    days = (end - start).days
    candidates = (start + dt.timedelta(days=n) for n in range(days + 1))
    return [date for date in candidates if counts(standing, date, first_day)]


def line_cutoff(date: dt.date, product: Mapping, customer: Mapping | None, settings: Mapping) -> dt.datetime | None:
    """The cutoff of one line for `date` on the account's wall clock (§7: the `cutoff` on `date − lead_days`),
    None when the rules deliver it nothing that day (no rule, or a date with no delivery)."""
    levels = [level for level in (product, customer, settings) if level is not None]
    if any(date.isoformat() in (level.get("dates_with_no_delivery") or ()) for level in levels):
        return None
    rule = schedule.rule_for(date, product, customer, settings)
    if rule is None:
        return None
    hours, minutes = rule["cutoff"].split(":")
    return dt.datetime.combine(date - dt.timedelta(days=rule["lead_days"]), dt.time(int(hours), int(minutes)))


RULE_FIELDS = ("delivery_days", "delivery_date_overrides", "dates_with_no_delivery", "timezone")


def moves_moments(before: Mapping | None, after: Mapping | None) -> bool:
    """Whether a change of a product, a customer or the account's delivery settings may bring a placing moment
    forward (decisions §17: acted on within a minute): a delivery rule or the zone changed, or a product became
    ACTIVE (its line decides a cutoff again). A product made anew ACTIVE with delivery rules of its own may be one a
    line named before it was deleted, whose rules now decide (an audit found such a moment missed); one without
    follows the account's rules, and is not looked at again (that would cost every creation a write). A customer
    made anew names no line yet, and a deletion only leaves a line out, which never brings a moment forward."""
    if before is None and after is not None:
        return after.get("status") == "ACTIVE" and any(after.get(name) for name in RULE_FIELDS)
    if before is None or after is None:
        return False
    if any(before.get(name) != after.get(name) for name in RULE_FIELDS):
        return True
    return after.get("status") == "ACTIVE" and before.get("status", "ACTIVE") != "ACTIVE"


class Calendar:
    """One standing order's dates against the rules as they are now. `products`: those of its lines that are ACTIVE
    (the others are left out of what it places, so they decide nothing)."""

    def __init__(self, standing: Mapping, first_day: dt.date, products: Sequence[Mapping], customer, settings: Mapping):
        self.standing, self.first_day = standing, first_day
        self.products, self.customer, self.settings = products, customer, settings
        self.zone = schedule.account_timezone(settings)
        self._cutoffs: dict[dt.date, dt.datetime | None] = {}

    def today(self, now: dt.datetime) -> dt.date:
        return schedule.local_now(now, self.zone).date()

    def dates(self, start: dt.date, end: dt.date) -> list[dt.date]:
        return counted_dates(self.standing, self.first_day, start, end)

    def _instant(self, wall: dt.datetime) -> dt.datetime:
        return schedule.wall_moment(wall, self.zone)

    def cutoff_wall(self, date: dt.date) -> dt.datetime | None:
        """The strictest cutoff of the lines delivered on `date`, on the wall clock; None when the rules deliver
        nothing of the standing order that day (decisions §17: UNDELIVERABLE)."""
        if date not in self._cutoffs:
            walls = [line_cutoff(date, p, self.customer, self.settings) for p in self.products or [{}]]
            walls = [wall for wall in walls if wall is not None]
            self._cutoffs[date] = min(walls, key=self._instant) if walls else None
        return self._cutoffs[date]

    def undeliverable(self, date: dt.date) -> bool:
        return self.cutoff_wall(date) is None

    def delivers(self, date: dt.date, product: Mapping) -> bool:
        """Whether the rules deliver this line's product on `date` (else it is left out: NOT_DELIVERABLE)."""
        return line_cutoff(date, product, self.customer, self.settings) is not None

    def cutoff(self, date: dt.date) -> dt.datetime | None:
        """The last moment an order for `date` is in time: the cutoff minute's last second."""
        wall = self.cutoff_wall(date)
        if wall is None:
            return None
        return schedule.wall_moment(wall, self.zone, last=True).astimezone(dt.timezone.utc) + CUTOFF_SECONDS

    def place_at(self, date: dt.date) -> dt.datetime:
        """place_days_ahead calendar days before the cutoff, at the same wall-clock time (a time a daylight-saving
        change skips is read as the first moment after the gap). A date with no cutoff shows the default rule's
        moment (23:59 on the day, §7)."""
        wall = self.cutoff_wall(date) or dt.datetime.combine(date, dt.time(23, 59))
        return self._instant(wall - dt.timedelta(days=int(self.standing["place_days_ahead"])))

    def reach_days(self) -> int:
        """How far ahead a date can have its placing moment within RECHECK: the longest lead days of any rule,
        place_days_ahead, and a day either side."""
        leads = [0]
        for level in (*self.products, self.customer or {}, self.settings):
            for rules_ in (level.get("delivery_days") or {}, level.get("delivery_date_overrides") or {}):
                leads += [int(rule.get("lead_days", 0)) for rule in rules_.values()]
        return max(leads) + int(self.standing["place_days_ahead"]) + 2

    def open_dates(self, now: dt.datetime, recorded, skips) -> list[tuple[dt.date, dt.datetime]]:
        """(date, placing moment) of each date still to place (not recorded, skipped, undeliverable or past its
        cutoff) whose moment may come within RECHECK, in date order: later dates are looked at in a later turn."""
        today = self.today(now)
        result = []
        for date in self.dates(today, today + dt.timedelta(days=min(self.reach_days(), LOOK_AHEAD_DAYS))):
            key = date.isoformat()
            cutoff = self.cutoff(date)
            if key in recorded or key in skips or cutoff is None or now > cutoff:
                continue
            result.append((date, self.place_at(date)))
        return result

    def all_undeliverable(self, today: dt.date, days: int) -> bool:
        """Whether the standing order has counted dates in the next `days` from today (decisions §17) and the rules
        deliver nothing on any of them; one that starts later than that is judged on its first `days`."""
        starts, last = dt.date.fromisoformat(self.standing["starts_on"]), today + dt.timedelta(days=days - 1)
        start = max(today, starts)
        dates = self.dates(start, last if starts <= last else starts + dt.timedelta(days=days - 1))
        return bool(dates) and all(self.undeliverable(date) for date in dates)


def due_dates(open_dates, now: dt.datetime) -> list[dt.date]:
    return [date for date, moment in open_dates if moment <= now]


def next_due(open_dates, paused: bool, ends_on: str | None, now: dt.datetime) -> dt.datetime | None:
    """When the placer should look at the standing order next: the earliest placing moment still to come (at
    the latest RECHECK from now), None when paused or nothing can come any more."""
    if paused:
        return None
    moments = [moment for _, moment in open_dates]
    if not moments:
        ended = ends_on is not None and dt.date.fromisoformat(ends_on) < now.date()
        return None if ended else now + RECHECK
    return min(min(moments), now + RECHECK)
