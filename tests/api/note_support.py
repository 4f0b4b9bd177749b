"""Builders shared by the delivery note tests (decisions §18)."""

from .deliveries_helpers import put_product

LAGER = {
    "status": "ACTIVE",
    "category": "drinks",
    "name": "Lager 0.5",
    "vessel": {"size": 0.5, "unit": "l", "type": "BO", "deposit": "bottle"},
    "bundles": [{"id": "crate", "type": "CR", "size": 20, "deposit": "crate"}],
    "price": 95,
}
HELLES = {**LAGER, "name": "Helles 0.5", "price": 110}
CRATE = {"type": "CR", "size": 20}
SHOWN_CRATE = {"id": "crate", "type": "CR", "size": 20}
BOTTLE = {"id": "bottle", "name": "Bottle", "price": 8}
CRATE_DEPOSIT = {"id": "crate", "name": "Crate", "price": 150}


def bottled(shop):
    """The shop with deposit types (bottle, crate, keg) and two crated beers that carry them, lager and helles."""
    for entry in (BOTTLE, CRATE_DEPOSIT, {"id": "keg", "name": "Keg", "price": 3000}):
        assert shop.put(f"/deposits/{entry['id']}", {"name": entry["name"], "price": entry["price"]}).status_code == 200
    put_product(shop, "lager", LAGER)
    put_product(shop, "helles", HELLES)
    return shop


def note(api, delivery_id, body=None, **kw):
    return api.post(f"/deliveries/{delivery_id}/delivery-note", {"number": "LS-1", **(body or {})}, **kw)
