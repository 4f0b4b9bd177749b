"""The single-table key scheme, in one place. Every key of an account starts with A#<account>."""

import hashlib

GSI1 = "GSI1"  # deliveries by status, products by category, pending outbox events
GSI2 = "GSI2"  # deliveries by customer, products customers can order
GSI3 = "GSI3"  # products whose image waits for download, imports to run, deliveries by integration state

ID_WIDTH = 12  # zero padding so numeric ids sort as strings


ACCOUNT_PREFIX = "A#"
PRODUCT_PREFIX = "PRODUCT#"
CATEGORY_PREFIX = "CATEGORY#"
CUSTOMER_PREFIX = "CUSTOMER#"
WEBHOOKS_SETTINGS = "WEBHOOKS"  # the settings name of an account's webhook settings


def account_pk(account: str) -> str:
    return f"{ACCOUNT_PREFIX}{account}"


def account_key(account: str) -> dict:
    return {"PK": account_pk(account), "SK": "ACCOUNT"}


def settings_key(account: str, name: str) -> dict:
    return {"PK": account_pk(account), "SK": f"SETTINGS#{name}"}


def webhooks_key(account: str) -> dict:
    return settings_key(account, WEBHOOKS_SETTINGS)


def product_key(account: str, product_id: str) -> dict:
    return {"PK": account_pk(account), "SK": f"{PRODUCT_PREFIX}{product_id}"}


def product_of_key(item: dict) -> tuple[str, str]:
    """The (account, product id) a product item's keys name."""
    return item["PK"].removeprefix(ACCOUNT_PREFIX), item["SK"].removeprefix(PRODUCT_PREFIX)


def products_in_category_pk(account: str, category: str) -> str:
    return f"{account_pk(account)}#PCAT#{category}"


def product_category_gsi(account: str, category: str, product_id: str) -> dict:
    return {"GSI1PK": products_in_category_pk(account, category), "GSI1SK": product_id}


def orderable_products_pk(account: str) -> str:
    """Sparse index of the products customers see (ACTIVE, OUT_OF_STOCK), so their catalogue pages stay full."""
    return f"{account_pk(account)}#PORDERABLE"


def orderable_product_gsi(account: str, product_id: str) -> dict:
    return {"GSI2PK": orderable_products_pk(account), "GSI2SK": product_id}


def category_key(account: str, category_id: str) -> dict:
    return {"PK": account_pk(account), "SK": f"{CATEGORY_PREFIX}{category_id}"}


def category_id_of(item: dict) -> str:
    return item["SK"].removeprefix(CATEGORY_PREFIX)


def category_count_key(account: str) -> dict:
    """How many categories the account holds (decisions §4 bounds them); its sort key does not begin CATEGORY#."""
    return {"PK": account_pk(account), "SK": "CATEGORIES"}


def customer_key(account: str, customer_id: str) -> dict:
    return {"PK": account_pk(account), "SK": f"{CUSTOMER_PREFIX}{customer_id}"}


def product_pricing_pk(account: str, product_id: str) -> str:
    return f"{account_pk(account)}#P#{product_id}"


def product_of_pricing_pk(pk: str) -> str | None:
    """The product id of a product's pricing partition (A#<account>#P#<product>), else None."""
    account_part = pk.removeprefix(ACCOUNT_PREFIX) if pk.startswith(ACCOUNT_PREFIX) else ""
    return account_part.split("#P#", 1)[1] if "#P#" in account_part else None


def customer_pricing_key(account: str, product_id: str, customer_id: str) -> dict:
    return {"PK": product_pricing_pk(account, product_id), "SK": f"{CUSTOMER_PREFIX}{customer_id}"}


def price_groups_key(account: str, product_id: str) -> dict:
    return {"PK": product_pricing_pk(account, product_id), "SK": "GROUPS"}


def counter_key(account: str, name: str) -> dict:
    return {"PK": account_pk(account), "SK": f"COUNTER#{name}"}


