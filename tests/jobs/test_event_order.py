"""Events are first attempted in sequence order (decisions §13), and a parked account's resends stay inside the
turn's budget and cap (§10)."""

import datetime as dt
import http.client
import json

import pytest

from chalicelib.adapters import outbound
from chalicelib.domain.feed import product_change
from chalicelib.service import clock
from chalicelib.service import event_sending as sending
from chalicelib.store import events
from tests.transactions import record_changes

from .support import T0, configure, dispatch_at, park, queue_resend, write_event, write_events

pytestmark = pytest.mark.usefixtures("accounts_ready", "fake_clock")


class Receiver:
    """A healthy receiver (200), taking `seconds` of the clock per request."""

    def __init__(self, seconds: float = 0):
        self.bodies, self.seconds = [], seconds

    def __call__(self, method, url, headers, body, timeout, allow_private, **_):
        self.bodies.append(json.loads(body))
        clock.current().advance(dt.timedelta(seconds=self.seconds))
        return outbound.Response(200, http.client.HTTPMessage(), b"", url)


def test_a_healthy_receiver_sees_an_unbroken_chain_across_writes_and_an_import_chunk():
    configure(url="https://erp.example.com/hook", events=["request-delivery", "product.created"])
    # An import chunk's 20 events share one creation time; a later write that read its clock earlier (its commit
    # retried on the head) has an earlier creation time than the chunk.
    record_changes("acme", [product_change("created", f"p{n:02d}") for n in range(20)], T0)
    write_event(data=None, now=T0 - dt.timedelta(seconds=3))
    record_changes("acme", [product_change("created", f"q{n}") for n in range(3)], T0 - dt.timedelta(seconds=4))
    receiver = Receiver()
    dispatch_at(T0 + dt.timedelta(seconds=1), transport=receiver)
    dispatch_at(T0 + dt.timedelta(seconds=2), transport=receiver)  # the rest, past one turn's cap
    chain = [(body["previous_sequence"], body["sequence"]) for body in receiver.bodies]
    assert len(chain) == 24
    assert all(previous == before[1] for before, (previous, _) in zip([(0, 0)] + chain, chain))
    assert [body["type"] for body in receiver.bodies] == ["product.created"] * 20 + ["request-delivery"] + [
        "product.created"
    ] * 3


def test_first_attempts_go_in_sequence_order_when_the_backlog_is_larger_than_one_due_read(monkeypatch):
    """The due read orders by time and takes at most SCAN per queue shard: with a backlog larger than that, it
    holds the later sequences written with an earlier clock and only some of the earlier ones; they still go
    out in sequence order (decisions §13)."""
    monkeypatch.setattr(sending, "SCAN", 5)
    configure(url="https://erp.example.com/hook", events=["product.created"])
    record_changes("acme", [product_change("created", f"p{n:02d}") for n in range(30)], T0)  # sequences 1-30
    record_changes("acme", [product_change("created", f"q{n}") for n in range(3)], T0 - dt.timedelta(seconds=4))
    receiver = Receiver()
    dispatch_at(T0 + dt.timedelta(seconds=1), transport=receiver)
    first = receiver.bodies[0]["sequence"]  # after the settings' own entry
    assert [body["sequence"] for body in receiver.bodies] == list(range(first, first + sending.PER_TURN))
    dispatch_at(T0 + dt.timedelta(seconds=2), transport=receiver)
    assert dispatch_at(T0 + dt.timedelta(seconds=3), transport=receiver)["due"] == 0
    chain = [(body["previous_sequence"], body["sequence"]) for body in receiver.bodies]
    assert chain == [(0, first)] + [(n - 1, n) for n in range(first + 1, first + 33)]


def test_a_parked_accounts_resends_keep_to_the_turns_cap_and_deadline():
    configure(url="https://erp.example.com/hook")
    queued = [queue_resend(event, T0) for event in write_events("acme", 30, now=T0)]
    park("acme", T0 + dt.timedelta(hours=1), "the receiver answered 500")
    receiver = Receiver()
    dispatch_at(T0 + dt.timedelta(seconds=1), transport=receiver)
    assert len(receiver.bodies) == sending.PER_TURN and len(queued) == 30
    slow = Receiver(seconds=5)
    clock.current().set(T0 + dt.timedelta(seconds=2))
    from chalicelib.jobs import event_lanes as dispatcher

    dispatcher.dispatch_due(deadline=clock.after(12), transport=slow)
    assert len(slow.bodies) == 3  # started at 0, 5 and 10 s; none at 15 s, past the deadline


def test_a_resend_queued_while_an_attempt_is_in_flight_gets_its_own_attempt():
    """Each accepted resend makes its own attempt (§10), also one queued while the previous one is being sent."""
    configure(url="https://erp.example.com/hook")
    (event,) = write_events("acme", 1, now=T0)
    queue_resend(events.get("acme", event["event_id"]), T0)

    class QueuesAnotherWhileSending(Receiver):
        def __call__(self, *args, **kwargs):
            if not self.bodies:
                queue_resend(events.get("acme", event["event_id"]), clock.now())
            return super().__call__(*args, **kwargs)

    receiver = QueuesAnotherWhileSending()
    dispatch_at(T0 + dt.timedelta(seconds=1), transport=receiver)
    dispatch_at(T0 + dt.timedelta(seconds=2), transport=receiver)
    assert dispatch_at(T0 + dt.timedelta(seconds=3), transport=receiver)["due"] == 0
    assert len(receiver.bodies) == 2
    stored = events.get("acme", event["event_id"])
    assert stored["attempts"] == 2 and len(stored["attempt_log"]) == 2 and stored["status"] == "DELIVERED"
    assert "resends" not in stored and "next_attempt_at" not in stored
