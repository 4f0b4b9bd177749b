"""One row per feed resource (decisions §13; docs/feed.md): where its changes are marked, how its deletion is
recognised, and how `include=data` reads and shows it.

- `item`: the one item every change of the resource is marked on (store/feed_marks.py). The stream keeps one item's
  records in order, so a resource's changes are numbered in the order they committed.
- `deleted`: how the REMOVE record of a feed item names its resource's deletion, from the item's key (None: the
  resource is never deleted by removing its item). The deletion is the REMOVE of the very item the resource's other
  changes are marked on, so it can never be numbered out of order with them (a tombstone beside it could: the stream
  keeps order per item only). A removed item that carries the table's TTL attribute was retired, not deleted: the
  rule that makes an expiry, or a retirement that a purge does, no change (store/feed_marks.record_of).
- `reads` and `shown`: the items its entry's data is read from (the first one decides whether it exists) and what a
  GET of it answers built from them (None when it no longer exists). The webhook settings come back as stored: the
  service keeps only what may travel.

A resource of domain/feed.py without a row fails tests/store/test_feed_resources.py, never a write or a read.
"""

from dataclasses import dataclass
from typing import Callable

from ..domain.claim_status import claim_of
from ..domain.feed import SETTINGS_DELIVERIES, Change, ChangeType, Resource
from . import claim_keys, keys

# The repositories that show a resource are imported where it is read (include=data), not by every write that marks
# one: this module is on the write path (store/feed_marks.py), they import the unit of work.

Key = dict  # {"PK": ..., "SK": ...}


@dataclass(frozen=True)
class FeedResource:
    item: Callable[[str, Change], Key]  # (account, change) -> the item its changes are marked on
    reads: Callable[[str, dict], list[Key]]  # (account, entry) -> the keys of the items its data is read from
    shown: Callable[[dict, list[dict | None]], object]  # (entry, the items found or None) -> the GET's answer
    deleted: Callable[[str, str], Change | None] | None = None  # (PK, SK) of a removed item -> its deletion


def _data(entry, items):
    return items[0]["data"] if items[0] is not None else None


def _product(entry, items):
    from . import products

    return products.from_item(items[0]).data if items[0] is not None else None  # either stored form


def _product_deleted(pk: str, sk: str) -> Change | None:
    return Change(ChangeType.PRODUCT_DELETED, sk.removeprefix(keys.PRODUCT_PREFIX)) if _in_account(pk) else None


def _category(entry, items):
    return {"id": keys.category_id_of(items[0]), "name": items[0]["name"]} if items[0] is not None else None


def _category_deleted(pk: str, sk: str) -> Change | None:
    return Change(ChangeType.CATEGORY_DELETED, sk.removeprefix(keys.CATEGORY_PREFIX)) if _in_account(pk) else None


def _customer_pricing(entry, items):
    from . import products

    pricing, product = items
    if pricing is None or product is None or not products.belongs(pricing, product.get(products.BORN)):
        return None
    return pricing["data"]


def _customer_pricing_deleted(pk: str, sk: str) -> Change | None:
    product_id = keys.product_of_pricing_pk(pk)
    customer_id = sk.removeprefix(keys.CUSTOMER_PREFIX)
    return Change(ChangeType.CUSTOMER_PRICING_DELETED, product_id, customer_id=customer_id) if product_id else None


def _price_groups(entry, items):
    from . import products

    product, groups = items
    if product is None:
        return None
    return groups["data"] if products.belongs(groups, product.get(products.BORN)) else {}


def _settings_key(account: str, settings_id: str) -> Key:
    # (store/settings.py names the delivery settings' item DELIVERIES)
    return (
        keys.settings_key(account, "DELIVERIES") if settings_id == SETTINGS_DELIVERIES else keys.webhooks_key(account)
    )


def _settings(entry, items):
    from . import settings

    if entry["id"] == SETTINGS_DELIVERIES:
        return settings.with_defaults(items[0]["data"] if items[0] else None)
    return items[0].get("data") if items[0] is not None else None


def _delivery_reads(account, entry):
    delivery_id = int(entry["id"].split(":")[0])  # a claim's id is "<delivery id>:<number>" (decisions §18)
    return [
        keys.delivery_key(account, delivery_id),
        keys.delivery_items_key(account, delivery_id),
        claim_keys.delivery_claims_key(account, delivery_id),
    ]


def _delivery(entry, items):
    from ..domain.integration_status import supplier_view
    from . import deliveries

    if items[0] is None:
        return None
    stored = deliveries.from_summary(items[0], items[1] or {}, items[2])
    return supplier_view(stored.delivery, stored.integration)  # as the supplier GET shows it


def _claim_item(account, change):
    return claim_keys.claim_key(account, *claim_of(change.id))


def _customer(entry, items):
    from ..domain.values import with_substitution_policy

    return with_substitution_policy(_data(entry, items))


def _deposit(entry, items):
    from . import deposits

    found = deposits.types_of(items[0]).get(entry["id"])
    return deposits.public(entry["id"], found) if found is not None else None


