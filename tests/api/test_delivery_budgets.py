"""DynamoDB requests per delivery route: the budgets of issue 4 (bench/ measures the same on DynamoDB Local)."""

import pytest

from chalicelib.store import table
from tests.stream import drain

from .deliveries_helpers import CUSTOMER_TOKEN, order, place, respond, shop  # noqa: F401

pytestmark = pytest.mark.pending_feed  # a write's own requests: the stream's numbering comes later, in the background


@pytest.fixture
def requests(shop):
    """The DynamoDB operations made during a `with requests:` block (tokens are already cached)."""

    class Recorder(list):
        def __enter__(self):
            self.clear()
            table.client().meta.events.register("before-call.dynamodb", self._record)
            return self

        def __exit__(self, *exc):
            table.client().meta.events.unregister("before-call.dynamodb", self._record)

        def _record(self, model, **kwargs):
            self.append(model.name)

    shop.get("/deliveries")
    shop.get("/customer/deliveries", token=CUSTOMER_TOKEN)
    return Recorder()


def test_placing_an_order_takes_three_requests(shop, requests):
    # Split in two deliveries: still one read, one id allocation, one transaction (each delivery's change marked on
    # its own item: a write reads and writes nothing more for the feed, issue 34).
    with requests:
        response = order(shop, [{"id": "beer", "count": 1}, {"id": "wine", "count": 1}, {"id": "cheese", "count": 1}])
        assert len(response.data["deliveries"]) == 2
    assert requests == ["BatchGetItem", "UpdateItem", "TransactWriteItems"]


def test_reading_a_delivery_takes_one_request(shop, requests):
    place(shop, [{"id": "beer", "count": 1}])
    with requests:
        assert shop.get("/deliveries/1").status_code == 200
    assert requests == ["BatchGetItem"]


@pytest.mark.parametrize("query", ["", "?status=REQUESTED", "?limit=1", "?integration=PENDING"])
def test_a_list_page_takes_one_request(shop, requests, query):
    for _ in range(3):
        place(shop, [{"id": "beer", "count": 1}])
    with requests:
        assert shop.get(f"/deliveries{query}").status_code == 200
    assert requests == ["Query"]


def test_a_response_takes_two_requests(shop, requests):
    place(shop, [{"id": "beer", "count": 1}])
    with requests:  # the delivery, then the change: one item, marked for the feed, so one UpdateItem
        assert respond(shop, 1, {"type": "ACCEPT"}).status_code == 200
    assert requests == ["BatchGetItem", "UpdateItem"]


def test_an_idempotent_order_adds_only_the_claim(shop, requests):
    with requests:
        response = shop.post(
            "/customer/deliveries",
            body={"items": [{"id": "beer", "count": 1}], "user": {"name": "A", "email": "a@example.com"}},
            token=CUSTOMER_TOKEN,
            headers={"Idempotency-Key": "k"},
        )
        assert response.status_code == 200
    assert requests == ["PutItem", "BatchGetItem", "UpdateItem", "TransactWriteItems"]


def test_an_integration_state_takes_two_requests_and_its_overview_two(shop, requests):
    place(shop, [{"id": "beer", "count": 1}])
    with requests:  # the delivery, then its state, worklist entry and feed mark (one item) and counts in a transaction
        assert shop.put("/deliveries/1/integration", body={"status": "IMPORTED"}).status_code == 200
    assert requests == ["BatchGetItem", "TransactWriteItems"]
    with requests:  # the same state again: read only
        assert shop.put("/deliveries/1/integration", body={"status": "IMPORTED"}).status_code == 200
    assert requests == ["BatchGetItem"]
    with requests:  # another reference in the same state: no count changes, but a change a GET shows, marked on the
        # delivery's one item: a single UpdateItem
        assert shop.put("/deliveries/1/integration", body={"status": "IMPORTED", "reference": "R"}).status_code == 200
    assert requests == ["BatchGetItem", "UpdateItem"]
    with requests:
        assert shop.get("/account/integration").status_code == 200
    assert requests == ["TransactGetItems", "Query"]  # the counts' 16 shards in one snapshot, the oldest


