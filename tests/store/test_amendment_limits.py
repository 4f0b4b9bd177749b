"""A delivery at every limit with its 20 amendments (decisions §16, domain/limits.py), on DynamoDB Local: the
largest order's items and the amendment records at their byte bound, each write with an Idempotency-Key whose
record holds the whole delivery, and the delivery can still be cancelled at its largest."""

from chalicelib.domain import limits
from chalicelib.domain.amendments import AmendmentBody, amend
from chalicelib.domain.common import parse
from chalicelib.domain.rendering import size_in_bytes
from chalicelib.store import deliveries as delivery_store
from chalicelib.store import order_context

from .test_limits_store import CUSTOMER_TOKEN, NOW, WORST, api, finish, largest, largest_order, valid  # noqa: F401


def _body(count: int, message: int) -> dict:
    return {
        "items": [
            {"id": f"o{i:02d}", "count": count if i == 0 else 1, **_comment(i)} for i in range(limits.ORDER_ITEMS)
        ],
        "user": AMENDER,
        "message": WORST * message,
    }


_comments: dict = {}
# The largest user takes 3,000 bytes a record: with it the byte bound stops the 20th record before the count does.
# Here a plain one, and messages that fill the bound.
AMENDER = {"name": "Olli Orderer", "email": "olli@example.com"}


def _comment(i: int) -> dict:
    return {"message": _comments["text"]} if _comments else {}


def _fits(delivery_id: int, body: dict) -> bool:
    stored = delivery_store.get("acme", delivery_id, consistent=True)
    context = order_context.load("acme", "c1", [item["id"] for item in body["items"]], read_deposits=True)
    return valid(lambda: amend(stored.delivery, stored.deposit_basis, parse(AmendmentBody, body), context, NOW))


def amended_to_the_bound(api, delivery: dict) -> tuple[dict, int]:
    """The largest order amended 20 times, the records at their byte bound, each with an Idempotency-Key whose record
    holds the whole delivery: the delivery after the 20th, and the length of its message."""
    delivery_id = delivery["id"]
    _comments["text"] = delivery["request"]["items"][0]["message"]  # kept lines keep their comments as they are
    path = f"/customer/deliveries/{delivery_id}/amendments"
    first = api.post(path, _body(2, 0), token=CUSTOMER_TOKEN, headers={"Idempotency-Key": "amend-1"})
    assert first.status_code == 200, first.data
    base = size_in_bytes(first.data["amendments"][0]) + len(',"message":""')  # a record but its message
    message = ((limits.AMENDMENTS_BYTES - 3 * base) // (limits.AMENDMENTS - 2) - base) // 6  # leaves room for the last
    for n in range(2, limits.AMENDMENTS):
        response = api.post(
            path, _body(n + 1, message), token=CUSTOMER_TOKEN, headers={"Idempotency-Key": f"amend-{n}"}
        )
        assert response.status_code == 200, response.data
    last = largest(lambda m: _fits(delivery_id, _body(100, m)), limits.MESSAGE_LENGTH)
    assert last < limits.MESSAGE_LENGTH  # the byte bound of the records stopped it
    refused = api.post(path, _body(100, last + 1), token=CUSTOMER_TOKEN)
    assert (refused.status_code, [e["path"] for e in refused.data["errors"]]) == (400, ["items"])
    response = api.post(path, _body(100, last), token=CUSTOMER_TOKEN, headers={"Idempotency-Key": "amend-20"})
    assert response.status_code == 200, response.data
    return response.data, last


def test_twenty_amendments_at_their_byte_bound_on_the_largest_order(api):
    delivery = largest_order(api)
    delivery_id = delivery["id"]
    path = f"/customer/deliveries/{delivery_id}/amendments"
    full, last = amended_to_the_bound(api, delivery)
    assert len(full["amendments"]) == limits.AMENDMENTS
    assert limits.AMENDMENTS_BYTES - 200 < size_in_bytes(full["amendments"]) <= limits.AMENDMENTS_BYTES
    assert limits.ORDER_ITEMS_BYTES - 10_000 < size_in_bytes(full["request"]["items"]) <= limits.ORDER_ITEMS_BYTES
    assert api.get(path.removesuffix("/amendments"), token=CUSTOMER_TOKEN).data == full
    replayed = api.post(path, _body(100, last), token=CUSTOMER_TOKEN, headers={"Idempotency-Key": "amend-20"})
    assert (replayed.status_code, replayed.data) == (200, full)
    more = api.post(path, _body(101, 0), token=CUSTOMER_TOKEN)
    assert (more.status_code, [e["path"] for e in more.data["errors"]]) == (400, ["items"])
    cancelled = finish(api, "cancel", delivery_id, headers={"Idempotency-Key": "cancel-full"})
    assert cancelled.status_code == 200 and cancelled.data["status"] == "CANCELLED"
    assert cancelled.data["amendments"] == full["amendments"]
