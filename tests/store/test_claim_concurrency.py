"""Claims at once on DynamoDB Local (decisions §18, §16): twenty claims on one delivery (none lost, at most ten), a
claim racing the answer of another, a withdrawal racing the answer of the same claim; each race from threads (every
outcome an interleaving may give is checked) and in each order forced once (the loser is checked again against what
the winner left). The counts and the worklists stay exact through all of it. On that engine only: moto serialises
every request, so it cannot race."""

import pytest

from chalicelib.domain.errors import InvalidTransition, PreconditionFailed, ValidationFailed
from chalicelib.service import claim_reads, claims, delivery_reads, ordering
from chalicelib.store import deliveries as delivery_store
from tests.store.test_amendment_concurrency import fire
from tests.store.test_delivery_concurrency import placed_delivery
from tests.store.test_note_concurrency import _winner_first

ACCOUNT, CUSTOMER = "acme", "c1"
ROUNDS = 3

pytestmark = pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)


def received() -> int:
    """Twenty beers (150 a bottle) ordered by c1 and received: the delivery's id."""
    body = {"items": [{"id": "beer", "count": 20}], "user": {"name": "Olli", "email": "olli@example.com"}}
    (delivery,) = ordering.place_order(ACCOUNT, CUSTOMER, body)
    claims.receive(ACCOUNT, CUSTOMER, str(delivery["id"]), {})
    return delivery["id"]


@pytest.fixture
def delivery_id(engine) -> int:
    placed_delivery()  # the catalogue and the customer
    return received()


def _claim(delivery_id: int, count: int = 1):
    body = {"items": [{"id": "beer", "issue": "DAMAGED", "count": count}]}
    return lambda: claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), body)


def _answer(delivery_id: int, number: int, accepted: int, if_match: str | None = None):
    body = {"items": [{"id": "beer", "accepted": accepted, "resolution": "CREDIT"}]}
    if accepted == 0:
        body["message"] = "not ours"
    return lambda: claims.answer(ACCOUNT, str(delivery_id), str(number), body, if_match=if_match)


def _withdraw(delivery_id: int, number: int):
    return lambda: claims.withdraw(ACCOUNT, CUSTOMER, str(delivery_id), str(number), {})


def _stored_claims(delivery_id: int) -> list[dict]:
    return delivery_store.get(ACCOUNT, delivery_id, consistent=True).delivery.get("claims", [])


def _worklist(status: str) -> list[tuple[int, int]]:
    import json

    page = claim_reads.list_claims(ACCOUNT, status, None, 100, None)
    return [(entry["delivery_id"], entry["number"]) for entry in map(json.loads, page.items)]


def assert_counts_exact(*delivery_ids: int) -> None:
    """The overview and every worklist say what the deliveries' claims say."""
    held = {status: [] for status in ("OPEN", "ACCEPTED", "PARTIALLY_ACCEPTED", "DECLINED", "WITHDRAWN")}
    for delivery_id in delivery_ids:
        for claim in _stored_claims(delivery_id):
            held[claim["status"]].append((delivery_id, int(claim["number"])))
    for status, expected in held.items():
        assert sorted(_worklist(status)) == sorted(expected), status
    overview = claim_reads.claims_overview(ACCOUNT)
    assert overview["open"] == len(held["OPEN"])
    oldest = _worklist("OPEN")[:1]
    assert (
        overview["oldest_open"] and (overview["oldest_open"]["delivery_id"], overview["oldest_open"]["number"])
    ) == (oldest[0] if oldest else None)


def test_twenty_claims_at_once_make_ten_none_lost(delivery_id):
    results = fire([_claim(delivery_id) for _ in range(20)])
    made = [r for r in results if isinstance(r, dict)]
    refused = [r for r in results if not isinstance(r, dict)]
    assert len(made) == 10 and len(refused) == 10, results
    assert all(isinstance(r, ValidationFailed) and [e.path for e in r.errors] == ["items"] for r in refused), refused
    stored = _stored_claims(delivery_id)
    assert [int(c["number"]) for c in stored] == list(range(1, 11))
    # Each one made answered the delivery with its own claim last: no answer shows a claim that was lost.
    assert sorted(len(r["claims"]) for r in made) == list(range(1, 11))
    assert delivery_store.get(ACCOUNT, delivery_id, consistent=True).version == 1 + 10
    assert_counts_exact(delivery_id)


# --- a claim racing the answer of another ---


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_claim_and_the_answer_of_another_at_once_apply_in_one_order(delivery_id, round_):
    claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), {"items": [{"id": "beer", "issue": "SHORT", "count": 12}]})
    declined, opened = fire([_answer(delivery_id, 1, 0), _claim(delivery_id, 10)])
    assert not isinstance(declined, Exception), declined
    stored = _stored_claims(delivery_id)
    assert stored[0]["status"] == "DECLINED"
    if isinstance(opened, ValidationFailed):  # the claim first: 12 + 10 of 20 did not fit; never checked again
        assert [e.path for e in opened.errors] == ["items[0].count"] and len(stored) == 1
    else:  # the answer first: the declined 12 hold nothing, the claim of 10 fits
        assert not isinstance(opened, Exception), opened
        assert [(int(c["number"]), c["status"]) for c in stored] == [(1, "DECLINED"), (2, "OPEN")]
    assert_counts_exact(delivery_id)


