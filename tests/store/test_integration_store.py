"""The integration state on the real engine (decisions §14): a customer's change racing an acknowledgement, both
ways; exact counts after a mixed concurrent workload; the worklist index. On moto and DynamoDB Local (the
workload on DynamoDB Local only: moto serialises every request, so it cannot race).

The races are forced with hooks around the store's writes, so each interleaving happens every time."""

import json
import random
import threading

import pytest

from chalicelib.domain.errors import Busy, InvalidTransition
from chalicelib.service import catalogue, deliveries, ordering, write_units
from chalicelib.store import deliveries as delivery_store
from chalicelib.store import delivery_lists, keys, table
from tests.transactions import cancelled
from tests.unit_of_work import fake_commits

ACCOUNT = "acme"
CUSTOMER = "c1"
ORDER = {"items": [{"id": "beer", "count": 1}], "user": {"name": "Olli", "email": "olli@example.com"}}


@pytest.fixture
def shop(engine):
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"})
    catalogue.put_product(
        ACCOUNT, "beer", {"status": "ACTIVE", "category": "drinks", "name": "Pale Ale", "price": 150}, None
    )
    address = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}
    customer = {"id": CUSTOMER, "name": "Bar", "address": address}
    table.client().put_item(
        TableName=table.name(), Item=table.to_item({**keys.customer_key(ACCOUNT, CUSTOMER), "data": customer})
    )
    return engine


def order() -> int:
    (delivery,) = ordering.place_order(ACCOUNT, CUSTOMER, ORDER)
    return delivery["id"]


def state(delivery_id: int) -> dict:
    return deliveries.get_delivery(ACCOUNT, str(delivery_id))["integration"]


def worklist(status: str) -> list[int]:
    """Every page of the state's worklist."""
    found, cursor = [], None
    while True:
        page = delivery_lists.list_integration_page(ACCOUNT, status, 100, cursor)
        listed = [json.loads(text) for text in page.items]  # JSON texts, as supplier lists show them
        assert {delivery["integration"]["status"] for delivery in listed} <= {status}
        found += [delivery["id"] for delivery in listed]
        cursor = page.cursor
        if cursor is None:
            return found


def assert_counts_exact(delivery_ids) -> None:
    """The account's counts and the worklists say what the deliveries themselves say."""
    by_status = {"PENDING": [], "IMPORTED": [], "FAILED": []}
    for delivery_id in sorted(delivery_ids):
        by_status[state(delivery_id)["status"]].append(delivery_id)
    overview = deliveries.integration_overview(ACCOUNT)
    assert (overview["pending"], overview["failed"]) == (len(by_status["PENDING"]), len(by_status["FAILED"]))
    for status, expected in by_status.items():
        assert sorted(worklist(status)) == expected, status


# --- a customer's change racing an acknowledgement ---


def test_a_cancel_between_the_acknowledgements_read_and_write_leaves_it_pending(shop, monkeypatch):
    delivery_id = order()
    write = write_units.commit
    raced = []

    def cancel_first(*args, **kwargs):
        if not raced:  # the customer's cancel commits after the PUT read the delivery, before it writes
            raced.append("racing")  # first: the racer's own write passes straight through
            raced[0] = deliveries.cancel(ACCOUNT, CUSTOMER, str(delivery_id), {})
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", cancel_first)
    with pytest.raises(Busy, match="customer changed the delivery"):
        deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED", "reference": "ERP-1"})
    assert raced and raced[0]["status"] == "CANCELLED"
    now = deliveries.get_delivery(ACCOUNT, str(delivery_id))
    assert now["status"] == "CANCELLED"
    assert now["integration"]["status"] == "PENDING"
    assert worklist("PENDING") == [delivery_id] and worklist("IMPORTED") == []
    assert_counts_exact([delivery_id])
    # Read again, the ERP acknowledges what it now holds.
    assert deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED"})["status"] == "IMPORTED"
    assert_counts_exact([delivery_id])


def test_an_acknowledgement_between_the_cancels_read_and_write_is_made_pending_again(shop, monkeypatch):
    delivery_id = order()
    write = write_units.commit
    raced = []

    def acknowledge_first(*args, **kwargs):
        if not raced:  # the ERP's acknowledgement commits after the cancel read the delivery, before it writes
            raced.append("racing")  # first: the racer's own write passes straight through
            raced[0] = deliveries.set_integration(
                ACCOUNT, str(delivery_id), {"status": "IMPORTED", "reference": "ERP-1"}
            )
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", acknowledge_first)
    cancelled = deliveries.cancel(ACCOUNT, CUSTOMER, str(delivery_id), {})
    assert raced and raced[0]["status"] == "IMPORTED"
    assert cancelled["status"] == "CANCELLED"
    assert state(delivery_id) == {
        "status": "PENDING",
        "reference": "ERP-1",
        "updated": cancelled["cancelled"]["timestamp"],
    }
    assert worklist("PENDING") == [delivery_id] and worklist("IMPORTED") == []
    assert_counts_exact([delivery_id])