def padded_id(number: int) -> str:
    return str(number).zfill(ID_WIDTH)


def deliveries_pk(account: str) -> str:
    return f"{account_pk(account)}#D"


def delivery_key(account: str, delivery_id: int) -> dict:
    return {"PK": deliveries_pk(account), "SK": padded_id(delivery_id)}


def delivery_items_key(account: str, delivery_id: int) -> dict:
    return {"PK": f"{account_pk(account)}#DITEMS", "SK": padded_id(delivery_id)}


def deliveries_by_status_pk(account: str, status: str) -> str:
    return f"{account_pk(account)}#DSTATUS#{status}"


def delivery_status_gsi(account: str, status: str, delivery_id: int) -> dict:
    return {"GSI1PK": deliveries_by_status_pk(account, status), "GSI1SK": padded_id(delivery_id)}


def deliveries_by_customer_pk(account: str, customer_id: str) -> str:
    return f"{account_pk(account)}#DCUST#{customer_id}"


def delivery_customer_gsi(account: str, customer_id: str, delivery_id: int) -> dict:
    return {"GSI2PK": deliveries_by_customer_pk(account, customer_id), "GSI2SK": padded_id(delivery_id)}


def deliveries_by_integration_pk(account: str, status: str) -> str:
    return f"{account_pk(account)}#DINTEG#{status}"


def delivery_integration_gsi(account: str, status: str, since_iso: str, delivery_id: int) -> dict:
    """The worklist of one integration state: in the order deliveries entered it (decisions §14)."""
    return {"GSI3PK": deliveries_by_integration_pk(account, status), "GSI3SK": f"{since_iso}#{padded_id(delivery_id)}"}


INTEGRATION_COUNT_SHARDS = 16  # a delivery's counts live in shard id % 16, so writes of most deliveries share none


def integration_counts_key(account: str, shard: int = 0) -> dict:
    """One shard of the account's counts of PENDING and FAILED deliveries, kept in the writes that change them and
    summed on read (shard 0 is the one item of before the shards)."""
    return {"PK": account_pk(account), "SK": "INTEGRATION#COUNTS" + (f"#{shard}" if shard else "")}


def integration_counts_keys(account: str) -> list[dict]:
    return [integration_counts_key(account, shard) for shard in range(INTEGRATION_COUNT_SHARDS)]


def token_key(token_hash: str) -> dict:
    return {"PK": f"TOKEN#{token_hash}", "SK": "TOKEN"}


def token_ref_key(account: str, token_id: str) -> dict:
    """Points from a token id to its hash, so a token can be revoked by id."""
    return {"PK": account_pk(account), "SK": f"TOKENREF#{token_id}"}


def idempotency_key(account: str, scope: str, key: str) -> dict:
    return {"PK": f"{account_pk(account)}#IDEM", "SK": f"{scope}#{key}"}


def idempotency_part_key(account: str, scope: str, key: str, part: int) -> dict:
    """Where an answer too long for its record continues (store/idempotency.py), part 1, 2, ..."""
    return {"PK": f"{account_pk(account)}#IDEMPART", "SK": f"{scope}#{key}#{part}"}


def events_pk(account: str) -> str:
    return f"{account_pk(account)}#EVENT"


def event_key(account: str, sort: str) -> dict:
    return {"PK": events_pk(account), "SK": sort}


# Queues of background work (pending events, images, imports) are sparse indexes spread over QUEUE_SHARDS
# partitions by a stable hash of the account, so no index partition takes every tenant's queue writes
# (docs/jobs.md "Queues over partitions"). Items written before the shards carry the bare prefix; the due reads
# read that partition too (queue_partitions), so they are still taken.
QUEUE_SHARDS = 16


def queue_shard(account: str) -> int:
    """Stable across processes and releases (Python's hash() is salted per process)."""
    return int.from_bytes(hashlib.blake2b(account.encode(), digest_size=4).digest(), "big") % QUEUE_SHARDS


