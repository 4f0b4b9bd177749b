"""Versions of a delivery (decisions §16): an ETag on both single reads, If-Match on responses, cancel and
receive (amendments: tests/api/test_amendments.py)."""

import pytest

from tests.problems import assert_problem

from .deliveries_helpers import CUSTOMER_TOKEN, OTHER_CUSTOMER_TOKEN, place, respond, shop  # noqa: F401

BEER = [{"id": "beer", "count": 2, "bundle": {"id": "crate"}}]


def etags(api, delivery_id) -> tuple[str, str]:
    supplier = api.get(f"/deliveries/{delivery_id}")
    customer = api.get(f"/customer/deliveries/{delivery_id}", token=CUSTOMER_TOKEN)
    assert supplier.status_code == customer.status_code == 200
    return supplier.headers["ETag"], customer.headers["ETag"]


def test_both_single_reads_carry_the_same_etag_and_lists_none(shop):
    delivery_id = place(shop, BEER)["id"]
    supplier, customer = etags(shop, delivery_id)
    assert supplier == customer and supplier.startswith('"') and supplier.endswith('"')
    assert etags(shop, delivery_id) == (supplier, customer)  # a read changes nothing
    assert "ETag" not in shop.get("/deliveries").headers
    assert shop.request("HEAD", f"/deliveries/{delivery_id}").headers["ETag"] == supplier


def test_the_etag_changes_with_every_change_both_parties_see(shop):
    delivery_id = place(shop, BEER, scheduled={"date": "2026-05-06"})["id"]
    seen = [etags(shop, delivery_id)[0]]
    changes = [
        lambda: respond(shop, delivery_id, {"type": "ACCEPT"}),
        lambda: respond(shop, delivery_id, {"type": "UPDATE", "message": "tomorrow"}),
        lambda: shop.post(
            f"/customer/deliveries/{delivery_id}/amendments",
            {"items": [{"id": "beer", "count": 3}], "user": {"name": "A", "email": "a@example.com"}},
            token=CUSTOMER_TOKEN,
        ),
        lambda: shop.post(f"/customer/deliveries/{delivery_id}/receive", token=CUSTOMER_TOKEN),
    ]
    for change in changes:
        assert change().status_code == 200
        supplier, customer = etags(shop, delivery_id)
        assert supplier == customer and supplier not in seen
        seen.append(supplier)
    cancelled = place(shop, BEER)["id"]
    before = etags(shop, cancelled)[0]
    assert shop.post(f"/customer/deliveries/{cancelled}/cancel", token=CUSTOMER_TOKEN).status_code == 200
    assert etags(shop, cancelled)[0] != before


def test_the_integration_state_leaves_the_etag_as_it_is(shop):
    """decisions §16: only the supplier sees the integration state, so the bar's If-Match never fails for it."""
    delivery_id = place(shop, BEER)["id"]
    before = etags(shop, delivery_id)
    for state in ({"status": "IMPORTED", "reference": "SO-1"}, {"status": "FAILED", "message": "no stock"}):
        assert shop.put(f"/deliveries/{delivery_id}/integration", state).status_code == 200
        assert etags(shop, delivery_id) == before
    amended = shop.post(
        f"/customer/deliveries/{delivery_id}/amendments",
        {"items": [{"id": "beer", "count": 3}], "user": {"name": "A", "email": "a@example.com"}},
        token=CUSTOMER_TOKEN,
        headers={"If-Match": before[1]},
    )
    assert amended.status_code == 200, amended.data
    after = etags(shop, delivery_id)
    assert after != before
    assert shop.put(f"/deliveries/{delivery_id}/integration", {"status": "IMPORTED"}).status_code == 200
    assert etags(shop, delivery_id) == after
    cancel = shop.post(
        f"/customer/deliveries/{delivery_id}/cancel", token=CUSTOMER_TOKEN, headers={"If-Match": after[1]}
    )
    assert cancel.status_code == 200


