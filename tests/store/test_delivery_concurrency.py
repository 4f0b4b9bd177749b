"""Concurrent responses to one delivery on DynamoDB Local (decisions §8): serialised, none lost, none illegal.

Runs on the shared DynamoDB Local of the store tests (tests/store/conftest.py `engine`), on that engine only:
moto serialises every request, so it cannot race.
"""

import json
import threading

import pytest

from chalicelib.domain.delivery import REQUESTED, status_after_response
from chalicelib.domain.errors import InvalidTransition
from chalicelib.service import catalogue, deliveries, ordering
from chalicelib.store import deliveries as delivery_store
from chalicelib.store import delivery_lists, keys, table

ACCOUNT = "acme"
THREADS = 20

pytestmark = pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)


@pytest.fixture
def delivery_id(engine) -> int:
    return placed_delivery()


def placed_delivery(**order) -> int:
    """A delivery of 10 beers placed by customer c1 (more order fields in `order`): its id."""
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"})
    catalogue.put_product(
        ACCOUNT, "beer", {"status": "ACTIVE", "category": "drinks", "name": "Pale Ale", "price": 150}, None
    )
    address = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}
    customer = {"id": "c1", "name": "Bar", "address": address}
    table.client().put_item(
        TableName=table.name(), Item=table.to_item({**keys.customer_key(ACCOUNT, "c1"), "data": customer})
    )
    body = {"items": [{"id": "beer", "count": 10}], "user": {"name": "Olli", "email": "olli@example.com"}, **order}
    (delivery,) = ordering.place_order(ACCOUNT, "c1", body)
    return delivery["id"]


def fire(delivery_id: int, bodies: list[dict]) -> dict[str, str]:
    """Send every body at once from its own thread; reference -> 'appended' or 'refused'."""
    outcomes, failures = {}, []
    start = threading.Barrier(len(bodies))

    def send(body):
        start.wait()
        try:
            deliveries.respond(ACCOUNT, str(delivery_id), body)
            outcomes[body["reference"]] = "appended"
        except InvalidTransition:
            outcomes[body["reference"]] = "refused"
        except Exception as error:  # noqa: BLE001 - anything else is a failure of the test
            failures.append(error)

    threads = [threading.Thread(target=send, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures
    assert len(outcomes) == len(bodies)
    return outcomes


def assert_consistent(delivery_id: int, outcomes: dict[str, str]) -> dict:
    stored = delivery_store.get(ACCOUNT, delivery_id, consistent=True)
    responses = stored.delivery["responses"]
    references = [r["reference"] for r in responses]
    appended = sorted(ref for ref, outcome in outcomes.items() if outcome == "appended")
    assert sorted(ref for ref in references if ref in outcomes) == appended  # each exactly once, refused never
    status = REQUESTED
    for response in responses:  # a legal sequence from REQUESTED
        status = status_after_response(status, response["type"])
    assert stored.delivery["status"] == status
    assert stored.version == len(responses)
    summary = delivery_lists.list_page(ACCOUNT, 10, None, status).items
    assert [json.loads(d)["id"] for d in summary] == [delivery_id]  # the status index moved with the status
    return stored.delivery


def test_twenty_mixed_concurrent_responses(delivery_id):
    kinds = ["ACCEPT"] * 8 + ["UPDATE"] * 8 + ["REJECT"] * 4
    bodies = [{"type": kind, "reference": f"{kind}-{i}"} for i, kind in enumerate(kinds)]
    outcomes = fire(delivery_id, bodies)
    delivery = assert_consistent(delivery_id, outcomes)
    assert delivery["status"] == "REJECTED"  # some REJECT always gets through, and nothing follows it
    assert delivery["responses"][-1]["type"] == "REJECT"
    assert [r["type"] for r in delivery["responses"]].count("REJECT") == 1
    refused = [ref for ref, outcome in outcomes.items() if outcome == "refused"]
    assert len(refused) == len(bodies) - len(delivery["responses"])


def test_twenty_concurrent_updates_are_all_appended(delivery_id):
    deliveries.respond(ACCOUNT, str(delivery_id), {"type": "ACCEPT", "reference": "first"})
    bodies = [{"type": "UPDATE" if i % 2 else "ACCEPT", "reference": f"u-{i}"} for i in range(THREADS)]
    outcomes = fire(delivery_id, bodies)
    assert set(outcomes.values()) == {"appended"}
    delivery = assert_consistent(delivery_id, outcomes)
    assert len(delivery["responses"]) == THREADS + 1
    assert delivery["status"] == "ACCEPTED"