def queue_partition(prefix: str, account: str) -> str:
    return f"{prefix}#{queue_shard(account)}"


def queue_partitions(prefix: str) -> list[str]:
    """Every partition of a queue: the unsharded one of older items, then each shard."""
    return [prefix] + [f"{prefix}#{n}" for n in range(QUEUE_SHARDS)]


def in_queue(partition: str | None, prefix: str) -> bool:
    return partition is not None and (partition == prefix or partition.startswith(prefix + "#"))


OUTBOX_PENDING = "OUTBOX#PENDING"  # GSI1PK prefix of events still to send; GSI1SK <due iso>#<account>#<event id>


def outbox_pending(account: str) -> str:
    return queue_partition(OUTBOX_PENDING, account)


def outbox_due(due_iso: str, account: str, event_id: str) -> str:
    return f"{due_iso}#{account}#{event_id}"


SEQUENCE_WIDTH = 15


def outbox_first(account: str, sequence: int) -> dict:
    """GSI2 keys of an event with a feed sequence not yet attempted: the account's first attempts in sequence
    order (decisions §13), whatever their due times."""
    return {"GSI2PK": f"{account_pk(account)}#EFIRST", "GSI2SK": str(sequence).zfill(SEQUENCE_WIDTH)}


IMAGES_PENDING = "IMAGE#PENDING"  # GSI3PK of products whose image waits for download


def image_due(due_iso: str, account: str, product_id: str) -> dict:
    return {"GSI3PK": queue_partition(IMAGES_PENDING, account), "GSI3SK": f"{due_iso}#{account}#{product_id}"}


def due_bound(now_iso: str) -> str:
    """Upper bound (exclusive) of due sort keys "<iso>#...": '$' sorts just after '#'."""
    return f"{now_iso}$"


# Catalogue imports (decisions §12). The import item lists newest first (ids sort by time); its file rows and its
# error entries live in a partition of their own. Imports still to run share GSI3 with the image queue, under
# their own partition value.
IMPORTS_PENDING = "IMPORT#PENDING"


def imports_pk(account: str) -> str:
    return f"{account_pk(account)}#IMPORT"


def import_key(account: str, import_id: str) -> dict:
    return {"PK": imports_pk(account), "SK": import_id}


def import_parts_pk(account: str, import_id: str) -> str:
    return f"{imports_pk(account)}#{import_id}"


def import_rows_key(account: str, import_id: str, piece: int) -> dict:
    return {"PK": import_parts_pk(account, import_id), "SK": f"ROWS#{piece:05d}"}


IMPORT_ERRORS_PREFIX = "ERRORS#"


def import_errors_key(account: str, import_id: str, first_row: int) -> dict:
    return {"PK": import_parts_pk(account, import_id), "SK": f"{IMPORT_ERRORS_PREFIX}{padded_id(first_row)}"}


def import_due(due_iso: str, account: str, import_id: str) -> dict:
    return {"GSI3PK": queue_partition(IMPORTS_PENDING, account), "GSI3SK": f"{due_iso}#{account}#{import_id}"}


def resend_window_key(account: str) -> dict:
    """One item per account: when its latest accepted resend requests were made (decisions §10's rate)."""
    return {"PK": account_pk(account), "SK": "OUTBOX#RESENDS"}


def outbox_lane_key(account: str) -> dict:
    """One item per account the dispatcher has parked (its receiver keeps failing): when to try it again."""
    return {"PK": account_pk(account), "SK": "OUTBOX#LANE"}


# The change feed (decisions §13, docs/feed.md): one head item per account holding the last sequence used, one
# entry item per sequence in a partition of its own, read in order with one Query, and one small item per stream
# record numbered (its id: store/feed_marks.py), so a record handed over again is numbered once.
FEED_HEAD_SK = "FEED#HEAD"


def account_of_pk(pk: str) -> str:
    return pk.removeprefix(ACCOUNT_PREFIX)


