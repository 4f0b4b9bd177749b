"""The pure rules of decisions §18: the delivery's date a substitute is priced on, what the note counts as
returned when it names no empties, and what deposits count once a note exists."""

import datetime as dt

import pytest

from chalicelib.domain import delivery_note, deposits, substitutions
from chalicelib.domain.common import parse
from chalicelib.domain.errors import InvalidTransition, ValidationFailed

REQUEST = {"timestamp": "2026-05-04T22:30:00.000Z", "scheduled": {"date": "2026-05-08"}, "items": []}
HELSINKI = {"timezone": "Europe/Helsinki"}
NOW = dt.datetime(2026, 5, 5, 8, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize(
    "stated, responses, request_scheduled, expected",
    [
        ({"date": "2026-05-10"}, [{"scheduled": {"date": "2026-05-09"}}], {"date": "2026-05-08"}, "2026-05-10"),
        (None, [{"scheduled": {"date": "2026-05-09"}}, {"type": "UPDATE"}], {"date": "2026-05-08"}, "2026-05-09"),
        (None, [{"type": "ACCEPT"}], {"date": "2026-05-08"}, "2026-05-08"),
        (None, [], None, "2026-05-05"),  # ordered at 01:30 in Helsinki: the next day there
    ],
)
def test_a_substitute_is_priced_on_the_delivery_s_date(stated, responses, request_scheduled, expected):
    request = {**REQUEST, "scheduled": request_scheduled}
    assert substitutions.price_date(request, responses, stated, HELSINKI) == dt.date.fromisoformat(expected)


def _delivery(**fields) -> dict:
    items = [{"id": "beer", "count": 10, "bundle": None, "vessel_count": 10}]
    request = {**REQUEST, "items": items, "empties": [{"id": "crate", "name": "Crate", "price": 150, "count": 4}]}
    return {"id": 1, "type": "DELIVERY", "status": "REQUESTED", "request": request, "responses": [], **fields}


def _note(**body):
    return parse(delivery_note.DeliveryNoteBody, {"number": "LS-1", **body})


def test_a_note_without_empties_takes_the_latest_response_s_else_the_announced_ones():
    announced = delivery_note.deliver(_delivery(), None, _note(), None, None, NOW, "UTC")
    assert announced["delivery_note"]["empties"] == [{"id": "crate", "name": "Crate", "price": 150, "count": 4}]
    collected = [{"id": "crate", "name": "Crate", "price": 150, "count": 1}]
    answered = _delivery(status="ACCEPTED", responses=[{"type": "ACCEPT", "empties": collected}, {"type": "UPDATE"}])
    assert (
        delivery_note.deliver(answered, None, _note(), None, None, NOW, "UTC")["delivery_note"]["empties"] == collected
    )
    amended = delivery_note.deliver(answered, {"responses_from": 2}, _note(), None, None, NOW, "UTC")
    assert amended["delivery_note"]["empties"][0]["count"] == 4  # responses before an amendment state nothing


def test_once_a_note_exists_it_alone_says_what_is_charged_and_returned():
    basis = {"packaging": {"beer": {"vessel": "bottle", "bundles": []}}, "types": {"bottle": {"name": "B", "price": 8}}}
    delivered = delivery_note.deliver(
        _delivery(), basis, _note(items=[{"id": "beer", "count": 7}], empties=[]), None, [], NOW, "UTC"
    )
    shown = deposits.delivery_deposits(delivered, basis)
    assert shown == {"charged": [{"id": "bottle", "name": "B", "price": 8, "count": 7}], "returned": [], "total": 56}
    returned = delivery_note.deliver(_delivery(type="RETURN"), basis, _note(), None, [], NOW, "UTC")
    assert deposits.delivery_deposits(returned, basis)["returned"] == [
        {"id": "bottle", "name": "B", "price": 8, "count": 10}
    ]


def test_a_note_is_given_once_and_not_to_a_final_delivery():
    delivered = delivery_note.deliver(_delivery(), None, _note(), None, None, NOW, "UTC")
    with pytest.raises(InvalidTransition):
        delivery_note.deliver(delivered, None, _note(), None, None, NOW, "UTC")
    with pytest.raises(InvalidTransition):
        delivery_note.deliver(_delivery(status="CANCELLED"), None, _note(), None, None, NOW, "UTC")


def test_a_note_larger_than_its_bound_names_the_body(monkeypatch):
    from chalicelib.domain import limits

    monkeypatch.setattr(limits, "NOTE_BYTES", 4_000)
    fits = _note(proof={"note": "x" * 1500})
    assert delivery_note.deliver(_delivery(), None, fits, None, None, NOW, "UTC")["status"] == "DELIVERED"
    with pytest.raises(ValidationFailed) as refused:
        delivery_note.deliver(
            _delivery(), None, _note(proof={"note": "x" * 2000}, message="y" * 2000), None, None, NOW, "UTC"
        )
    assert [e.path for e in refused.value.errors] == ["body"]


def _wide_order(bundle_id: str) -> dict:
    """50 lines, each bundle and pallet bundle named by `bundle_id` (docs/limits.md: what a note repeats)."""
    pallet = {"id": bundle_id, "type": "CHEP", "size": 2}
    bundle = {"id": bundle_id, "type": "CS", "size": 6, "pallet_bundle": pallet}
    items = [{"id": f"p{n:02}-{'x' * 124}", "count": 12, "bundle": bundle, "vessel_count": 72} for n in range(50)]
    return _delivery(request={**REQUEST, "items": items})


def test_a_note_repeats_each_lines_bundle_so_an_order_of_the_widest_bundle_ids_takes_none():
    from chalicelib.domain import limits

    ascii_ids = delivery_note.deliver(_wide_order("b" * 256), None, _note(), None, None, NOW, "UTC")
    assert limits.size_in_bytes(ascii_ids["delivery_note"]) < limits.NOTE_BYTES
    with pytest.raises(ValidationFailed) as refused:
        delivery_note.deliver(_wide_order("\U0001f37a" * 256), None, _note(), None, None, NOW, "UTC")
    assert [e.path for e in refused.value.errors] == ["body"]
    assert "at most 90,000" in refused.value.errors[0].message
