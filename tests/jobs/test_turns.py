"""Per-account turns: the one scheduling rule of every kind of background work (jobs/turns.py)."""

from chalicelib.jobs.turns import in_turns, rounds


def account(unit: str) -> str:
    return unit.split("-")[0]


def test_accounts_take_turns_in_the_order_of_their_oldest_unit():
    work = [f"a-{n}" for n in range(25)] + ["b-0", "c-0", "c-1"]
    assert rounds(work, account)[0] == ["a-0", "b-0", "c-0"]
    assert rounds(work, account)[1] == ["a-1", "c-1"]
    assert in_turns(work, account)[:5] == ["a-0", "b-0", "c-0", "a-1", "c-1"]
    assert sorted(in_turns(work, account)) == sorted(work)


def test_no_work_is_no_rounds():
    assert rounds([], account) == [] and in_turns([], account) == []
