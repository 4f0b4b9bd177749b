"""Everything an order is checked against, read with one BatchGetItem (all keys are known up front).

Provisional minimal version; the interface is shared with the customers branch:
load(account, customer_id, product_ids) -> OrderContext.
"""
from dataclasses import dataclass

from .. import config
from . import batch, keys


@dataclass(frozen=True)
class OrderContext:
    settings: dict  # account delivery settings with defaults filled in
    customer: dict | None
    products: dict  # product id -> product document plus "used"
    customer_pricing: dict  # product id -> {price?, pricing?}
    price_groups: dict  # product id -> {group: {price?, pricing?}}


def default_settings() -> dict:
    return {"timezone": config.default_timezone(), "allow_delivery_comments": False, "allow_product_comments": False}


def load(account: str, customer_id: str, product_ids) -> OrderContext:
    product_ids = list(dict.fromkeys(product_ids))
    settings_key = keys.settings_key(account, "DELIVERIES")
    customer_key = keys.customer_key(account, customer_id)
    per_product = {
        pid: (
            keys.product_key(account, pid),
            keys.customer_pricing_key(account, pid, customer_id),
            keys.price_groups_key(account, pid),
        )
        for pid in product_ids
    }
    wanted = [settings_key, customer_key] + [k for triple in per_product.values() for k in triple]
    found = batch.get_items(wanted)

    def data(key):
        item = found.get(batch.key_of(key))
        return item.get("data") if item else None

    products, customer_pricing, price_groups = {}, {}, {}
    for pid, (product_key, pricing_key, groups_key) in per_product.items():
        item = found.get(batch.key_of(product_key))
        if item is not None:
            products[pid] = {**item["data"], "used": bool(item.get("used"))}
        if data(pricing_key) is not None:
            customer_pricing[pid] = data(pricing_key)
        if data(groups_key) is not None:
            price_groups[pid] = data(groups_key)
    return OrderContext(
        settings={**default_settings(), **(data(settings_key) or {})},
        customer=data(customer_key),
        products=products,
        customer_pricing=customer_pricing,
        price_groups=price_groups,
    )