def test_a_receive_racing_a_failure_both_ways(shop, monkeypatch):
    first, second = order(), order()
    failed = {"status": "FAILED", "message": "unknown article"}
    write, change = write_units.commit, write_units.commit

    def receive_first(*args, **kwargs):
        monkeypatch.setattr(write_units, "commit", write)
        deliveries.receive(ACCOUNT, CUSTOMER, str(first), {})
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", receive_first)
    with pytest.raises(Busy):
        deliveries.set_integration(ACCOUNT, str(first), failed)

    def fail_first(*args, **kwargs):
        monkeypatch.setattr(write_units, "commit", change)
        deliveries.set_integration(ACCOUNT, str(second), failed)
        return change(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", fail_first)
    deliveries.receive(ACCOUNT, CUSTOMER, str(second), {})
    assert [state(first)["status"], state(second)["status"]] == ["PENDING", "PENDING"]
    assert "message" not in state(second)
    assert_counts_exact([first, second])


def test_a_supplier_response_racing_an_acknowledgement_does_not_stop_it(shop, monkeypatch):
    delivery_id = order()
    write = write_units.commit
    raced = []

    def respond_first(*args, **kwargs):
        if not raced:
            raced.append("racing")  # first: the racer's own write passes straight through
            raced[0] = deliveries.respond(ACCOUNT, str(delivery_id), {"type": "ACCEPT"})
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", respond_first)
    assert deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED"})["status"] == "IMPORTED"
    now = deliveries.get_delivery(ACCOUNT, str(delivery_id))
    assert (now["status"], now["integration"]["status"]) == ("ACCEPTED", "IMPORTED")
    assert_counts_exact([delivery_id])


# --- exact counts under a mixed concurrent workload ---


@pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)
def test_counts_are_exact_after_a_mixed_concurrent_workload(shop):
    placed = [order() for _ in range(12)]
    rng = random.Random(20261124)
    bodies = [
        {"status": "IMPORTED"},
        {"status": "FAILED", "message": "no such article"},
        {"status": "PENDING"},
        {"status": "IMPORTED", "reference": "ERP-9"},
    ]
    work = []
    for i in range(48):
        delivery_id = rng.choice(placed)
        kind = rng.choice(["put", "put", "put", "respond", "cancel", "receive", "order"])
        work.append((kind, delivery_id, rng.choice(bodies)))
    created, failures = [], []
    start = threading.Barrier(len(work))

    def run(kind, delivery_id, body):
        start.wait()
        try:
            if kind == "put":
                deliveries.set_integration(ACCOUNT, str(delivery_id), body)
            elif kind == "respond":
                deliveries.respond(ACCOUNT, str(delivery_id), {"type": "ACCEPT"})
            elif kind == "cancel":
                deliveries.cancel(ACCOUNT, CUSTOMER, str(delivery_id), {})
            elif kind == "receive":
                deliveries.receive(ACCOUNT, CUSTOMER, str(delivery_id), {})
            else:
                created.append(order())
        except (InvalidTransition, Busy):
            pass  # a final delivery refuses more changes; an acknowledgement the customer overtook is refused
        except Exception as error:  # noqa: BLE001 - anything else fails the test
            failures.append(error)

    threads = [threading.Thread(target=run, args=job) for job in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not failures, failures
    assert_counts_exact(placed + created)
    overview = deliveries.integration_overview(ACCOUNT)
    pending = worklist("PENDING")
    assert overview["oldest_pending"] == (
        {"id": pending[0], "since": delivery_store.get(ACCOUNT, pending[0]).integration_since} if pending else None
    )


# --- the worklist index ---


def test_worklist_pages_are_full_and_in_the_order_of_entering(shop):
    placed = [order() for _ in range(7)]
    for delivery_id in placed[::2]:
        deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED"})
    pages, cursor = [], None
    while True:
        page = delivery_lists.list_integration_page(ACCOUNT, "PENDING", 2, cursor)
        pages.append([json.loads(text)["id"] for text in page.items])
        cursor = page.cursor
        if cursor is None:
            break
    assert pages == [[placed[1], placed[3]], [placed[5]]]
    assert worklist("IMPORTED") == placed[::2]
    deliveries.set_integration(ACCOUNT, str(placed[1]), {"status": "FAILED", "message": "x"})
    deliveries.set_integration(ACCOUNT, str(placed[1]), {"status": "PENDING"})
    assert worklist("PENDING") == [placed[3], placed[5], placed[1]]
    assert worklist("FAILED") == []
    assert_counts_exact(placed)


def test_a_transaction_conflict_on_the_counts_is_tried_again(shop, monkeypatch):
    """Every write of a state shares the account's counts item; a transaction another one held is written
    again, never a failure."""
    real = table.client().transact_write_items
    conflicts = []

    def conflict_once(**request):
        if not conflicts:
            conflicts.append(1)
            raise cancelled(
                ["TransactionConflict" if "INTEGRATION" in str(item) else "None" for item in request["TransactItems"]]
            )
        return real(**request)

    monkeypatch.setattr(table.client(), "transact_write_items", conflict_once)
    delivery_id = order()  # the order's transaction conflicted once
    assert conflicts == [1]
    conflicts.clear()
    assert deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED"})["status"] == "IMPORTED"
    assert conflicts == [1]
    assert_counts_exact([delivery_id])


def test_pending_racing_a_cancel_is_no_conflict(shop, monkeypatch):
    """Only an acknowledgement (IMPORTED, FAILED) of what the customer changed since is refused."""
    delivery_id = order()
    deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED", "reference": "ERP-1"})
    write = write_units.commit

    def cancel_first(*args, **kwargs):
        monkeypatch.setattr(write_units, "commit", write)
        deliveries.cancel(ACCOUNT, CUSTOMER, str(delivery_id), {})
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", cancel_first)
    answer = deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "PENDING"})
    assert answer["status"] == "PENDING" and "reference" not in answer  # the PUT replaced the re-pended state
    assert state(delivery_id) == answer
    assert_counts_exact([delivery_id])


