"""A delivery's summary is stored as the JSON its list shows (store/rendered.py); summaries written before, with
the document as a `doc` map, read the same byte for byte and are stored in the new form by their next change."""

import json

from boto3.dynamodb.types import TypeSerializer

from chalicelib.store import keys, rendered, table
from tests.api.deliveries_helpers import CUSTOMER_TOKEN, place, respond, shop  # noqa: F401 (fixture)

ITEMS = [{"id": "beer", "count": 2, "bundle": {"id": "crate"}}, {"id": "cheese", "count": 1.5}]


def _summary(delivery_id: int) -> dict:
    key = table.to_item(keys.delivery_key("acme", delivery_id))
    return table.client().get_item(TableName=table.name(), Key=key, ConsistentRead=True)["Item"]


def _make_legacy(delivery_id: int) -> None:
    item = _summary(delivery_id)
    item["doc"] = TypeSerializer().serialize(rendered.parse(rendered.unpack(item.pop("body")["B"])))
    table.client().put_item(TableName=table.name(), Item=item)


def test_the_summary_item_holds_the_listed_json(shop):
    delivery = place(shop, ITEMS, message="hi")
    item = _summary(delivery["id"])
    assert "doc" not in item
    stored = rendered.unpack(item["body"]["B"])
    listed = shop.get("/deliveries").body
    listed = listed.decode() if isinstance(listed, bytes) else listed
    # Supplier lists append the integration state, kept beside `body` (never in it) to the stored text.
    assert listed == '{"deliveries":[' + stored[:-1] + ',"integration":{"status":"PENDING"}}]}'
    assert json.loads(listed)["deliveries"][0] == {
        **delivery,
        "request": {k: v for k, v in delivery["request"].items() if k != "items"},
        "integration": {"status": "PENDING"},
    }
    own = shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).body
    assert (own.decode() if isinstance(own, bytes) else own) == '{"deliveries":[' + stored + "]}"


def test_summaries_stored_before_read_byte_for_byte_the_same_and_change(shop):
    first = place(shop, ITEMS)
    second = place(shop, ITEMS, message="second")
    assert respond(shop, second["id"], {"type": "ACCEPT", "reference": "R1"}).status_code == 200
    pages = {
        path: shop.get(path).body
        for path in (
            "/deliveries",
            "/deliveries?status=ACCEPTED",
            f"/deliveries/{first['id']}",
            f"/deliveries/{second['id']}",
        )
    }
    customer_page = shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).body
    _make_legacy(first["id"])
    _make_legacy(second["id"])
    assert "body" not in _summary(first["id"])
    for path, body in pages.items():
        assert shop.get(path).body == body, path
    assert shop.get("/customer/deliveries", token=CUSTOMER_TOKEN).body == customer_page
    # The next change stores the summary as `body`.
    assert respond(shop, first["id"], {"type": "REJECT", "message": "sorry"}).status_code == 200
    item = _summary(first["id"])
    assert "doc" not in item and "body" in item
    assert shop.get(f"/deliveries/{first['id']}").data["status"] == "REJECTED"
    assert [d["id"] for d in shop.get("/deliveries?status=REJECTED").data["deliveries"]] == [first["id"]]


def test_the_integration_state_is_stored_as_its_text_and_a_map_stored_before_reads_the_same(shop):
    delivery = place(shop, ITEMS)
    state = {"status": "FAILED", "reference": "ERP-7", "message": 'bad "row" ä'}
    assert shop.put(f"/deliveries/{delivery['id']}/integration", body=state).status_code == 200
    item = _summary(delivery["id"])
    text = item["integration"]["S"]  # one string attribute: a list page appends it without parsing
    assert json.loads(text) == {**state, "updated": json.loads(text)["updated"]}
    paths = (
        "/deliveries",
        "/deliveries?status=REQUESTED",
        "/deliveries?integration=FAILED",
        f"/deliveries/{delivery['id']}",
    )
    pages = {path: shop.get(path).body for path in paths}
    assert '"integration":' + text + "}" in (
        pages["/deliveries"].decode() if isinstance(pages["/deliveries"], bytes) else pages["/deliveries"]
    )
    item["integration"] = TypeSerializer().serialize(json.loads(text))  # as states were stored before: a map
    table.client().put_item(TableName=table.name(), Item=item)
    assert "M" in _summary(delivery["id"])["integration"]
    for path, body in pages.items():
        assert shop.get(path).body == body, path
    # The next change of the state stores its text again.
    assert shop.put(f"/deliveries/{delivery['id']}/integration", body={"status": "IMPORTED"}).status_code == 200
    assert json.loads(_summary(delivery["id"])["integration"]["S"])["status"] == "IMPORTED"


def test_each_list_pages_through_every_delivery_once_with_cursors_naming_the_stored_keys(shop):
    """Pages read no key attributes where the keys are made from the id; their cursors must name the same keys
    a page reading them would (cursors issued before stay valid), and walk every delivery once."""
    from chalicelib.store import cursor as cursors

    placed = [place(shop, ITEMS)["id"] for _ in range(5)]
    lists = {
        "/deliveries": ("deliveries", None, None),
        "/deliveries?status=REQUESTED": ("deliveries?status=REQUESTED", "GSI1", None),
        "/customer/deliveries": ("customer-deliveries?customer=", "GSI2", CUSTOMER_TOKEN),
    }
    for path, (query, index, token) in lists.items():
        seen, cursor = [], None
        while True:
            url = path + ("&" if "?" in path else "?") + "limit=2" + (f"&cursor={cursor}" if cursor else "")
            response = shop.get(url, token=token) if token else shop.get(url)
            assert response.status_code == 200, (url, response.data)
            seen += [d["id"] for d in response.data["deliveries"]]
            cursor = response.data.get("cursor")
            if cursor is None:
                break
            stored = _summary(seen[-1])
            names = ["PK", "SK"] + ([f"{index}PK", f"{index}SK"] if index else [])
            account_query = query if not query.endswith("=") else query + stored["GSI2PK"]["S"].rsplit("#", 1)[-1]
            assert cursors.decode("acme", account_query, cursor) == {name: stored[name] for name in names}, path
        assert seen == sorted(placed, reverse=True), path
