"""An attempt made under webhook settings that have since changed never holds an event made for the new ones
(decisions §10; issue 43). The interleaving is forced, never timed: the old receiver holds its request until the
test lets it answer, the fake clock stands still (no backoff can run out), and the dispatcher is driven turn by
turn as `make run`'s loop and the schedule drive it. On moto and on DynamoDB Local (tests/store/conftest.py)."""

import datetime as dt
import threading

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

from chalicelib.domain.event_policy import EventStatus
from chalicelib.domain.timestamps import iso
from chalicelib.jobs import event_lanes
from chalicelib.jobs.wakeups import Bells
from chalicelib.service import clock, webhooks
from chalicelib.service import event_sending as sending
from chalicelib.store import event_attempts, events, keys, outbox_accounts, outcomes, table, webhook_settings
from tests.jobs.support import configure, delivery, local_receivers, stored, write_event  # noqa: F401 - a fixture

ACCOUNT = "acme"
GENEROUS = 30  # seconds: a bound on waits for what happens at once, never a timing assertion

pytestmark = pytest.mark.usefixtures("engine", "fake_clock", "local_receivers")


class Receiver:
    """A receiver on loopback that notes each request's webhook-id and answers `status`; a held one keeps every
    request until the test sets `release`."""

    def __init__(self, status: int = 200, held: bool = False, then: int | None = None):
        self.status, self.held, self.then = status, held, then  # `then`: the status of every later request
        self.ids: list[str] = []
        self.arrived, self.release = threading.Event(), threading.Event()
        self.server = HTTPServer(threaded=True)
        self.server.start()
        self.server.expect_request("/hook").respond_with_handler(self.answer)
        self.url = self.server.url_for("/hook")

    def answer(self, request):
        self.ids.append(request.headers["webhook-id"])
        self.arrived.set()
        if self.then is not None and len(self.ids) > 1:
            return Response("", status=self.then)
        if self.held:
            self.release.wait(GENEROUS)
        return Response("", status=self.status)


@pytest.fixture
def receivers():
    started: list[Receiver] = []

    def start(**options) -> Receiver:
        started.append(Receiver(**options))
        return started[-1]

    yield start
    for receiver in started:
        receiver.release.set()
        receiver.server.clear()
        receiver.server.stop()


@pytest.fixture(autouse=True)
def patient_sends(monkeypatch):
    """A held receiver answers when the test lets it, however long the steps before take on a loaded machine: no
    send may time out first (the rule is the same with the service's 10 s). The Lambda handlers are imported first:
    their phases take the timeout when they load, and a later test on them would keep this one."""
    import chalicelib.jobs.handlers  # noqa: F401

    monkeypatch.setattr(sending.policy, "SEND_TIMEOUT_SECONDS", 4 * GENEROUS)


@pytest.fixture
def dispatcher():
    """`make run`'s dispatcher with its bell: events of a busy account wait for its lane and are rung when it ends."""
    bells = Bells()
    found = event_lanes.Dispatcher(bell=bells.events)
    found.bells = bells
    yield found
    found.close()


def the_next_turn(dispatcher, by: str) -> None:
    """The lane's next turn, with no time passed: `make run`'s loop answering its bell (with the events that waited
    for the lane, or none: then it reads the queue), or the schedule's run."""
    if by == "make run":
        assert dispatcher.bells.events.wait(0)  # rung when the lane ended
        known = dispatcher.bells.events.take_events()
        dispatcher.wait(dispatcher.poll(known=known, scan=not known), GENEROUS)
    else:
        event_lanes.dispatch_due()


def ids(*events) -> list[str]:
    return [event["event_id"] for event in events]


@pytest.mark.parametrize("by", ["make run", "the schedule"])
@pytest.mark.parametrize("puts", [1, 2])
def test_an_old_receivers_failure_after_a_put_neither_parks_the_account_nor_delays_the_new_ones_events(
    receivers, dispatcher, puts, by
):
    old, between, new = receivers(status=503, held=True), receivers(), receivers()
    configure(ACCOUNT, url=old.url)
    first = write_event(ACCOUNT, data=delivery(1), now=clock.now())
    lane = dispatcher.poll()  # the account's lane sends `first` to the old receiver
    assert old.arrived.wait(GENEROUS)  # ... which holds it
    if puts == 2:
        configure(ACCOUNT, url=between.url)
    configure(ACCOUNT, url=new.url)  # the supplier points its webhooks at a healthy receiver
    second = write_event(ACCOUNT, data=delivery(2), now=clock.now())  # an order after the PUT was answered
    newer = dispatcher.poll(known=[second], scan=False)  # as the stream rings it: a lane of its own, at once
    dispatcher.wait(newer, GENEROUS)
    assert new.ids == ids(second) and old.ids == ids(first)  # sent while the old attempt still runs (§10)
    old.release.set()  # the old receiver fails, after the PUT
    dispatcher.wait(lane, GENEROUS)  # the old lane ends after that attempt: it sends nothing under the new settings
    the_next_turn(dispatcher, by)

    assert old.ids == ids(first) and between.ids == []
    assert new.ids == ids(second, first)  # the failed attempt's event is tried again at once, at the new receiver
    assert outbox_accounts.lanes([ACCOUNT]) == {}  # never parked
    retried, sent = stored(first), stored(second)
    assert (retried["status"], retried["attempts"]) == ("DELIVERED", 2)
    assert [entry["status_code"] for entry in retried["attempt_log"]] == [503, 200]
    assert (sent["status"], sent["attempts"]) == ("DELIVERED", 1)


