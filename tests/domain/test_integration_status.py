"""How supplier reads show the integration state (decisions §14): the view of a delivery as a document, and of a
delivery kept as its JSON text (list pages), which must be the same JSON."""

import json

import pytest

from chalicelib.domain.field_order import DELIVERY, ordered
from chalicelib.domain.integration_status import state_text, supplier_text, supplier_view
from chalicelib.domain.rendering import json_text

DELIVERY_DOC = {
    "id": 7,
    "type": "DELIVERY",
    "status": "REQUESTED",
    "request": {"timestamp": "2026-05-04T09:30:00.000Z"},
}
TEXT = json_text(ordered(DELIVERY_DOC, DELIVERY))


def test_the_text_of_a_standing_orders_delivery_keeps_standing_order_last():
    """An audit found supplier list pages showing `integration` after `standing_order` (single reads had it right)."""
    placed = {**DELIVERY_DOC, "standing_order": {"id": "weekly", "date": "2026-05-05"}}
    stored = {"status": "IMPORTED", "reference": "R"}
    text = supplier_text(json_text(ordered(placed, DELIVERY)), state_text(stored))
    assert text == json_text(ordered(supplier_view(placed, stored), DELIVERY))
    assert list(json.loads(text))[-2:] == ["integration", "standing_order"]


@pytest.mark.parametrize(
    "stored",
    [
        None,  # stored before integration states: reads PENDING
        {"status": "PENDING"},
        {"updated": "2026-05-04T09:35:00.000Z", "message": "x", "reference": "ERP-1", "status": "FAILED"},
        {
            "status": "FAILED",
            "message": 'quote " backslash \\ tab \t nul \x00 äöü ж 😀 \u2028',
            "reference": "</script>",
        },
        {"status": "IMPORTED", "reference": "R", "updated": "2026-05-04T09:35:00.000Z"},
    ],
)
def test_the_text_is_the_views_json_in_field_order(stored):
    expected = json_text(ordered(supplier_view(DELIVERY_DOC, stored), DELIVERY))
    assert supplier_text(TEXT, state_text(stored)) == expected
    assert json.loads(state_text(stored)) == supplier_view(DELIVERY_DOC, stored)["integration"]  # what reads parse back
    shown = json.loads(supplier_text(TEXT, state_text(stored)))
    assert list(shown)[-1] == "integration"
    assert list(shown["integration"]) == [
        f for f in ("status", "reference", "message", "updated") if f in shown["integration"]
    ]


def test_a_delivery_without_a_state_shows_pending_and_the_stored_state_is_not_changed():
    stored = {"status": "IMPORTED"}
    assert supplier_view(DELIVERY_DOC, None)["integration"] == {"status": "PENDING"}
    view = supplier_view(DELIVERY_DOC, stored)
    view["integration"]["status"] = "FAILED"
    assert stored == {"status": "IMPORTED"} and "integration" not in DELIVERY_DOC