def _customer_deposits(entry, items):
    from ..domain.deposits import balances  # as GET /customers/:id/deposits answers
    from . import deposits

    if items[0] is None:
        return None

    return balances(deposits.types_of(items[1]), deposits.held_in(items[2]))


def _balances_keys(account: str, customer_id: str) -> list[Key]:
    from . import deposits

    return deposits.balances_keys(account, customer_id)


def _standing_order_reads(account, entry):
    """The standing order's item, which all its changes are marked on; for standing-order.failed, beside it the date
    as its occurrence showed it (decisions §17), which the entry's data is."""
    standing = keys.standing_order_key(account, entry["customer_id"], entry["id"])
    if entry.get("date"):
        return [standing, keys.standing_failed_key(account, entry["customer_id"], entry["id"], entry["date"])]
    return [standing]


def _standing_order(entry, items):
    return _data(entry, items[1:] if entry.get("date") else items)


def _standing_order_item(account: str, change: Change) -> Key:
    """standing-order.failed too: on the standing order's own item, so in order with its other changes."""
    return keys.standing_order_key(account, change.customer_id, change.id)


def _standing_order_deleted(pk: str, sk: str) -> Change | None:
    found = keys.standing_order_of(sk) if _in_account(pk) else None
    return Change(ChangeType.STANDING_ORDER_DELETED, found[1], customer_id=found[0]) if found else None


def _in_account(pk: str) -> bool:
    """The account's own partition (A#<account>), where products, categories and standing orders live."""
    return pk.startswith(keys.ACCOUNT_PREFIX) and "#" not in pk.removeprefix(keys.ACCOUNT_PREFIX)


FEED_RESOURCES: dict[Resource, FeedResource] = {
    Resource.PRODUCT: FeedResource(
        item=lambda a, c: keys.product_key(a, c.id),
        reads=lambda a, e: [keys.product_key(a, e["id"])],
        shown=_product,
        deleted=_product_deleted,
    ),
    Resource.CATEGORY: FeedResource(
        item=lambda a, c: keys.category_key(a, c.id),
        reads=lambda a, e: [keys.category_key(a, e["id"])],
        shown=_category,
        deleted=_category_deleted,
    ),
    Resource.CUSTOMER: FeedResource(
        item=lambda a, c: keys.customer_key(a, c.id),
        reads=lambda a, e: [keys.customer_key(a, e["id"])],
        shown=_customer,
    ),
    Resource.CUSTOMER_PRICING: FeedResource(
        item=lambda a, c: keys.customer_pricing_key(a, c.id, c.customer_id),
        reads=lambda a, e: [keys.customer_pricing_key(a, e["id"], e["customer_id"]), keys.product_key(a, e["id"])],
        shown=_customer_pricing,
        deleted=_customer_pricing_deleted,
    ),
    Resource.PRICE_GROUPS: FeedResource(  # read beside the product, which decides whether they exist
        item=lambda a, c: keys.price_groups_key(a, c.id),
        reads=lambda a, e: [keys.product_key(a, e["id"]), keys.price_groups_key(a, e["id"])],
        shown=_price_groups,
    ),
    Resource.SETTINGS: FeedResource(
        item=lambda a, c: _settings_key(a, c.id), reads=lambda a, e: [_settings_key(a, e["id"])], shown=_settings
    ),
    Resource.DELIVERY: FeedResource(
        item=lambda a, c: keys.delivery_key(a, int(c.id)), reads=_delivery_reads, shown=_delivery
    ),
    Resource.DEPOSIT: FeedResource(  # every deposit type in one item: a deletion is an update of it
        item=lambda a, c: keys.deposit_types_key(a), reads=lambda a, e: [keys.deposit_types_key(a)], shown=_deposit
    ),
    Resource.CUSTOMER_DEPOSITS: FeedResource(  # read beside the customer, which decides whether they exist
        item=lambda a, c: keys.deposit_balance_key(a, c.id),
        reads=lambda a, e: _balances_keys(a, e["id"]),
        shown=_customer_deposits,
    ),
    Resource.STANDING_ORDER: FeedResource(
        item=_standing_order_item, reads=_standing_order_reads, shown=_standing_order, deleted=_standing_order_deleted
    ),
    # A claim's changes are marked on its own worklist entry; its data is its delivery as the supplier's GET shows it.
    Resource.CLAIM: FeedResource(
        item=_claim_item,
        reads=lambda a, e: [*_delivery_reads(a, e), _claim_item(a, Change(ChangeType.CLAIM_OPENED, e["id"]))],
        shown=_delivery,
    ),
}


def item_of(account: str, change: Change) -> Key:
    """The item the change is marked on."""
    return FEED_RESOURCES[change.resource].item(account, change)


def deletion_of(key: Key) -> tuple[str, Change] | None:
    """(account, change) of the deletion that removing this item is, by its key; None for any other item."""
    pk, sk = key["PK"], key["SK"]
    if not pk.startswith(keys.ACCOUNT_PREFIX):
        return None
    for declared in FEED_RESOURCES.values():
        change = declared.deleted(pk, sk) if declared.deleted is not None else None
        if change is not None and item_of(keys.account_of_pk(pk).split("#", 1)[0], change) == key:
            return keys.account_of_pk(pk).split("#", 1)[0], change
    return None
