"""Everything an order (or a customer's view of the catalogue) needs to know, read with one BatchGetItem.

All keys are known up front: the account's delivery settings, the customer, the products, the customer's
pricing of each product and each product's price-group map. Chunked by 100 keys, so more than 49 products
take more than one request.
"""

from dataclasses import dataclass, field
from typing import Mapping

from . import batch, deposits, keys, products, rendered, settings


@dataclass(frozen=True)
class OrderContext:
    settings: dict  # account delivery settings, defaults filled in (timezone, comment flags)
    customer: dict | None  # the customer document, None when there is no such customer
    products: dict[str, dict] = field(default_factory=dict)  # id -> product document (StoredProduct.data)
    customer_pricing: dict[str, dict] = field(default_factory=dict)  # product id -> {price?, pricing?}
    price_groups: dict[str, dict] = field(default_factory=dict)  # product id -> {group: {price?, pricing?}}
    deposit_types: dict[str, dict] = field(default_factory=dict)  # deposit id -> {name, price}
    revisions: dict[str, str] = field(default_factory=dict)  # product id -> its revision as read
    used: frozenset = frozenset()  # the products read that a delivery holds already (their `used` flag)


def load(
    account: str,
    customer_id: str | None,
    product_ids,
    *,
    read_products: bool = True,
    read_pricing: bool = True,
    born: Mapping[str, str | None] | None = None,
    read_deposits: bool = False,
    consistent: bool = False,
) -> OrderContext:
    """Products, pricing and price groups that do not exist are absent from their maps; so is pricing of an
    earlier product of the same id (store/products.py `belongs`).

    read_products=False when the caller already holds the products (a catalogue page), then `born` gives each
    product's (StoredProduct.born); read_pricing=False when prices do not matter (delivery dates);
    read_deposits: the account's deposit types too (one item, decisions §15: an order reads them in the same
    request). consistent: read everything consistently (an order whose first read was stale reads again).
    """
    product_ids = list(dict.fromkeys(product_ids))
    settings_key = settings.deliveries_key(account)
    customer_key = keys.customer_key(account, customer_id) if customer_id is not None else None
    wanted = [settings_key] + ([customer_key] if customer_key else [])
    wanted += [keys.deposit_types_key(account)] if read_deposits else []
    for product_id in product_ids:
        if read_products:
            wanted.append(keys.product_key(account, product_id))
        if read_pricing:
            if customer_id is not None:
                wanted.append(keys.customer_pricing_key(account, product_id, customer_id))
            wanted.append(keys.price_groups_key(account, product_id))
    found = batch.get_items(wanted, consistent=consistent)

    def data(key: dict | None) -> dict | None:
        item = batch.pick(found, key) if key is not None else None
        return rendered.document(item) if item is not None else None

    def by_product(key_of) -> dict[str, dict]:
        return {pid: value for pid in product_ids if (value := data(key_of(pid))) is not None}

    def born_of(product_id: str) -> str | None:
        if not read_products:
            return (born or {}).get(product_id)
        item = batch.pick(found, keys.product_key(account, product_id))
        return item.get(products.BORN) if item is not None else None

    def pricing_by_product(key_of) -> dict[str, dict]:
        return {
            pid: rendered.document(item)
            for pid in product_ids
            if products.belongs(item := batch.pick(found, key_of(pid)), born_of(pid))
        }

    return OrderContext(
        settings=settings.with_defaults(data(settings_key)),
        customer=data(customer_key),
        products=by_product(lambda pid: keys.product_key(account, pid)) if read_products else {},
        customer_pricing=(
            pricing_by_product(lambda pid: keys.customer_pricing_key(account, pid, customer_id))
            if read_pricing and customer_id is not None
            else {}
        ),
        price_groups=pricing_by_product(lambda pid: keys.price_groups_key(account, pid)) if read_pricing else {},
        deposit_types=deposits.types_in(found, account) if read_deposits else {},
        revisions={
            pid: item["rev"]
            for pid in (product_ids if read_products else ())
            if (item := batch.pick(found, keys.product_key(account, pid))) is not None
        },
        used=frozenset(
            pid
            for pid in (product_ids if read_products else ())
            if (item := batch.pick(found, keys.product_key(account, pid))) is not None and item.get("used")
        ),
    )
