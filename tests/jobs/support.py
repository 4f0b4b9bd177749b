"""Helpers of the event tests: events written the way the delivery use cases write them."""

import datetime as dt

import pytest

from chalicelib.domain.feed import LEGACY_TWINS, Change
from chalicelib.service import webhooks as webhook_settings
from chalicelib.store import deliveries, event_attempts, events, feed, keys, outbox_accounts, table
from chalicelib.store.unit_of_work import unit_of_work
from tests import delivery_units

T0 = dt.datetime(2025, 3, 3, 9, 0, tzinfo=dt.timezone.utc)


def delivery(delivery_id=7, status="REQUESTED"):
    """A delivery as the supplier API shows it (what an event's data carries)."""
    return {
        "id": delivery_id,
        "type": "DELIVERY",
        "status": status,
        "customer": {"id": "c1", "company": "Bar Centrale", "address": None, "contact": None},
        "request": {
            "timestamp": "2025-03-03T09:00:00.000Z",
            "items": [{"id": "crate-override", "name": "Cola", "count": 2, "vessel_count": 48, "price": 150}],
        },
        "responses": [],
    }


def write_event(account="acme", event_type="request-delivery", data=None, now=T0) -> dict:
    """Record an event the way a state change does: one TransactWriteItems holding the delivery (created, or
    changed to `data`), its feed entry and the outbox item the entry makes (store/feed.py); the event item."""
    data = data or delivery()
    existing = deliveries.get(account, data["id"], consistent=True)
    change = Change(LEGACY_TWINS[event_type], str(data["id"]), status=data["status"])
    if existing is None:
        outcome = delivery_units.place(account, [data], [], None, None, changes=[change], now=now)
    else:
        outcome = delivery_units.change(account, data, existing.version, changes=[change], now=now)
    assert outcome is None, outcome
    return event_of_sequence(account, feed.read_head(account).sequence)


def event_of_sequence(account: str, sequence: int) -> dict:
    """The outbox item the feed entry `sequence` made."""
    response = table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk",
        FilterExpression="#sequence = :sequence",
        ExpressionAttributeNames={"#sequence": "sequence"},
        ExpressionAttributeValues=table.values(pk=keys.events_pk(account), sequence=sequence),
    )
    (item,) = response["Items"]
    return table.from_item(item)


def body(event: dict) -> dict:
    """What the receiver gets for the event now."""
    return {
        "type": event["type"],
        "idempotency_key": event["event_id"],
        "data": deliveries.get(event["account"], event["delivery_id"], consistent=True).delivery,
    }


def stored(event: dict) -> dict:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item({"PK": event["PK"], "SK": event["SK"]}), ConsistentRead=True
    )
    return table.from_item(response["Item"])


def configure(account="acme", **settings) -> dict:
    return webhook_settings.put_settings(account, settings)


def queue_resend(event: dict, now: dt.datetime) -> dict:
    """One more attempt queued, as the resend use case writes it (without its rate window or answer)."""
    queued, operation = event_attempts.resending(event, now)
    with unit_of_work(event["account"], now) as uow:
        uow.add(operation)
        assert uow.commit() is None
    return queued


def park(account: str, until: dt.datetime, reason: str) -> None:
    """Park the account as a failed attempt does (its record commits the lane with it)."""
    table.client().put_item(**outbox_accounts.parking(account, until, reason).item["Put"])


def write_events(account: str, count: int, now=T0) -> list[dict]:
    """`count` events of one delivery (a backlog), written one PutItem each: moto slows down quadratically
    with many transactions, and the dispatcher treats the items the same however they were written."""
    first = write_event(account, data=delivery(1), now=now)
    written = [first]
    for _ in range(count - 1):
        item = events.new_event(account, "request-delivery", delivery(1), now)
        table.client().put_item(TableName=table.name(), Item=table.to_item(item))
        written.append(item)
    return written


@pytest.fixture
def local_receivers(monkeypatch):
    """The receivers of these tests listen on loopback, which only an explicit setting allows."""
    monkeypatch.setenv("ALLOW_PRIVATE_WEBHOOK_HOSTS", "true")


def dispatch_at(moment: dt.datetime, **options) -> dict:
    """One run of the event dispatcher over everything due, with the fake clock (fixture `fake_clock`) at
    `moment`."""
    from chalicelib.jobs import event_lanes as dispatcher
    from chalicelib.service import clock

    clock.current().set(moment)
    return dispatcher.dispatch_due(**options)
