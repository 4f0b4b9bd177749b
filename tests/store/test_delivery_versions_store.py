"""A delivery's versions on moto and DynamoDB Local (decisions §16): a single read's ETag and body are one version
even when its two items are read apart, and a response that loses a race to an amendment is checked again against
the amended order."""

import pytest

from chalicelib.domain.errors import ValidationFailed
from chalicelib.service import amendments, deliveries, delivery_reads, write_units
from chalicelib.store import batch
from chalicelib.store import deliveries as delivery_store
from tests.store.test_delivery_concurrency import placed_delivery

ACCOUNT = "acme"
USER = {"name": "Olli", "email": "olli@example.com"}
DATE = {"date": "2030-01-02"}


def _amend(delivery_id, items):
    return amendments.amend(ACCOUNT, "c1", str(delivery_id), {"items": items, "user": USER})


def amendment_first(monkeypatch, delivery_id: int, items: list) -> None:
    """The next write of the delivery finds the customer's amendment (to `items`) committed before it: it loses the
    race, reads again and is checked again."""
    write, raced = write_units.commit, []

    def amended_then_written(*args, **kwargs):
        if not raced:
            raced.append(True)
            _amend(delivery_id, items)
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", amended_then_written)


def _water():
    from chalicelib.service import catalogue

    body = {"status": "ACTIVE", "category": "drinks", "name": "Water", "price": 50}
    catalogue.put_product(ACCOUNT, "water", body, None)


def test_a_read_of_the_summary_after_an_amendment_and_the_items_before_it_is_read_again(engine, monkeypatch):
    """An eventually consistent BatchGetItem may return the summary of one version and the items of another; the
    read notices (each names the version that wrote the items) and reads again, consistently."""
    delivery_id = placed_delivery(scheduled=DATE)
    from chalicelib.store import keys

    items_key = keys.delivery_items_key(ACCOUNT, delivery_id)
    before = batch.get_items([items_key], consistent=True)
    _amend(delivery_id, [{"id": "beer", "count": 12}])
    original, calls = batch.get_items, []

    def one_item_behind(found_keys, consistent=False, **kwargs):
        calls.append(consistent)
        found = original(found_keys, consistent=consistent, **kwargs)
        if len(calls) == 1:  # the items as they were before the amendment, the summary as it is now
            found = {**found, **{k: v for k, v in before.items()}}
        return found

    monkeypatch.setattr(batch, "get_items", one_item_behind)
    delivery, tag = delivery_reads.get_versioned(ACCOUNT, str(delivery_id))
    assert calls == [False, True]
    assert tag == f"{delivery_id}-1"
    assert delivery["request"]["items"][0]["count"] == 12
    assert [r["sequence"] for r in delivery["amendments"]] == [1]


def test_a_read_of_the_summary_after_a_delivery_note_and_the_items_before_it_is_read_again(engine, monkeypatch):
    """The note is kept on the items item: a read that pairs the DELIVERED summary with the items item from before
    the note would show a delivered delivery without its note; it reads again, consistently (decisions §16, §18)."""
    from chalicelib.service import delivery_notes
    from chalicelib.store import keys

    delivery_id = placed_delivery(scheduled=DATE)
    before = batch.get_items([keys.delivery_items_key(ACCOUNT, delivery_id)], consistent=True)
    delivery_notes.deliver(ACCOUNT, str(delivery_id), {"number": "LS-1"})
    original, calls = batch.get_items, []

    def one_item_behind(found_keys, consistent=False, **kwargs):
        calls.append(consistent)
        found = original(found_keys, consistent=consistent, **kwargs)
        return {**found, **before} if len(calls) == 1 else found

    monkeypatch.setattr(batch, "get_items", one_item_behind)
    delivery, tag = delivery_reads.get_versioned(ACCOUNT, str(delivery_id))
    assert calls == [False, True]
    assert tag == f"{delivery_id}-1"
    assert delivery["status"] == "DELIVERED" and delivery["delivery_note"]["number"] == "LS-1"


def test_a_delivery_read_whole_is_one_version_from_the_start(engine):
    delivery_id = placed_delivery(scheduled=DATE)
    delivery, tag = delivery_reads.get_versioned(ACCOUNT, str(delivery_id))
    assert tag == f"{delivery_id}-0" and delivery["request"]["items"][0]["count"] == 10


def test_a_response_that_loses_to_an_amendment_is_checked_against_the_amended_order(engine, monkeypatch):
    """The supplier answers beer (read before); the bar's amendment, committing in between, replaces beer with water:
    the response, written again after its lost race, is refused naming the line the order no longer holds."""
    delivery_id = placed_delivery(scheduled=DATE)
    _water()
    amendment_first(monkeypatch, delivery_id, [{"id": "water", "count": 3}])
    with pytest.raises(ValidationFailed) as refused:
        deliveries.respond(ACCOUNT, str(delivery_id), {"type": "ACCEPT", "items": [{"id": "beer", "count": 5}]})
    assert [e.path for e in refused.value.errors] == ["items[0].id"]
    stored = delivery_store.get(ACCOUNT, delivery_id, consistent=True)
    assert stored.delivery["responses"] == [] and stored.delivery["status"] == "REQUESTED"
    assert [i["id"] for i in stored.delivery["request"]["items"]] == ["water"]


def test_a_response_that_loses_to_an_amendment_it_still_fits_is_appended_to_the_amended_order(engine, monkeypatch):
    delivery_id = placed_delivery(scheduled=DATE)
    amendment_first(monkeypatch, delivery_id, [{"id": "beer", "count": 12}])
    answered = deliveries.respond(ACCOUNT, str(delivery_id), {"type": "ACCEPT", "items": [{"id": "beer", "count": 11}]})
    assert answered["status"] == "ACCEPTED"
    assert answered["request"]["items"][0]["count"] == 12 and answered["responses"][0]["items"][0]["count"] == 11