def test_the_same_settings_put_again_once_the_receiver_is_fixed_start_anew_too(receivers, dispatcher):
    """A supplier whose receiver was down fixes it and PUTs the same settings: the attempt made while it was down,
    failing after the PUT, parks nothing either."""
    receiver = receivers(status=503, held=True, then=200)
    configure(ACCOUNT, url=receiver.url)
    first = write_event(ACCOUNT, data=delivery(1), now=clock.now())
    lane = dispatcher.poll()
    assert receiver.arrived.wait(GENEROUS)
    configure(ACCOUNT, url=receiver.url)  # identical: no feed entry, but a new version of the settings
    second = write_event(ACCOUNT, data=delivery(2), now=clock.now())
    dispatcher.wait(dispatcher.poll(known=[second], scan=False), GENEROUS)  # not held by the attempt made before
    receiver.release.set()
    dispatcher.wait(lane, GENEROUS)
    the_next_turn(dispatcher, "make run")

    assert receiver.ids == ids(first, second, first)
    assert outbox_accounts.lanes([ACCOUNT]) == {}
    assert [entry["status_code"] for entry in stored(first)["attempt_log"]] == [503, 200]
    assert stored(second)["status"] == "DELIVERED"


def test_an_old_receivers_success_after_a_put_is_kept_and_the_turns_next_send_goes_to_the_new_receiver(
    receivers, dispatcher
):
    old, new = receivers(status=200, held=True), receivers()
    configure(ACCOUNT, url=old.url)
    first = write_event(ACCOUNT, data=delivery(1), now=clock.now())
    behind = write_event(ACCOUNT, data=delivery(2), now=clock.now())  # in the same turn, after `first`
    lane = dispatcher.poll()
    assert old.arrived.wait(GENEROUS)
    configure(ACCOUNT, url=new.url)
    third = write_event(ACCOUNT, data=delivery(3), now=clock.now())
    dispatcher.wait(dispatcher.poll(known=[third], scan=False), GENEROUS)  # a lane of its own at once
    assert new.ids == ids(behind, third) and old.ids == ids(first)  # in sequence, while `first` is still held
    old.release.set()  # the old receiver takes `first`, after the PUT
    dispatcher.wait(lane, GENEROUS)  # the old lane ends after that attempt: `behind` was the new lane's
    the_next_turn(dispatcher, "make run")

    assert old.ids == ids(first)
    assert new.ids == ids(behind, third)
    assert outbox_accounts.lanes([ACCOUNT]) == {}
    for event in (first, behind, third):
        assert (stored(event)["status"], stored(event)["attempts"]) == ("DELIVERED", 1)


def test_an_event_past_24_hours_whose_old_receiver_fails_after_a_put_is_not_given_up_but_sent_to_the_new_one(
    receivers, dispatcher, fake_clock
):
    old, new = receivers(status=503, held=True), receivers()
    configure(ACCOUNT, url=old.url)
    old_event = write_event(ACCOUNT, data=delivery(1), now=clock.now())
    fake_clock.advance(dt.timedelta(hours=24, seconds=1))  # its next failure would give it up
    lane = dispatcher.poll()
    assert old.arrived.wait(GENEROUS)
    configure(ACCOUNT, url=new.url)
    old.release.set()
    dispatcher.wait(lane, GENEROUS)

    assert new.ids == ids(old_event)
    kept = stored(old_event)
    assert (kept["status"], kept["attempts"]) == ("DELIVERED", 2) and "reason" not in kept


def test_a_lane_read_before_a_put_holds_no_event_made_after_it(receivers):
    old, new = receivers(status=503), receivers()
    configure(ACCOUNT, url=old.url)
    write_event(ACCOUNT, data=delivery(1), now=clock.now())
    event_lanes.dispatch_due()  # the old receiver fails: the account is parked for the backoff
    assert ACCOUNT in outbox_accounts.lanes([ACCOUNT])
    before = write_event(ACCOUNT, data=delivery(2), now=clock.now())  # new while parked, not yet seen by a turn
    lane = sending.parked([ACCOUNT])[ACCOUNT]  # a dispatcher reads `before` and the parked lane...
    configure(ACCOUNT, url=new.url)  # ... the PUT unparks the account ...
    after = write_event(ACCOUNT, data=delivery(3), now=clock.now())  # ... an order comes in ...
    sending.send_turn(ACCOUNT, [before], lane, None)  # ... and the turn of that dispatcher runs

    untouched = stored(after)
    assert (untouched["attempts"], untouched["next_attempt_at"]) == (0, after["next_attempt_at"])
    event_lanes.dispatch_due()
    assert new.ids == ids(after)
    assert stored(after)["status"] == "DELIVERED"


