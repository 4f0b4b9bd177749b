"""Replays what a barmate Connect catalogue-sync client sends (issue 12): it must work unchanged.

The client reads the categories, POSTs the missing ones and PUTs {"id", "name"} for renamed ones; pages
GET /products without a limit; creates missing products by POST (with vessel.id and bundles[].id) and updates
existing ones by PATCH with the whole product less id. A second run must find every product equal to what it sent.
"""

CATALOGUE = {
    "categories": [{"id": "soft-drinks", "name": "Soft drinks"}, {"id": "beer", "name": "Beer"}],
    "products": [
        {
            "id": f"cola-{n}",
            "status": "ACTIVE",
            "category": "soft-drinks" if n % 2 else "beer",
            "name": f"Cola {n} 1.5 l",
            "vessel": {"id": f"v-{n}", "size": 1.5, "unit": "l", "type": "BO"},
            "bundles": [{"id": f"crate-{n}", "type": "CT", "size": 6}],
            "price": 189 + n,
            "price_per": "l",
        }
        for n in range(1, 61)  # more than one default page (50)
    ],
}


class SyncClient:
    """The calls a catalogue-sync tool makes, in its order; it never sends limit."""

    def __init__(self, api):
        self.api = api
        self.calls = []

    def call(self, method, path, body=None):
        response = self.api.request(method, path, body)
        self.calls.append((method, path, response.status_code))
        assert response.status_code == 200, (method, path, response.data)
        return response.data

    def all_products(self):
        products, path = [], "/products"
        while True:
            page = self.call("GET", path)
            products += page["products"]
            if "cursor" not in page:
                return {p["id"]: p for p in products}
            path = f"/products?cursor={page['cursor']}"

    def sync(self, catalogue):
        existing = {c["id"]: c["name"] for c in self.call("GET", "/categories")["categories"]}
        for category in catalogue["categories"]:
            if category["id"] not in existing:
                self.call("POST", "/categories", category)
            elif existing[category["id"]] != category["name"]:
                self.call("PUT", f"/categories/{category['id']}", category)
        stored = self.all_products()
        for product in catalogue["products"]:
            if product["id"] not in stored:
                self.call("POST", "/products", product)
            elif stored[product["id"]] != product:
                self.call("PATCH", f"/products/{product['id']}", {k: v for k, v in product.items() if k != "id"})
        return self.all_products()


def test_a_catalogue_sync_client_works_unchanged(api):
    client = SyncClient(api)
    api.put("/categories/beer", {"name": "Bier"})  # created by hand earlier, under an old name
    api.post("/products", {**CATALOGUE["products"][1], "name": "Old name", "price": 1})

    stored = client.sync(CATALOGUE)

    assert stored == {p["id"]: p for p in CATALOGUE["products"]}
    assert ("POST", "/categories", 200) in client.calls
    assert ("PUT", "/categories/beer", 200) in client.calls
    assert ("PATCH", "/products/cola-2", 200) in client.calls
    assert sum(1 for method, path, _ in client.calls if method == "POST" and path == "/products") == 59
    assert api.get("/categories").data == {
        "categories": [{"id": "beer", "name": "Beer"}, {"id": "soft-drinks", "name": "Soft drinks"}]
    }

    # The second run finds everything equal: it only reads.
    client.calls.clear()
    assert client.sync(CATALOGUE) == {p["id"]: p for p in CATALOGUE["products"]}
    assert {method for method, _, _ in client.calls} == {"GET"}


def test_a_catalogue_sync_client_works_with_more_categories_than_one_page_of_50(api):
    """The client reads GET /categories as one answer (decisions §4): with 60 categories its second run must find
    them all, not POST the 51st again and stop at the 400 conflict."""
    many = {
        "categories": [{"id": f"cat-{n:02d}", "name": f"Category {n}"} for n in range(60)],
        "products": [{**p, "category": f"cat-{n:02d}"} for n, p in enumerate(CATALOGUE["products"])],
    }
    client = SyncClient(api)
    assert client.sync(many) == {p["id"]: p for p in many["products"]}
    assert sum(1 for method, path, _ in client.calls if (method, path) == ("POST", "/categories")) == 60

    client.calls.clear()
    assert client.sync(many) == {p["id"]: p for p in many["products"]}
    assert {method for method, _, _ in client.calls} == {"GET"}
    assert len(api.get("/categories").data["categories"]) == 60