def test_deposits_add_no_request_to_an_order_or_a_product_put(shop, requests):
    """Deposit types are read in the order's own BatchGetItem, and a product's reference counts move in its own
    transaction (one item per type it names, decisions §15)."""
    from .deliveries_helpers import put_product

    for deposit_id in ("bottle", "crate"):
        assert shop.put(f"/deposits/{deposit_id}", body={"name": deposit_id.title(), "price": 10}).status_code == 200
    plain = {
        "status": "ACTIVE",
        "category": "drinks",
        "name": "Lager",
        "price": 95,
        "vessel": {"size": 0.5, "unit": "l"},
        "bundles": [{"type": "CR", "size": 20}],
    }
    deposited = {
        **plain,
        "vessel": {**plain["vessel"], "deposit": "bottle"},
        "bundles": [{"type": "CR", "size": 20, "deposit": "crate"}],
    }
    with requests:
        put_product(shop, "lager", plain)
    without = list(requests)
    with requests:
        put_product(shop, "bottled", deposited)
    assert requests == without and len(without) <= 2
    with requests:
        assert order(shop, [{"id": "lager", "count": 1, "bundle": {"type": "CR", "size": 20}}]).status_code == 200
    without = list(requests)
    with requests:
        placed = order(
            shop,
            [{"id": "bottled", "count": 1, "bundle": {"type": "CR", "size": 20}}],
            empties=[{"id": "crate", "count": 2}],
        )
        assert placed.status_code == 200, placed.data
    assert requests == without and len(without) <= 4
    assert placed.data["deliveries"][0]["deposits"]["charged"] == [
        {"id": "bottle", "name": "Bottle", "price": 10, "count": 20},
        {"id": "crate", "name": "Crate", "price": 10, "count": 1},
    ]


def test_reading_the_feed_takes_the_head_and_one_query(shop, requests):
    place(shop, [{"id": "beer", "count": 1}])
    drain()  # the stream's numbering of the order's change
    newest = shop.get("/changes?after=latest").data["max_sequence"]
    with requests:  # the head, then the entries
        page = shop.get("/changes?after=0&limit=1000").data
    assert requests == ["GetItem", "Query"]
    assert "delivery.requested" in [e["type"] for e in page["changes"]] and page["last_sequence"] == newest


def test_reading_the_feed_numbers_nothing_a_change_is_there_once_the_stream_is_numbered(shop, requests):
    """Decisions §13: an entry is readable within 5 seconds of its change; a read never writes (the stream's
    numbering does it), so a change not yet numbered is not there, and a read at the head reads the head alone."""
    place(shop, [{"id": "beer", "count": 1}])
    drain()
    before = shop.get("/changes?after=latest").data["max_sequence"]
    place(shop, [{"id": "beer", "count": 1}])
    with requests:
        page = shop.get(f"/changes?after={before}").data
    assert requests == ["GetItem"]
    assert page == {"changes": [], "last_sequence": before, "max_sequence": before}
    drain()
    with requests:
        page = shop.get(f"/changes?after={before}").data
    assert requests == ["GetItem", "Query"]
    assert [(e["sequence"], e["type"]) for e in page["changes"]] == [(before + 1, "delivery.requested")]
    assert page["max_sequence"] == before + 1


def test_an_amendment_costs_at_most_an_orders_requests(shop, requests):
    """decisions §16: the delivery, what its lines are checked against, one transaction (summary with its feed mark,
    items and records, counts) against an order's read, id allocation and transaction."""
    body = {
        "items": [{"id": "beer", "count": 1}, {"id": "cheese", "count": 1}],
        "user": {"name": "A", "email": "a@example.com"},
    }
    with requests:
        assert order(shop, body["items"]).status_code == 200
    placing = list(requests)
    with requests:
        response = shop.post(
            "/customer/deliveries/1/amendments",
            body={**body, "items": [{"id": "beer", "count": 2}]},
            token=CUSTOMER_TOKEN,
        )
        assert response.status_code == 200, response.data
    assert requests == ["BatchGetItem", "BatchGetItem", "TransactWriteItems"] and len(requests) <= len(placing)
    with requests:  # changing nothing writes nothing
        assert (
            shop.post(
                "/customer/deliveries/1/amendments",
                body={**body, "items": [{"id": "beer", "count": 2}]},
                token=CUSTOMER_TOKEN,
            ).status_code
            == 200
        )
    assert requests == ["BatchGetItem", "BatchGetItem"]