def feed_head_key(account: str) -> dict:
    return {"PK": account_pk(account), "SK": FEED_HEAD_SK}


def feed_pk(account: str) -> str:
    return f"{account_pk(account)}#FEED"


def feed_entry_key(account: str, sequence: int) -> dict:
    return {"PK": feed_pk(account), "SK": padded_id(sequence)}


def feed_record_key(account: str, record_id: str) -> dict:
    return {"PK": f"{account_pk(account)}#FEEDREC", "SK": record_id}


DEPOSIT_BALANCE_PREFIX = "DEPBAL#"


def deposit_types_key(account: str) -> dict:
    """The definitions (name, price) of all deposit types of an account in one item (at most 200, decisions §15):
    an order reads them with its products, in the same BatchGetItem. Writes of products never touch it."""
    return {"PK": account_pk(account), "SK": "DEPOSITS"}


def deposit_type_key(account: str, deposit_id: str) -> dict:
    """One deposit type's reference count, existing exactly while the type does: what a product write naming the
    type moves (store/deposits.py), so writes naming different types share no item."""
    return {"PK": account_pk(account), "SK": f"DEPOSIT#{deposit_id}"}


def deposit_balance_key(account: str, customer_id: str) -> dict:
    """One customer's balances, one number attribute per deposit type (store/deposits.py)."""
    return {"PK": account_pk(account), "SK": f"{DEPOSIT_BALANCE_PREFIX}{customer_id}"}


def deposit_movements_prefix(customer_id: str) -> str:
    """The sort keys of one customer's statement records (store/deposit_statement.py): newest last by time."""
    return f"DEPMOVE#{customer_id}#"


# Standing orders (decisions §17): one item each in the account's partition, a count item per customer, and the
# recorded outcome of each placed or failed date in a partition per customer and standing order id (not per
# creation: a date is placed at most once per customer and id, whatever was deleted and written again in between).
# Standing orders with a placing moment to act on are a queue on GSI3, and so is an account whose delivery rules
# changed (its standing orders are looked at again: the entry with an empty customer and id).
STANDING_DUE = "STANDING#DUE"  # GSI3PK prefix; GSI3SK <due iso>#<account>#<customer>#<id>


def standing_orders_prefix(customer_id: str) -> str:
    return f"STANDING#{customer_id}#"


def standing_order_of(sort_key: str) -> tuple[str, str] | None:
    """(customer id, standing order id) of a standing order's sort key (ids hold no '#'), else None."""
    parts = sort_key.split("#")
    return (parts[1], parts[2]) if len(parts) == 3 and parts[0] == "STANDING" and parts[1] and parts[2] else None


def standing_order_key(account: str, customer_id: str, standing_id: str) -> dict:
    return {"PK": account_pk(account), "SK": f"{standing_orders_prefix(customer_id)}{standing_id}"}


def standing_count_key(account: str, customer_id: str) -> dict:
    return {"PK": account_pk(account), "SK": f"STANDINGCOUNT#{customer_id}"}


def standing_occurrence_key(account: str, customer_id: str, standing_id: str, date: str) -> dict:
    return {"PK": f"{account_pk(account)}#SO#{customer_id}#{standing_id}", "SK": date}


def standing_recheck_key(account: str) -> dict:
    """The account's delivery rules changed: its standing orders' placing moments are looked at again."""
    return {"PK": account_pk(account), "SK": "STANDINGRECHECK"}


def standing_due(due_iso: str, account: str, customer_id: str, standing_id: str) -> dict:
    return {
        "GSI3PK": queue_partition(STANDING_DUE, account),
        "GSI3SK": f"{due_iso}#{account}#{customer_id}#{standing_id}",
    }


def standing_failed_key(account: str, customer_id: str, standing_id: str, date: str) -> dict:
    """A failed date as shown (decisions §17): what the `data` of its standing-order.failed entry reads."""
    return {"PK": f"{account_pk(account)}#SOFAILED#{customer_id}#{standing_id}", "SK": date}