# The store's part: the version, and writes conditional on it.

ENTRY = {"at": "2026-05-04T09:30:00.000Z", "status_code": 503, "duration_ms": 5}


def test_every_put_and_delete_moves_the_settings_version_on_even_an_identical_put():
    assert webhook_settings.receiver(ACCOUNT) == webhook_settings.Receiver(None, 0)
    versions = []
    for change in ("put", "same put", "delete", "put"):
        if change == "delete":
            webhooks.delete_settings(ACCOUNT)
        else:
            configure(ACCOUNT, url="https://erp.example.com/hook")
        versions.append(webhook_settings.receiver(ACCOUNT))
    assert [receiver.version for receiver in versions] == [1, 2, 3, 4]
    assert [receiver.webhook is None for receiver in versions] == [False, False, True, False]
    assert versions[0].webhook.settings["url"] == "https://erp.example.com/hook"


def claimed_with(url: str | None, delivery_id: int = 1) -> tuple[dict, int]:
    """An event claimed by a dispatcher under settings sending to `url` (None: none configured), and their
    version."""
    if url is not None:
        configure(ACCOUNT, url=url)
    event = write_event(ACCOUNT, data=delivery(delivery_id), now=clock.now())
    claimed = event_attempts.claim(event, clock.now() + sending.LEASE)
    return claimed, webhook_settings.receiver(ACCOUNT).version


def failed_record(claimed: dict, version: int):
    now = clock.now()
    until = now + dt.timedelta(seconds=30)
    together = (
        webhook_settings.unchanged_check(ACCOUNT, version),
        outbox_accounts.parking(ACCOUNT, until, "the receiver answered 503"),
    )
    return event_attempts.record_attempt(claimed, ENTRY, EventStatus.PENDING, until, now, together=together)


def test_a_failures_backoff_and_park_are_written_only_while_the_settings_are_those_it_was_made_under():
    claimed, version = claimed_with("https://old.example.com/hook")
    configure(ACCOUNT, url="https://new.example.com/hook")

    assert failed_record(claimed, version) == outcomes.Changed()
    unwritten = events.get(ACCOUNT, claimed["event_id"])
    assert unwritten["attempts"] == 0 and "attempt_log" not in unwritten  # nothing written
    assert outbox_accounts.lanes([ACCOUNT]) == {}

    assert failed_record(claimed, webhook_settings.receiver(ACCOUNT).version) is None
    after = events.get(ACCOUNT, claimed["event_id"])
    assert (after["attempts"], after["attempt_log"]) == (1, [ENTRY])
    assert after["next_attempt_at"] == iso(clock.now() + dt.timedelta(seconds=30))
    assert outbox_accounts.lanes([ACCOUNT])[ACCOUNT].reason == "the receiver answered 503"
    configure(ACCOUNT, url="https://newer.example.com/hook")  # a PUT after the park lifts it
    assert outbox_accounts.lanes([ACCOUNT]) == {}


def test_settings_never_put_or_put_before_versions_were_kept_are_version_0_until_the_next_put():
    claimed, version = claimed_with(None)  # no webhook: the attempt fails with "no receiver"
    assert version == 0
    assert failed_record(claimed, 0) is None  # unchanged: written, and the account parked
    assert ACCOUNT in outbox_accounts.lanes([ACCOUNT])

    claimed, _ = claimed_with("https://old.example.com/hook", delivery_id=2)
    table.client().update_item(
        TableName=table.name(), Key=table.to_item(keys.webhooks_key(ACCOUNT)), UpdateExpression="REMOVE version"
    )  # as stored before this release
    assert webhook_settings.receiver(ACCOUNT).version == 0
    configure(ACCOUNT, url="https://new.example.com/hook")
    assert webhook_settings.receiver(ACCOUNT).version == 1
    assert failed_record(claimed, 0) == outcomes.Changed()


def test_a_put_racing_a_failed_attempts_record_never_leaves_the_account_parked(engine):
    """Whichever commits first: the record (the PUT then unparks) or the PUT (the record is refused); both orders
    are forced one by one above, on both engines."""
    if engine == "moto":
        pytest.skip("moto's transactions are not thread-safe; DynamoDB Local's are")
    for round_ in range(8):
        claimed, version = claimed_with(f"https://old.example.com/{round_}", delivery_id=round_ + 1)
        start, answers = threading.Barrier(2), []

        def record(claimed=claimed, version=version):
            start.wait()
            answers.append(failed_record(claimed, version))

        def put(round_=round_):
            start.wait()
            configure(ACCOUNT, url=f"https://new.example.com/{round_}")

        threads = [threading.Thread(target=record), threading.Thread(target=put)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(GENEROUS)
        assert answers in ([None], [outcomes.Changed()], [outcomes.Contended()])
        assert outbox_accounts.lanes([ACCOUNT]) == {}, (round_, answers)
