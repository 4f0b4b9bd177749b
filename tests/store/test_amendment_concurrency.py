"""Amendments and responses to one delivery at once, on DynamoDB Local (decisions §16): serialised, whichever
commits second applies to what the first left, and a supplier answering with If-Match never accepts a version it
has not read. On that engine only: moto serialises every request, so it cannot race."""

import threading

import pytest

from chalicelib.domain.errors import PreconditionFailed
from chalicelib.service import amendments, deliveries, delivery_reads, write_units
from chalicelib.store import deliveries as delivery_store
from tests.store.test_delivery_concurrency import placed_delivery

ACCOUNT = "acme"
USER = {"name": "Olli", "email": "olli@example.com"}
DATE = {"date": "2030-01-02"}  # every day is deliverable (no delivery rules): far ahead of any cutoff

pytestmark = pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)


@pytest.fixture
def delivery_id(engine) -> int:
    return placed_delivery(scheduled=DATE)


def _amend(delivery_id, count, if_match=None):
    return amendments.amend(
        ACCOUNT, "c1", str(delivery_id), {"items": [{"id": "beer", "count": count}], "user": USER}, if_match=if_match
    )


def fire(calls: list) -> list:
    """Run every call at once from its own thread; each one's result, or the error it raised."""
    results: list = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(i, call):
        start.wait()
        try:
            results[i] = call()
        except Exception as error:  # noqa: BLE001 - the test reads it
            results[i] = error

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def test_amendments_and_responses_at_once_are_all_applied_in_one_order(delivery_id):
    counts = list(range(11, 21))
    calls = [lambda c=c: _amend(delivery_id, c) for c in counts]
    calls += [
        lambda i=i: deliveries.respond(ACCOUNT, str(delivery_id), {"type": "ACCEPT", "reference": f"R-{i}"})
        for i in range(10)
    ]
    results = fire(calls)
    assert not [r for r in results if isinstance(r, Exception)], results
    stored = delivery_store.get(ACCOUNT, delivery_id, consistent=True)
    records = stored.delivery["amendments"]
    assert [r["sequence"] for r in records] == list(range(1, 11))
    assert sorted(r["items"][0]["count"] for r in records) == counts  # none lost
    chain = [10] + [r["items"][0]["count"] for r in records]
    assert [r["items"][0]["count_before"] for r in records] == chain[:-1]  # each applied to what the one before left
    assert stored.delivery["request"]["items"][0]["count"] == chain[-1]
    assert sorted(r["reference"] for r in stored.delivery["responses"]) == sorted(f"R-{i}" for i in range(10))
    assert stored.version == 20
    last_was_amendment = stored.deposit_basis["responses_from"] == len(stored.delivery["responses"])
    assert stored.delivery["status"] == ("REQUESTED" if last_was_amendment else "ACCEPTED")


@pytest.mark.parametrize("round_", range(3))
def test_a_supplier_with_if_match_never_accepts_a_version_it_has_not_read(delivery_id, round_):
    read = delivery_store.get(ACCOUNT, delivery_id, consistent=True)
    tag = delivery_reads.revision(read)

    def accept():
        return deliveries.respond(ACCOUNT, str(delivery_id), {"type": "ACCEPT", "reference": "seen"}, if_match=tag)

    results = fire([accept] + [lambda c=c: _amend(delivery_id, c) for c in range(11, 16)])
    assert not [r for r in results[1:] if isinstance(r, Exception)], results
    stored = delivery_store.get(ACCOUNT, delivery_id, consistent=True)
    amended_after = [r for r in stored.delivery["amendments"]]
    if isinstance(results[0], PreconditionFailed):
        assert stored.delivery["responses"] == [] and stored.delivery["status"] == "REQUESTED"
    else:
        assert not isinstance(results[0], Exception), results[0]
        # Accepted: the version read was current when it committed, so it came before every amendment.
        assert [r["reference"] for r in stored.delivery["responses"]] == ["seen"]
        assert stored.deposit_basis["responses_from"] == 1 and stored.delivery["status"] == "REQUESTED"
    assert len(amended_after) == 5 and stored.version == 5 + len(stored.delivery["responses"])


def test_an_amendment_between_an_acknowledgements_read_and_write_leaves_it_pending(delivery_id, monkeypatch):
    """decisions §14 with §16: the ERP's IMPORTED is refused when the customer amended the order after the ERP read
    it, so PENDING still means "holds something the ERP has not acknowledged"."""
    from chalicelib.domain.errors import Busy

    write = write_units.commit
    raced = []

    def amend_first(*args, **kwargs):
        if not raced:
            raced.append("racing")  # first: the racer's own write passes straight through
            raced[0] = _amend(delivery_id, 12)
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", amend_first)
    with pytest.raises(Busy, match="customer changed the delivery"):
        deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED"})
    now = deliveries.get_delivery(ACCOUNT, str(delivery_id))
    assert now["integration"]["status"] == "PENDING" and now["request"]["items"][0]["count"] == 12
    assert deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED"})["status"] == "IMPORTED"