def test_a_claim_that_lost_to_an_answer_keeps_the_answer(delivery_id, monkeypatch):
    claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), {"items": [{"id": "beer", "issue": "SHORT", "count": 2}]})
    raced = _winner_first(monkeypatch, _answer(delivery_id, 1, 2))
    opened = _claim(delivery_id, 3)()  # read while claim 1 was OPEN: written after it was answered, over the answer
    assert raced[1]["claims"][0]["status"] == "ACCEPTED"
    assert [(int(c["number"]), c["status"]) for c in opened["claims"]] == [(1, "ACCEPTED"), (2, "OPEN")]
    assert opened["claims"][0]["answer"] == raced[1]["claims"][0]["answer"]
    assert_counts_exact(delivery_id)


def test_a_claim_that_lost_to_another_claim_is_counted_against_it(delivery_id, monkeypatch):
    _winner_first(monkeypatch, _claim(delivery_id, 10))
    with pytest.raises(ValidationFailed) as refused:
        _claim(delivery_id, 12)()  # 12 of 20 was left when it read; 10 when it wrote
    assert [e.path for e in refused.value.errors] == ["items[0].count"]
    assert [int(c["items"][0]["count"]) for c in _stored_claims(delivery_id)] == [10]
    assert_counts_exact(delivery_id)


def test_an_answer_that_lost_to_a_claim_answers_what_it_read_and_keeps_the_new_claim(delivery_id, monkeypatch):
    claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), {"items": [{"id": "beer", "issue": "SHORT", "count": 2}]})
    _winner_first(monkeypatch, _claim(delivery_id, 3))
    answered = _answer(delivery_id, 1, 2)()
    assert [(int(c["number"]), c["status"]) for c in answered["claims"]] == [(1, "ACCEPTED"), (2, "OPEN")]
    assert answered["claims"][0]["items"][0]["credit"] == 2 * 150
    assert_counts_exact(delivery_id)


def test_an_answer_with_if_match_never_answers_a_version_it_has_not_read(delivery_id, monkeypatch):
    claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), {"items": [{"id": "beer", "issue": "SHORT", "count": 2}]})
    tag = delivery_reads.revision(delivery_store.get(ACCOUNT, delivery_id, consistent=True))
    _winner_first(monkeypatch, _claim(delivery_id, 3))
    with pytest.raises(PreconditionFailed):
        _answer(delivery_id, 1, 2, if_match=tag)()
    assert [c["status"] for c in _stored_claims(delivery_id)] == ["OPEN", "OPEN"]
    assert_counts_exact(delivery_id)


# --- a withdrawal racing the answer of the same claim ---


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_withdrawal_and_an_answer_at_once_exactly_one_wins(delivery_id, round_):
    claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), {"items": [{"id": "beer", "issue": "SHORT", "count": 2}]})
    withdrawn, answered = fire([_withdraw(delivery_id, 1), _answer(delivery_id, 1, 2)])
    winners = [r for r in (withdrawn, answered) if not isinstance(r, Exception)]
    losers = [r for r in (withdrawn, answered) if isinstance(r, Exception)]
    assert len(winners) == 1 and len(losers) == 1 and isinstance(losers[0], InvalidTransition), (withdrawn, answered)
    (claim,) = _stored_claims(delivery_id)
    assert claim["status"] == ("WITHDRAWN" if winners[0] is withdrawn else "ACCEPTED")
    assert ("withdrawn_at" in claim) != ("answer" in claim)
    assert delivery_store.get(ACCOUNT, delivery_id, consistent=True).version == 1 + 1 + 1
    assert_counts_exact(delivery_id)


@pytest.mark.parametrize("winner", ["withdraw", "answer"])
def test_whichever_of_a_withdrawal_and_an_answer_comes_second_finds_the_claim_settled(delivery_id, monkeypatch, winner):
    claims.open_claim(ACCOUNT, CUSTOMER, str(delivery_id), {"items": [{"id": "beer", "issue": "SHORT", "count": 2}]})
    first, second = (_withdraw(delivery_id, 1), _answer(delivery_id, 1, 2))
    if winner == "answer":
        first, second = second, first
    _winner_first(monkeypatch, first)
    with pytest.raises(InvalidTransition, match="only an OPEN claim"):
        second()
    (claim,) = _stored_claims(delivery_id)
    assert claim["status"] == ("WITHDRAWN" if winner == "withdraw" else "ACCEPTED")
    assert_counts_exact(delivery_id)


# --- the overview under a mixed workload ---


def test_the_overview_is_exact_after_claims_answers_and_withdrawals_at_once(engine):
    placed_delivery()
    deliveries = [received() for _ in range(4)]
    work = [_claim(d, 1) for d in deliveries for _ in range(4)]
    fire(work)
    more = []
    for d in deliveries:
        more += [_answer(d, 1, 1), _withdraw(d, 2), _answer(d, 3, 0), _claim(d, 2), _withdraw(d, 4)]
    reads: list = []
    more += [lambda: reads.append(claim_reads.claims_overview(ACCOUNT)) for _ in range(4)]
    results = fire(more)
    assert not [r for r in results if isinstance(r, Exception)], results
    for read in reads:  # every read is one moment's: a count with its oldest, or none with none
        assert (read["open"] == 0) == (read["oldest_open"] is None), read
    assert_counts_exact(*deliveries)
    assert claim_reads.claims_overview(ACCOUNT)["open"] == len(deliveries)  # each delivery's claim 5
