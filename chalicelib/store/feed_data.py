"""The resources feed entries name, read as they are now (GET /changes?include=data): BatchGetItem in chunks.

Each entry's resource is read by its keys; what a GET of it answers is built from the items found, and None
when it no longer exists. The webhook settings come back as stored: the service keeps only what may travel.
"""
from ..domain.feed import SETTINGS_DELIVERIES, SETTINGS_WEBHOOKS, Resource
from ..domain.integration_status import supplier_view
from . import batch, deliveries, deposits, keys, products, settings


def _keys(account: str, entry: dict) -> list[dict]:
    """The items the entry's resource is read from; the first one decides whether it exists."""
    resource, ident = entry["resource"], entry["id"]
    if resource == Resource.PRODUCT:
        return [keys.product_key(account, ident)]
    if resource == Resource.CATEGORY:
        return [keys.category_key(account, ident)]
    if resource == Resource.CUSTOMER:
        return [keys.customer_key(account, ident)]
    if resource == Resource.CUSTOMER_PRICING:
        return [keys.customer_pricing_key(account, ident, entry["customer_id"]), keys.product_key(account, ident)]
    if resource == Resource.PRICE_GROUPS:
        return [keys.product_key(account, ident), keys.price_groups_key(account, ident)]
    if resource == Resource.SETTINGS:
        return [settings.deliveries_key(account) if ident == SETTINGS_DELIVERIES else keys.webhooks_key(account)]
    if resource == Resource.DEPOSIT:
        return [keys.deposit_types_key(account)]
    if resource == Resource.CUSTOMER_DEPOSITS:
        return deposits.balances_keys(account, ident)
    if resource == Resource.STANDING_ORDER and entry.get("date"):  # a failed date: the date as shown
        return [keys.standing_failed_key(account, entry["customer_id"], ident, entry["date"])]
    if resource == Resource.STANDING_ORDER:
        return [keys.standing_order_key(account, entry["customer_id"], ident)]
    return [keys.delivery_key(account, int(ident)), keys.delivery_items_key(account, int(ident))]


def _shown(entry: dict, items: list[dict | None]):
    resource, ident = entry["resource"], entry["id"]
    first = items[0]
    if resource == Resource.DEPOSIT:
        found = deposits.types_of(first).get(ident)
        return deposits.public(ident, found) if found is not None else None
    if resource == Resource.SETTINGS and ident == SETTINGS_DELIVERIES:
        return settings.with_defaults(first["data"] if first else None)
    if first is None:
        return None
    if resource == Resource.CATEGORY:
        return {"id": keys.category_id_of(first), "name": first["name"]}
    if resource == Resource.PRICE_GROUPS:
        return items[1]["data"] if products.belongs(items[1], first.get(products.BORN)) else {}
    if resource == Resource.CUSTOMER_PRICING:
        product = items[1]
        return first["data"] if product is not None and products.belongs(first, product.get(products.BORN)) else None
    if resource == Resource.SETTINGS and ident == SETTINGS_WEBHOOKS:
        return first.get("data")
    if resource == Resource.DELIVERY:
        stored = deliveries.from_summary(first, (items[1] or {}).get("items", []))
        return supplier_view(stored.delivery, stored.integration)  # as the supplier GET shows it
    if resource == Resource.CUSTOMER_DEPOSITS:  # as GET /customers/:id/deposits answers
        from ..domain.deposits import balances

        return balances(deposits.types_of(items[1]), deposits.held_in(items[2]))
    if resource == Resource.PRODUCT:
        return products.from_item(first).data  # either stored form (store/rendered.py)
    return first["data"]


def current(account: str, entries: list[dict]) -> list:
    """The resource of each entry as it is now (None when gone), in the entries' order."""
    wanted = [_keys(account, entry) for entry in entries]
    found = batch.get_items([key for group in wanted for key in group], consistent=True)
    return [_shown(entry, [batch.pick(found, key) for key in group]) for entry, group in zip(entries, wanted)]
