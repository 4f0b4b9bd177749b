"""The second review of deposits (issue 36): its reproductions, each failing before its fix."""
from chalicelib.store import feed
from tests.api.deliveries_helpers import CUSTOMER, shop  # noqa: F401
from tests.api.test_deposit_deliveries import drinks  # noqa: F401


def crate_balance(api) -> int:
    return {b["id"]: b["balance"] for b in api.get(f"/customers/{CUSTOMER}/deposits").data["deposits"]}["crate"]


def test_a_keyed_adjustment_whose_process_dies_after_its_write_is_not_applied_again(drinks, monkeypatch):
    """The answer is recorded in the write that adjusts (§11): the retry replays it (5, not 10)."""
    real = feed.commit

    def commit_then_die(*args, **kwargs):
        real(*args, **kwargs)
        raise RuntimeError("the process died after its write")

    monkeypatch.setattr(feed, "commit", commit_then_die)
    body = {"id": "crate", "count": 5, "message": "opening balance"}
    headers = {"Idempotency-Key": "adjust-1"}
    assert drinks.post(f"/customers/{CUSTOMER}/deposits", body, headers=headers).status_code == 500
    monkeypatch.setattr(feed, "commit", real)
    retried = drinks.post(f"/customers/{CUSTOMER}/deposits", body, headers=headers)
    assert retried.status_code == 200, retried.data
    assert retried.headers.get("Idempotent-Replayed") == "true"
    assert {b["id"]: b["balance"] for b in retried.data["deposits"]}["crate"] == 5
    assert crate_balance(drinks) == 5
    assert len(drinks.get(f"/customers/{CUSTOMER}/deposits/movements").data["movements"]) == 1


def test_a_keyed_adjustment_answers_and_replays_the_balances_it_wrote(drinks):
    headers = {"Idempotency-Key": "adjust-2"}
    body = {"id": "crate", "count": 3, "message": "correction"}
    first = drinks.post(f"/customers/{CUSTOMER}/deposits", body, headers=headers)
    assert first.status_code == 200 and crate_balance(drinks) == 3
    drinks.post(f"/customers/{CUSTOMER}/deposits", {"id": "crate", "count": 1, "message": "another"})
    again = drinks.post(f"/customers/{CUSTOMER}/deposits", body, headers=headers)
    assert again.data == first.data and again.headers.get("Idempotent-Replayed") == "true"
    assert crate_balance(drinks) == 4