def test_the_migration_racing_an_acknowledgement_counts_once(shop, monkeypatch):
    """A delivery stored before integration states: the migration gives it PENDING between a PUT's read and its
    write; the PUT is evaluated again on the migrated state, so the counts stay exact."""
    from chalicelib.service import migrations

    delivery_id = order()
    table.client().update_item(
        TableName=table.name(),
        Key=table.to_item(keys.delivery_key(ACCOUNT, delivery_id)),
        UpdateExpression="REMOVE integration, integration_since, GSI3PK, GSI3SK",
    )
    for key in keys.integration_counts_keys(ACCOUNT):  # every shard of the counts
        table.client().delete_item(TableName=table.name(), Key=table.to_item(key))
    write = write_units.commit

    def migrate_first(*args, **kwargs):
        monkeypatch.setattr(write_units, "commit", write)
        assert migrations.migrate_integration(ACCOUNT) == 1
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", migrate_first)
    assert deliveries.set_integration(ACCOUNT, str(delivery_id), {"status": "IMPORTED"})["status"] == "IMPORTED"
    assert migrations.migrate_integration(ACCOUNT) == 0
    assert_counts_exact([delivery_id])
    assert deliveries.integration_overview(ACCOUNT)["pending"] == 0


def test_the_migration_tries_again_while_the_counts_are_held(shop, monkeypatch, fake_clock):
    """The unit of work answers Contended for a moment's conflict on the counts; the migration tries again on the one
    retry helper (service/contention.py), and gives up with Busy only once contention outlasts it."""
    from chalicelib.service import contention, migrations
    from chalicelib.store import outcomes

    delivery_id = order()
    table.client().update_item(
        TableName=table.name(),
        Key=table.to_item(keys.delivery_key(ACCOUNT, delivery_id)),
        UpdateExpression="REMOVE integration, integration_since, GSI3PK, GSI3SK",
    )
    for key in keys.integration_counts_keys(ACCOUNT):
        table.client().delete_item(TableName=table.name(), Key=table.to_item(key))
    pauses = []  # the migration's only writes: each delivery's first state
    monkeypatch.setattr(contention, "back_off", pauses.append)
    fake_commits(monkeypatch, outcomes.Contended(), outcomes.Contended())
    assert migrations.migrate_integration(ACCOUNT) == 1
    assert pauses == [0, 1]
    assert_counts_exact([delivery_id])

    fake_commits(monkeypatch, always=outcomes.Contended())
    pauses.clear()
    table.client().update_item(
        TableName=table.name(),
        Key=table.to_item(keys.delivery_key(ACCOUNT, delivery_id)),
        UpdateExpression="REMOVE integration, integration_since, GSI3PK, GSI3SK",
    )
    monkeypatch.setattr(contention, "back_off", lambda attempt: (pauses.append(attempt), fake_clock.advance(1)))
    with pytest.raises(Busy):
        migrations.migrate_integration(ACCOUNT)
    # A pause between each two of the 10 attempts: 9 seconds, past CONTENTION_SECONDS, so the count ends it.
    assert pauses == list(range(migrations.ADD_ATTEMPTS - 1))
