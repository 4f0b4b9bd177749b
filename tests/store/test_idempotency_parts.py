"""An Idempotency-Key answer longer than one record continues in parts (store/idempotency.py), on moto and on
DynamoDB Local: a delivery in full with its note and claims (decisions §18) answers more than an item's 400 KB, and
its replay is still the first answer byte for byte (decisions §11)."""

import datetime as dt

import pytest

from chalicelib.store import idempotency, keys, table
from chalicelib.store.outcomes import LostClaim
from chalicelib.store.unit_of_work import unit_of_work

ACCOUNT = "acme"
NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)
# 999,999 bytes: ASCII, two-, three- and four-byte characters, so part boundaries fall inside characters.
LONG = ("a" * 199_999 + "ä" * 50_000 + "€" * 100_000 + "🍺" * 100_000 + "z")[:-1]


def _parts_stored() -> int:
    pk = keys.idempotency_part_key(ACCOUNT, "SUPPLIER", "k", 1)["PK"]
    return table.client().query(
        TableName=table.name(),
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=pk),
        Select="COUNT",
    )["Count"]


@pytest.mark.parametrize("text", ["", "ä", "x" * 10, "€" * 7, LONG])
def test_split_cuts_between_characters_and_joins_back(text):
    pieces = idempotency.split(text, 5)
    assert "".join(pieces) == text
    assert all(len(piece.encode()) <= 5 for piece in pieces) and pieces


def test_a_long_answer_recorded_in_the_work_s_transaction_replays_byte_for_byte(engine):
    claimed = idempotency.claim(ACCOUNT, "SUPPLIER", "note-1", "f" * 64, 1_000)
    assert len(LONG.encode()) > 3 * idempotency.PART_BYTES
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.answer(idempotency.Completion(claimed, 200, {"Content-Type": "application/json"}, LONG))
        assert uow.commit() is None
    assert _parts_stored() == 3
    replay = idempotency.claim(ACCOUNT, "SUPPLIER", "note-1", "f" * 64, 1_001)
    assert (replay.state, replay.status, replay.body) == (idempotency.COMPLETE, 200, LONG)


def test_a_short_answer_takes_no_part(engine):
    claimed = idempotency.claim(ACCOUNT, "SUPPLIER", "k", "f" * 64, 1_000)
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.answer(idempotency.Completion(claimed, 200, {}, "{}"))
        assert uow.commit() is None
    assert _parts_stored() == 0
    assert idempotency.claim(ACCOUNT, "SUPPLIER", "k", "f" * 64, 1_001).body == "{}"


def test_a_long_answer_recorded_after_the_work_and_a_lost_claim(engine):
    claimed = idempotency.claim(ACCOUNT, "SUPPLIER", "k", "f" * 64, 1_000)
    taken_over = idempotency.ClaimedKey(ACCOUNT, "SUPPLIER", "k", "someone-else", claimed.expires_at)
    assert idempotency.complete(taken_over, 400, {}, LONG) == LostClaim()
    assert _parts_stored() == 0
    assert idempotency.complete(claimed, 400, {}, LONG) is None
    replay = idempotency.claim(ACCOUNT, "SUPPLIER", "k", "f" * 64, 1_001)
    assert (replay.status, replay.body) == (400, LONG)
    part = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.idempotency_part_key(ACCOUNT, "SUPPLIER", "k", 1))
    )["Item"]
    assert int(part["expires_at"]["N"]) == claimed.expires_at  # parts expire with their record


def test_a_part_key_never_names_another_key_s_part():
    assert keys.idempotency_part_key(ACCOUNT, "S", "a#1", 2) != keys.idempotency_part_key(ACCOUNT, "S", "a", 12)
    assert keys.idempotency_part_key(ACCOUNT, "S", "a", 1)["PK"] != keys.idempotency_key(ACCOUNT, "S", "a#1")["PK"]


def test_a_unit_of_work_with_no_change_records_a_long_answer_with_its_parts(engine):
    """A resend's or an import's answer (a unit of work with no change) is no longer bound to one record."""
    claimed = idempotency.claim(ACCOUNT, "SUPPLIER", "k", "f" * 64, 1_000)
    with unit_of_work(ACCOUNT, NOW) as uow:
        uow.answer(idempotency.Completion(claimed, 202, {}, LONG))
        assert uow.commit() is None
    assert _parts_stored() == 3  # 999,999 bytes: the record's 300,000 and three parts
    replay = idempotency.claim(ACCOUNT, "SUPPLIER", "k", "f" * 64, 1_001)
    assert (replay.status, replay.body) == (202, LONG)
