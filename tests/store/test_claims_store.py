"""Claims in the table (decisions §18; store/claims.py), on moto and DynamoDB Local: a single read pairs the summary
with the claims of its own version, the overview is one moment's even while the worklist's index lags behind, and the
worklists page in full pages from their own index partitions."""

import json

from chalicelib.service import claim_reads, claims, delivery_reads, ordering
from chalicelib.store import batch, claim_keys, table
from chalicelib.store import deliveries as delivery_store
from tests.store.test_delivery_concurrency import placed_delivery

ACCOUNT, CUSTOMER = "acme", "c1"
BEER = {"items": [{"id": "beer", "issue": "DAMAGED", "count": 1}]}


def received(customer: str = CUSTOMER) -> int:
    body = {"items": [{"id": "beer", "count": 20}], "user": {"name": "Olli", "email": "olli@example.com"}}
    (delivery,) = ordering.place_order(ACCOUNT, customer, body)
    claims.receive(ACCOUNT, customer, str(delivery["id"]), {})
    return delivery["id"]


def _raw(key: dict) -> dict:
    return table.client().get_item(TableName=table.name(), Key=table.to_item(key), ConsistentRead=True)["Item"]


def test_a_single_read_never_pairs_a_summary_with_claims_of_another_version(engine, monkeypatch):
    placed_delivery()
    delivery_id = received()
    claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), BEER)
    claims_key = claim_keys.delivery_claims_key(ACCOUNT, delivery_id)
    before = table.from_item(_raw(claims_key))  # the claims as claim 1 left them
    claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), BEER)
    reads, get_items = [], batch.get_items

    def lagging(keys, consistent=False, clock=None):  # the first read sees the claims item of the version before
        reads.append(consistent)
        found = get_items(keys, consistent, clock)
        if len(reads) == 1:
            found[(claims_key["PK"], claims_key["SK"])] = before
        return found

    monkeypatch.setattr(batch, "get_items", lagging)
    stored = delivery_store.get(ACCOUNT, delivery_id)
    assert reads == [False, True]  # read again, consistently
    assert [int(c["number"]) for c in stored.delivery["claims"]] == [1, 2]
    assert delivery_reads.revision(stored) == f"{delivery_id}-3"  # received, claim 1, claim 2


def test_the_overview_reads_again_while_the_index_shows_an_answered_claim_or_not_yet_a_new_one(engine, monkeypatch):
    placed_delivery()
    first, second = received(), received()
    claims.open_claim(ACCOUNT, CUSTOMER, str(first), BEER)
    claims.open_claim(ACCOUNT, CUSTOMER, str(second), BEER)
    stale = table.from_item(_raw(claim_keys.claim_key(ACCOUNT, first, 1)))  # OPEN, as the index held it
    claims.answer(ACCOUNT, str(first), "1", {"items": [{"id": "beer", "accepted": 1, "resolution": "CREDIT"}]})
    calls, first_in_index = [], table.first_in_index

    def lagging(index, partition):
        calls.append(partition)
        return stale if len(calls) == 1 else first_in_index(index, partition)

    monkeypatch.setattr(table, "first_in_index", lagging)
    since = table.from_item(_raw(claim_keys.claim_key(ACCOUNT, second, 1)))["since"]
    assert claim_reads.claims_overview(ACCOUNT) == {
        "open": 1,
        "oldest_open": {"delivery_id": second, "number": 1, "since": since},
    }
    assert len(calls) == 2
    calls.clear()
    monkeypatch.setattr(table, "first_in_index", lambda index, partition: calls.append(1) or None)
    overview = claim_reads.claims_overview(ACCOUNT)  # the index never shows it: the count says one, no oldest
    assert overview == {"open": 1, "oldest_open": None} and len(calls) == 10


def test_worklists_page_in_full_pages_oldest_first(engine):
    placed_delivery()
    mine = [received() for _ in range(3)]
    for delivery_id in mine:
        claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), BEER)
        claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), BEER)
    listed, cursor = [], None
    while True:
        page = claim_reads.list_claims(ACCOUNT, "OPEN", CUSTOMER, 4, cursor)
        assert len(page.items) == 4 or page.cursor is None
        listed += [(e["delivery_id"], e["number"]) for e in map(json.loads, page.items)]
        cursor = page.cursor
        if cursor is None:
            break
    assert listed == [(d, n) for d in mine for n in (1, 2)]
    assert claim_reads.list_claims(ACCOUNT, "OPEN", "c2", 4, None).items == []