def test_an_etag_read_before_the_integration_state_was_kept_apart_stays_the_same(shop):
    """A summary written before the revision was kept shows its version; its first change of the integration state
    keeps that, its next change of the document moves on from it."""
    from chalicelib.store import keys, table

    delivery_id = place(shop, BEER)["id"]
    assert respond(shop, delivery_id, {"type": "ACCEPT"}).status_code == 200
    key = table.to_item(keys.delivery_key("acme", delivery_id))
    table.client().update_item(TableName=table.name(), Key=key, UpdateExpression="REMOVE revision")
    assert etags(shop, delivery_id)[0] == f'"{delivery_id}-1"'
    assert shop.put(f"/deliveries/{delivery_id}/integration", {"status": "IMPORTED"}).status_code == 200
    assert etags(shop, delivery_id)[0] == f'"{delivery_id}-1"'
    assert respond(shop, delivery_id, {"type": "UPDATE"}).status_code == 200
    assert etags(shop, delivery_id)[0] == f'"{delivery_id}-2"'


def _stale_then_current(api, delivery_id, send):
    stale = etags(api, delivery_id)[0]
    assert respond(api, delivery_id, {"type": "ACCEPT", "reference": "first"}).status_code == 200
    current = etags(api, delivery_id)[0]
    before = api.get(f"/deliveries/{delivery_id}").data
    refused = send(stale)
    assert refused.status_code == 412
    assert refused.headers["Content-Type"] == "application/problem+json"
    assert_problem(refused, 412, "precondition-failed")
    assert api.get(f"/deliveries/{delivery_id}").data == before  # nothing changed
    assert etags(api, delivery_id)[0] == current
    return current


@pytest.mark.parametrize("weak", [False, True])
def test_a_response_with_a_stale_if_match_is_412_and_with_the_current_one_200(shop, weak):
    delivery_id = place(shop, BEER)["id"]

    def send(tag):
        return respond(shop, delivery_id, {"type": "ACCEPT"}, headers={"If-Match": ("W/" if weak else "") + tag})

    current = _stale_then_current(shop, delivery_id, send)
    accepted = send(current)
    assert accepted.status_code == 200 and accepted.data["status"] == "ACCEPTED"


@pytest.mark.parametrize("action, status", [("cancel", "CANCELLED"), ("receive", "DELIVERED")])
def test_cancel_and_receive_with_a_stale_if_match_are_412(shop, action, status):
    delivery_id = place(shop, BEER)["id"]

    def send(tag):
        return shop.post(
            f"/customer/deliveries/{delivery_id}/{action}", token=CUSTOMER_TOKEN, headers={"If-Match": tag}
        )

    current = _stale_then_current(shop, delivery_id, send)
    done = send(current)
    assert done.status_code == 200 and done.data["status"] == status


def test_an_etag_of_another_delivery_or_a_made_up_one_is_stale(shop):
    first, second = place(shop, BEER)["id"], place(shop, BEER)["id"]
    other = etags(shop, second)[0]
    for tag in (other, '"nonsense"', '""'):
        response = respond(shop, first, {"type": "ACCEPT"}, headers={"If-Match": tag})
        assert response.status_code == 412, tag
    assert respond(shop, first, {"type": "ACCEPT"}, headers={"If-Match": "*"}).status_code == 200


def test_without_if_match_changes_behave_as_before(shop):
    delivery_id = place(shop, BEER)["id"]
    assert shop.put(f"/deliveries/{delivery_id}/integration", {"status": "IMPORTED"}).status_code == 200
    assert respond(shop, delivery_id, {"type": "ACCEPT"}).status_code == 200
    assert shop.post(f"/customer/deliveries/{delivery_id}/cancel", token=CUSTOMER_TOKEN).status_code == 200


def test_another_customers_delivery_is_404_before_its_version(shop):
    delivery_id = place(shop, BEER)["id"]
    response = shop.post(
        f"/customer/deliveries/{delivery_id}/cancel", token=OTHER_CUSTOMER_TOKEN, headers={"If-Match": '"x"'}
    )
    assert response.status_code == 404
    assert shop.get(f"/customer/deliveries/{delivery_id}", token=OTHER_CUSTOMER_TOKEN).status_code == 404