def test_a_read_with_its_etag_and_a_change_with_if_match_take_no_request_more(shop, requests):
    place(shop, [{"id": "beer", "count": 1}])
    for path, token in (("/deliveries/1", ...), ("/customer/deliveries/1", CUSTOMER_TOKEN)):
        with requests:
            assert "ETag" in shop.get(path, token=token).headers
        assert requests == ["BatchGetItem"]
    etag = shop.get("/deliveries/1").headers["ETag"]
    with requests:
        assert respond(shop, 1, {"type": "ACCEPT"}, headers={"If-Match": etag}).status_code == 200
    assert requests == ["BatchGetItem", "UpdateItem"]  # one item, with its feed mark
    with requests:  # stale: refused after the one read
        assert respond(shop, 1, {"type": "ACCEPT"}, headers={"If-Match": etag}).status_code == 412
    assert requests == ["BatchGetItem"]


def test_a_delivery_note_takes_a_receive_s_requests_and_one_read_more(shop, requests):
    """decisions §18: the delivery, what the note is checked against (settings, customer, substitutes: one
    BatchGetItem), one transaction of two items (the summary with its feed mark, the note on the items item)."""
    received, noted = place(shop, [{"id": "beer", "count": 1}]), place(shop, [{"id": "beer", "count": 1}])
    with requests:
        assert shop.post(f"/customer/deliveries/{received['id']}/receive", {}, token=CUSTOMER_TOKEN).status_code == 200
    receiving = list(requests)
    with requests:
        assert shop.post(f"/deliveries/{noted['id']}/delivery-note", {"number": "LS-1"}).status_code == 200
    assert receiving == ["BatchGetItem", "UpdateItem"]  # one item: the summary, with its feed mark
    assert requests == ["BatchGetItem", "BatchGetItem", "TransactWriteItems"]
    with requests:  # a second note is refused after the one read
        assert shop.post(f"/deliveries/{noted['id']}/delivery-note", {"number": "LS-1"}).status_code == 400
    assert requests == ["BatchGetItem"]


def test_a_note_with_empties_and_a_substitute_takes_no_request_more(shop, requests):
    """The deposit types its empties name are read with the rest of what it is checked against (one BatchGetItem);
    the balances, the statement record and the substitute's pinned revision join the one transaction."""
    from .note_support import CRATE, bottled

    bottled(shop)
    delivery = place(shop, [{"id": "lager", "count": 2, "bundle": CRATE}])
    body = {
        "number": "LS-1",
        "substitutions": [{"for": "lager", "id": "helles", "count": 1, "bundle": CRATE}],
        "empties": [{"id": "crate", "count": 2}],
    }
    with requests:
        response = shop.post(f"/deliveries/{delivery['id']}/delivery-note", body)
        assert response.status_code == 200, response.data
    assert requests == ["BatchGetItem", "BatchGetItem", "TransactWriteItems"]


def test_a_claim_and_its_answer_take_three_requests_and_the_worklist_one(shop, requests):
    """A claim reads the delivery with its claims (one BatchGetItem), what it is checked against (the account's
    settings for its window, and the products of substitutes it names: one BatchGetItem) and writes one transaction;
    a receipt with issues and an answer naming no substitute skip the second read. A single read of a delivery with
    claims is still one request (decisions §18)."""
    place(shop, [{"id": "beer", "count": 3}])
    with requests:  # a receipt with issues is the receive and claim 1 in one transaction
        body = {"items": [{"id": "beer", "issue": "DAMAGED", "count": 1}]}
        assert shop.post("/customer/deliveries/1/receive", body=body, token=CUSTOMER_TOKEN).status_code == 200
    assert requests == ["BatchGetItem", "TransactWriteItems"]
    with requests:
        body = {"items": [{"id": "beer", "issue": "SHORT", "count": 1}]}
        assert shop.post("/customer/deliveries/1/claims", body=body, token=CUSTOMER_TOKEN).status_code == 200
    assert requests == ["BatchGetItem", "BatchGetItem", "TransactWriteItems"]
    with requests:
        body = {"items": [{"id": "beer", "accepted": 1, "resolution": "CREDIT"}]}
        assert shop.post("/deliveries/1/claims/1/answer", body=body).status_code == 200
    assert requests == ["BatchGetItem", "TransactWriteItems"]
    with requests:
        assert shop.get("/deliveries/1").status_code == 200
    assert requests == ["BatchGetItem"]
    with requests:
        assert shop.get("/claims").status_code == 200
    assert requests == ["Query"]
    with requests:
        assert shop.get("/account/claims").status_code == 200
    assert requests == ["Query", "TransactGetItems"]  # the oldest the index shows, then it and the counts at once
