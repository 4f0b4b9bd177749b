"""domain/amendments.py without infrastructure: lines kept, changed, added and removed; the cutoff at its edge in
the account's time zone; what an ACCEPTED delivery may not become."""

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import pytest

from chalicelib.domain.amendments import AmendmentBody, amend
from chalicelib.domain.common import ValidationFailed, parse
from chalicelib.domain.delivery import OrderBody
from chalicelib.domain.errors import InvalidTransition
from chalicelib.domain.ordering import plan_order

USER = {"name": "Olli", "email": "olli@example.com"}
ALE = {
    "id": "ale",
    "status": "ACTIVE",
    "name": "Ale",
    "price": 300,
    "bundles": [{"id": "six", "id_override": "ale-six", "type": "PK", "size": 6}],
}
CIDER = {"id": "cider", "status": "ACTIVE", "name": "Cider", "price": 200}
# Wednesdays only, ordered by noon the day before, in Helsinki (UTC+3 in May).
SETTINGS = {"timezone": "Europe/Helsinki", "delivery_days": {"3": {"lead_days": 1, "cutoff": "12:00"}}}
BEFORE = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)


def context():
    """What an order is checked against (domain/ordering.OrderContext), as plain data."""
    return SimpleNamespace(
        settings=SETTINGS,
        customer={"id": "c1", "address": {"address1": "x"}},
        products={"ale": ALE, "cider": CIDER},
        customer_pricing={},
        price_groups={},
        deposit_types={},
    )


def placed(items, scheduled={"date": "2026-05-06"}) -> dict:
    body = parse(OrderBody, {"items": items, "scheduled": scheduled, "user": USER})
    (delivery,) = plan_order(body, "c1", context(), BEFORE).deliveries
    return {"id": 1, **delivery}


def amended(delivery, body, now=BEFORE):
    return amend(delivery, None, parse(AmendmentBody, {"user": USER, **body}), context(), now)


def test_a_bundle_named_by_type_and_size_is_the_same_line():
    delivery = placed([{"id": "ale", "count": 2, "bundle": {"id": "six"}}])
    assert (
        amended(delivery, {"items": [{"id": "ale", "count": 2, "bundle": {"type": "PK", "size": 6}}]}).delivery is None
    )


def test_an_item_shown_by_its_bundles_id_override_belongs_to_its_product():
    delivery = placed([{"id": "ale", "count": 2, "bundle": {"id": "six"}}, {"id": "cider", "count": 1}])
    result = amended(delivery, {"items": [{"id": "ale", "count": 2}, {"id": "cider", "count": 1}]}).delivery
    (entry,) = result["amendments"][0]["items"]
    assert entry == {"id": "ale", "bundle": None, "action": "CHANGED", "count_before": 2, "count": 2}
    assert [i["id"] for i in result["request"]["items"]] == ["ale", "cider"]
    assert result["request"]["items"][1] is delivery["request"]["items"][1]  # kept exactly


@pytest.mark.parametrize(
    "now, deliverable",
    [
        (dt.datetime(2026, 5, 5, 9, 0, 59, tzinfo=dt.timezone.utc), True),  # 12:00:59 in Helsinki: no later than 12:00
        (dt.datetime(2026, 5, 5, 9, 1, tzinfo=dt.timezone.utc), False),
    ],
)
def test_the_cutoff_at_its_edge(now, deliverable):
    delivery = placed([{"id": "cider", "count": 1}])
    body = {"items": [{"id": "cider", "count": 2}]}
    if deliverable:
        assert amended(delivery, body, now).delivery["request"]["items"][0]["count"] == 2
    else:
        with pytest.raises(ValidationFailed) as failed:
            amended(delivery, body, now)
        assert [e.path for e in failed.value.errors] == ["scheduled"]


def test_a_removed_line_goes_last_with_its_old_bundle():
    delivery = placed([{"id": "ale", "count": 2, "bundle": {"id": "six"}}, {"id": "cider", "count": 1}])
    result = amended(delivery, {"items": [{"id": "cider", "count": Decimal(3)}]}).delivery
    assert result["amendments"][0]["items"] == [
        {"id": "cider", "bundle": None, "action": "CHANGED", "count_before": 1, "count": 3},
        {
            "id": "ale-six",
            "bundle": {"id": "six", "type": "PK", "size": 6},
            "action": "REMOVED",
            "count_before": 2,
            "count": 0,
        },
    ]


def test_an_accepted_delivery_may_not_become_as_soon_as_possible():
    delivery = {**placed([{"id": "cider", "count": 1}]), "status": "ACCEPTED"}
    with pytest.raises(InvalidTransition):
        amended(delivery, {"items": [{"id": "cider", "count": 1}], "scheduled": None})
    result = amended(delivery, {"items": [{"id": "cider", "count": 2}]}).delivery
    assert result["status"] == "REQUESTED"
