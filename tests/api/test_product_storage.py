"""Products are stored as the JSON their GET answers (store/rendered.py); items written before, with the document
as a `data` map, read the same, byte for byte, and are stored in the new form by their next write."""

import json

from boto3.dynamodb.types import TypeSerializer

from chalicelib.jobs import images as image_job
from chalicelib.store import keys, rendered, table
from tests.api.test_products import FULL

NUMBERS = {
    "vessel": {"size": 1.5, "unit": "l", "type": "BO"},
    "price": 2,
    "min_order_count": 3,
    "custom_properties": {"big": 123456789012.123456, "whole": 2, "half": 0.5},
}


def _raw_item(product_id: str) -> dict:
    key = table.to_item(keys.product_key("acme", product_id))
    return table.client().get_item(TableName=table.name(), Key=key, ConsistentRead=True)["Item"]


def _make_legacy(product_id: str) -> None:
    """Rewrite the item as it was stored before `body`: the document as the map `data`, no `order_by` beside it."""
    item = _raw_item(product_id)
    document = rendered.parse(rendered.unpack(item.pop("body")["B"]))
    item.pop("order_by", None)
    item["data"] = TypeSerializer().serialize(document)
    table.client().put_item(TableName=table.name(), Item=item)


def test_the_item_holds_the_get_answer_itself_and_no_data_map(catalogue):
    assert catalogue.put("/products/full", FULL).status_code == 200
    answer = catalogue.get("/products/full").body
    item = _raw_item("full")
    assert "data" not in item
    assert rendered.unpack(item["body"]["B"]) == answer.decode() if isinstance(answer, bytes) else answer
    assert item["order_by"] == {"S": "vessel"}


def test_numbers_read_exactly_as_written(catalogue):
    body = {"id": "n", "status": "ACTIVE", "category": "drinks", "name": "Numbers", **NUMBERS}
    raw = json.dumps(body).replace("123456789012.12346", "123456789012.123456")
    assert catalogue.put("/products/n", raw=raw).status_code == 200
    text = catalogue.get("/products/n").body
    text = text.decode() if isinstance(text, bytes) else text
    assert '"size":1.5' in text and '"price":2,' in text and '"min_order_count":3' in text
    assert '"big":123456789012.123456,"half":0.5,"whole":2}' in text
    listed = catalogue.get("/products").body
    listed = listed.decode() if isinstance(listed, bytes) else listed
    assert listed == '{"products":[' + text + "]}"


def test_a_product_stored_before_reads_byte_for_byte_the_same(catalogue):
    assert catalogue.put("/products/full", FULL).status_code == 200
    assert (
        catalogue.put(
            "/products/plain", {"id": "plain", "status": "ACTIVE", "category": "drinks", "name": "Plain one"}
        ).status_code
        == 200
    )
    one, page = catalogue.get("/products/full"), catalogue.get("/products?limit=1")
    etag = one.headers["ETag"]
    _make_legacy("full")
    assert "data" in _raw_item("full") and "body" not in _raw_item("full")
    again = catalogue.get("/products/full")
    assert again.body == one.body and again.headers["ETag"] == etag
    assert catalogue.get("/products?limit=1").body == page.body
    both = catalogue.get("/products").data["products"]
    assert [p["id"] for p in both] == ["full", "plain"] and both[0] == one.data


def test_a_product_stored_before_is_patched_priced_and_stored_anew(catalogue):
    assert catalogue.put("/products/full", FULL).status_code == 200
    _make_legacy("full")
    # Pricing writes check the product's order_by: inside `data` on an old item.
    assert catalogue.put("/products/full/price-groups", {"gold": {"price": 240}}).status_code == 200
    patched = catalogue.patch("/products/full", {"price": 260})
    assert patched.status_code == 200 and patched.data["price"] == 260
    item = _raw_item("full")
    assert "data" not in item and item["order_by"] == {"S": "vessel"}
    assert catalogue.get("/products/full").data == {**FULL, "price": 260}
    # Now beside `body`.
    assert catalogue.put("/products/full/price-groups", {"gold": {"price": 230}}).status_code == 200


def test_a_pricing_write_sees_an_order_by_change_in_either_form(catalogue):
    by_kg = {"id": "kg", "status": "ACTIVE", "category": "drinks", "name": "By the kilo", "order_by": "kg"}
    assert catalogue.put("/products/kg", by_kg).status_code == 200
    assert catalogue.put("/products/kg/price-groups", {"gold": {"price": 240}}).status_code == 200
    _make_legacy("kg")
    assert catalogue.put("/products/kg/price-groups", {"gold": {"price": 230}}).status_code == 200
    default = {"id": "d", "status": "ACTIVE", "category": "drinks", "name": "Default one"}
    assert catalogue.put("/products/d", default).status_code == 200
    _make_legacy("d")
    assert catalogue.put("/products/d/price-groups", {"gold": {"price": 230}}).status_code == 200


def test_the_image_job_fills_a_product_stored_before(catalogue, monkeypatch):
    product = {
        "id": "img",
        "status": "ACTIVE",
        "category": "drinks",
        "name": "With image",
        "image": {"url": "https://example.com/a.png"},
    }
    assert catalogue.put("/products/img", product).status_code == 200
    _make_legacy("img")
    meta = {
        "url": "https://example.com/a.png",
        "etag": "e1",
        "last_modified": "2024-01-01",
        "content_type": "image/png",
    }
    monkeypatch.setattr("chalicelib.service.images.fetch", lambda url, now: meta)
    summary = image_job.run(limit=10)
    assert summary["downloaded"] == 1, summary
    item = _raw_item("img")
    assert "data" not in item
    assert catalogue.get("/products/img").data["image"] == {
        "url": "https://example.com/a.png",
        "etag": "e1",
        "last_modified": "2024-01-01",
    }
