"""The resources feed entries name, read as they are now (GET /changes?include=data): BatchGetItem in chunks.

Each feed resource is declared once in READERS: the items its entry is read from (the first one decides whether
it exists) and what a GET of it answers built from them (None when it no longer exists). A resource of
domain/feed.py without a reader fails tests/store/test_feed_data.py, never a read. The webhook settings come
back as stored: the service keeps only what may travel.
"""

from dataclasses import dataclass
from typing import Callable

from ..domain.feed import SETTINGS_DELIVERIES, Resource
from ..domain.integration_status import supplier_view
from ..domain.values import with_substitution_policy
from . import batch, deliveries, deposits, keys, products, settings


@dataclass(frozen=True)
class Reader:
    keys: Callable[[str, dict], list[dict]]  # (account, entry) -> the keys of the items to read
    shown: Callable[[dict, list[dict | None]], object]  # (entry, the items found or None) -> the GET's answer


def _data(entry, items):
    return items[0]["data"] if items[0] is not None else None


def _category(entry, items):
    return {"id": keys.category_id_of(items[0]), "name": items[0]["name"]} if items[0] is not None else None


def _product(entry, items):
    return products.from_item(items[0]).data if items[0] is not None else None  # either stored form


def _customer_pricing(entry, items):
    pricing, product = items
    if pricing is None or product is None or not products.belongs(pricing, product.get(products.BORN)):
        return None
    return pricing["data"]


def _price_groups(entry, items):
    product, groups = items
    if product is None:
        return None
    return groups["data"] if products.belongs(groups, product.get(products.BORN)) else {}


def _settings_keys(account, entry):
    return [settings.deliveries_key(account) if entry["id"] == SETTINGS_DELIVERIES else keys.webhooks_key(account)]


def _settings(entry, items):
    if entry["id"] == SETTINGS_DELIVERIES:
        return settings.with_defaults(items[0]["data"] if items[0] else None)
    return items[0].get("data") if items[0] is not None else None


def _delivery_keys(account, entry):
    return [keys.delivery_key(account, int(entry["id"])), keys.delivery_items_key(account, int(entry["id"]))]


def _delivery(entry, items):
    if items[0] is None:
        return None
    stored = deliveries.from_summary(items[0], items[1] or {})
    return supplier_view(stored.delivery, stored.integration)  # as the supplier GET shows it


def _deposit(entry, items):
    found = deposits.types_of(items[0]).get(entry["id"])
    return deposits.public(entry["id"], found) if found is not None else None


def _customer_deposits(entry, items):
    if items[0] is None:
        return None
    from ..domain.deposits import balances  # as GET /customers/:id/deposits answers

    return balances(deposits.types_of(items[1]), deposits.held_in(items[2]))


def _standing_order_keys(account, entry):
    """The standing order's item, which all its changes are marked on; for standing-order.failed, beside it the date
    as its occurrence showed it (decisions §17), which the entry's data is."""
    standing = keys.standing_order_key(account, entry["customer_id"], entry["id"])
    if entry.get("date"):
        return [standing, keys.standing_failed_key(account, entry["customer_id"], entry["id"], entry["date"])]
    return [standing]


def _standing_order(entry, items):
    return _data(entry, items[1:] if entry.get("date") else items)


READERS: dict[Resource, Reader] = {
    Resource.PRODUCT: Reader(lambda a, e: [keys.product_key(a, e["id"])], _product),
    Resource.CATEGORY: Reader(lambda a, e: [keys.category_key(a, e["id"])], _category),
    Resource.CUSTOMER: Reader(
        lambda a, e: [keys.customer_key(a, e["id"])], lambda e, items: with_substitution_policy(_data(e, items))
    ),
    Resource.CUSTOMER_PRICING: Reader(
        lambda a, e: [keys.customer_pricing_key(a, e["id"], e["customer_id"]), keys.product_key(a, e["id"])],
        _customer_pricing,
    ),
    Resource.PRICE_GROUPS: Reader(
        lambda a, e: [keys.product_key(a, e["id"]), keys.price_groups_key(a, e["id"])], _price_groups
    ),
    Resource.SETTINGS: Reader(_settings_keys, _settings),
    Resource.DELIVERY: Reader(_delivery_keys, _delivery),
    Resource.DEPOSIT: Reader(lambda a, e: [keys.deposit_types_key(a)], _deposit),
    Resource.CUSTOMER_DEPOSITS: Reader(lambda a, e: deposits.balances_keys(a, e["id"]), _customer_deposits),
    Resource.STANDING_ORDER: Reader(_standing_order_keys, _standing_order),
}


def current(account: str, entries: list[dict]) -> list:
    """The resource of each entry as it is now (None when gone), in the entries' order."""
    readers = [READERS[Resource(entry["resource"])] for entry in entries]
    wanted = [reader.keys(account, entry) for reader, entry in zip(readers, entries)]
    found = batch.get_items([key for group in wanted for key in group], consistent=True)
    return [
        reader.shown(entry, [batch.pick(found, key) for key in group])
        for reader, entry, group in zip(readers, entries, wanted)
    ]
