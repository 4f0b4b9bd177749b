"""Builders shared by the claims tests (decisions §18, second half)."""

from .deliveries_helpers import CUSTOMER_TOKEN, place

PHOTO = "https://photos.example/broken.jpg"


def line(item_id: str = "beer", count=1, issue: str = "DAMAGED", **fields) -> dict:
    return {"id": item_id, "issue": issue, "count": count, **fields}


def receive(api, delivery_id, body=None, **kw):
    return api.post(f"/customer/deliveries/{delivery_id}/receive", body if body is not None else {}, **kw)


def claim(api, delivery_id, *items, token=CUSTOMER_TOKEN, **fields):
    return api.post(f"/customer/deliveries/{delivery_id}/claims", {"items": list(items), **fields}, token=token)


def withdraw(api, delivery_id, number, token=CUSTOMER_TOKEN, **kw):
    return api.post(f"/customer/deliveries/{delivery_id}/claims/{number}/withdraw", token=token, **kw)


def answer(api, delivery_id, number, *items, **fields):
    headers = fields.pop("headers", None)
    return api.post(
        f"/deliveries/{delivery_id}/claims/{number}/answer", {"items": list(items), **fields}, headers=headers
    )


def accepted(item_id: str = "beer", count=1, resolution: str = "CREDIT", **fields) -> dict:
    return {"id": item_id, "accepted": count, "resolution": resolution, **fields}


def received(api, items=None, body=None) -> dict:
    """A delivery of ten beers and six waters (unless `items`), received by the customer: the answer."""
    delivery = place(api, items or [{"id": "beer", "count": 10}, {"id": "water", "count": 6}])
    response = receive(api, delivery["id"], body, token=CUSTOMER_TOKEN)
    assert response.status_code == 200, response.data
    return response.data


def claimed(api, delivery_id, *items, **fields) -> dict:
    response = claim(api, delivery_id, *items, **fields)
    assert response.status_code == 200, response.data
    return response.data
