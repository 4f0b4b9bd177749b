"""Catalogue imports (decisions §12): the import item, its file rows in pieces, its error entries, its queue.

- The import item (keys.import_key) holds the status, the counts and the checkpoint `next_row` (the index of the
  first row not yet done). Counts and checkpoint change only together with the rows they count: the product
  writes of a chunk, its error entries and the new checkpoint are one TransactWriteItems, so a crash never
  counts a row twice or loses one.
- The file's rows, as read at upload, are stored as JSON text in pieces of at most PIECE_BYTES (keys.import_rows_key),
  `piece_starts` on the import item saying which row each piece begins with. They are deleted when the import ends.
- Imports still to run carry GSI3PK = IMPORT#PENDING, GSI3SK = <due iso>#<account>#<id>. A job claims one by
  moving GSI3SK to the end of its lease and writing a `lease` token; every later write is conditional on that token.
"""
import datetime as dt
import secrets
import time
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.timestamps import iso
from . import batch, keys, products, table
from .paging import Page, query_page

PIECE_BYTES = 300_000  # below DynamoDB's 400 KB item limit with room for the key and attribute names
MAX_TRANSACTION_ITEMS = 100
WRITE_ATTEMPTS = 8
COUNTS = ("created", "updated", "unchanged", "invalid", "categories_created", "error_count")
_LISTED = ("id", "#status", "dry_run", "#rows", "next_row", *COUNTS, "submitted_at", "finished_at", "reason")


@dataclass(frozen=True)
class ProductWrite:
    """A product to write: create it (revision None) or replace the one read with that revision.

    image_due: queue its image for download then (or forget an image it no longer has); None keeps the image
    state as it is (store/products.py write_operation)."""

    data: dict
    expected_revision: str | None
    image_due: dt.datetime | None = None


@dataclass(frozen=True)
class Committed:
    pass


@dataclass(frozen=True)
class Conflicts:
    """Products changed (or created) since they were read: their positions in the writes given."""

    positions: list[int]


@dataclass(frozen=True)
class LostLease:
    """Another job took the import over (our lease ran out): stop without writing."""


def new_import_id(now: dt.datetime) -> str:
    """Sorts by submission time, so the newest import lists first: 12 hex digits of milliseconds, 8 random."""
    return f"{int(now.timestamp() * 1000):012x}{secrets.token_hex(4)}"


def split_pieces(rows: list[str]) -> tuple[list[str], list[int]]:
    """JSON row texts -> (piece texts, index of the first row of each piece)."""
    pieces, starts, current, size = [], [], [], 0
    for index, row in enumerate(rows):
        length = len(row.encode()) + 1
        if current and size + length > PIECE_BYTES:
            pieces.append("[" + ",".join(current) + "]")
            current, size = [], 0
        if not current:
            starts.append(index)
        current.append(row)
        size += length
    if current:
        pieces.append("[" + ",".join(current) + "]")
    return pieces, starts


def _write_batch(requests: list[dict]) -> None:
    """BatchWriteItem in chunks of 25, retrying what DynamoDB leaves unprocessed."""
    for start in range(0, len(requests), 25):
        pending = {table.name(): requests[start : start + 25]}
        for attempt in range(batch.MAX_ATTEMPTS):
            pending = table.client().batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
            time.sleep(min(0.05 * 2**attempt, 1.0))
        else:
            raise RuntimeError("DynamoDB left items unprocessed after repeated BatchWriteItem attempts")


def create(account: str, record: dict, pieces: list[str], now: dt.datetime) -> None:
    """Store the rows, then the import item that queues them (an item is only visible once its rows are there)."""
    import_id = record["id"]
    _write_batch(
        [
            {"PutRequest": {"Item": table.to_item({**keys.import_rows_key(account, import_id, n), "rows": text})}}
            for n, text in enumerate(pieces)
        ]
    )
    item = {
        **keys.import_key(account, import_id),
        **keys.import_due(iso(now), account, import_id),
        **record,
        "account": account,
        "next_row": 0,
        "stalls": 0,
        **{name: 0 for name in COUNTS},
    }
    table.client().put_item(
        TableName=table.name(), Item=table.to_item(item), ConditionExpression="attribute_not_exists(PK)"
    )


def get(account: str, import_id: str, consistent: bool = True) -> dict | None:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.import_key(account, import_id)), ConsistentRead=consistent
    )
    return table.from_item(response["Item"]) if "Item" in response else None


def list_page(account: str, limit: int, cursor: str | None) -> Page:
    """The account's imports, newest first, without their rows or errors."""
    return query_page(
        account,
        "imports",
        limit,
        cursor,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.imports_pk(account)),
        ExpressionAttributeNames={"#status": "status", "#rows": "rows"},
        ProjectionExpression=", ".join(("PK", "SK", *_LISTED)),
        ScanIndexForward=False,
    )


def listed_errors(account: str, import_id: str, limit: int) -> list[dict]:
    """The first `limit` error entries, in file order."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
        "ExpressionAttributeValues": table.values(
            pk=keys.import_parts_pk(account, import_id), prefix=keys.IMPORT_ERRORS_PREFIX
        ),
    }
    found: list[dict] = []
    while len(found) < limit:
        response = table.client().query(**request)
        for item in response.get("Items", []):
            found += table.from_item(item)["errors"]
        if "LastEvaluatedKey" not in response:
            break
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
    return found[:limit]


def pieces(account: str, import_id: str, numbers: list[int]) -> dict[int, str]:
    wanted = {n: keys.import_rows_key(account, import_id, n) for n in numbers}
    found = batch.get_items(list(wanted.values()), consistent=True)
    return {n: item["rows"] for n, key in wanted.items() if (item := batch.pick(found, key)) is not None}


def categories(account: str) -> dict[str, str]:
    """Every category of the account, id -> name (read once per import run, not once per row)."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
        "ExpressionAttributeValues": table.values(pk=keys.account_pk(account), prefix=keys.CATEGORY_PREFIX),
        "ConsistentRead": True,
    }
    found = {}
    while True:
        response = table.client().query(**request)
        for raw in response.get("Items", []):
            item = table.from_item(raw)
            found[keys.category_id_of(item)] = item["name"]
        if "LastEvaluatedKey" not in response:
            return found
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def create_categories(account: str, new: dict[str, str]) -> bool:
    """Create categories (id -> name) that must not exist yet, 100 per transaction.

    False when one was created meanwhile by someone else (the caller reads the categories again)."""
    entries = list(new.items())
    for start in range(0, len(entries), MAX_TRANSACTION_ITEMS):
        operations = [
            {
                "Put": {
                    "TableName": table.name(),
                    "Item": table.to_item({**keys.category_key(account, category_id), "name": name}),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            }
            for category_id, name in entries[start : start + MAX_TRANSACTION_ITEMS]
        ]
        try:
            table.client().transact_write_items(TransactItems=operations)
        except ClientError as error:
            if table.CONDITION_FAILED in table.cancellation_codes(error):
                return False
            raise
    return True


@dataclass(frozen=True)
class Existing:
    product: products.StoredProduct
    image_status: str | None  # the image job's state (store/product_images.py)


def stored_products(account: str, product_ids: list[str]) -> dict[str, Existing]:
    """The products with these ids that exist, read consistently (their revision guards the write)."""
    found = batch.get_items([keys.product_key(account, pid) for pid in product_ids], consistent=True)
    result = {}
    for item in found.values():
        stored = products.from_item(item)
        result[stored.data["id"]] = Existing(stored, item.get("image_status"))
    return result


def due(now: dt.datetime, limit: int) -> list[dict]:
    return table.due_items(keys.GSI3, keys.IMPORTS_PENDING, keys.due_bound(iso(now)), limit)


def woken(record_name: str, image: dict) -> bool:
    """A stream record of an import waiting for a job: queued, or given back after a slice (not one leased)."""
    return keys.in_queue((image.get("GSI3PK") or {}).get("S"), keys.IMPORTS_PENDING) and "lease" not in image


def claim(item: dict, lease_until: dt.datetime) -> dict | None:
    """Take the import until lease_until; None when another job took it first. Counts the claim in `stalls`
    (a committed chunk or a release sets it back to 0), so an import that crashes its jobs again and again can
    be failed."""
    lease = keys.import_due(iso(lease_until), item["account"], item["id"])["GSI3SK"]
    return _update_if(
        item,
        "SET GSI3SK = :lease, lease = :token, stalls = stalls + :one",
        "GSI3SK = :seen",
        lease=lease,
        token=secrets.token_hex(8),
        one=1,
        seen=item["GSI3SK"],
    )


def _checkpoint_update(claimed: dict, progress: dict) -> dict:
    """The import item update that moves the checkpoint, if our lease holds and nobody moved it first."""
    names = {f"#f{i}": name for i, name in enumerate(progress)}
    sets = ", ".join(f"#f{i} = :f{i}" for i in range(len(progress)))
    return {
        "TableName": table.name(),
        "Key": table.to_item({"PK": claimed["PK"], "SK": claimed["SK"]}),
        "UpdateExpression": f"SET {sets}, stalls = :zero",
        "ConditionExpression": "lease = :token AND next_row = :seen",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": {
            **table.values(**{f"f{i}": value for i, value in enumerate(progress.values())}),
            **table.values(token=claimed["lease"], seen=claimed["next_row"], zero=0),
        },
    }


def commit(claimed: dict, writes: list[ProductWrite], progress: dict, errors: list[dict]) -> Committed | Conflicts | LostLease:
    """One chunk, all or nothing: its product writes (each conditional on the revision read), its error entries
    and the new checkpoint and counts (`progress`, which holds next_row). The caller keeps the chunk within
    MAX_TRANSACTION_ITEMS - 2 writes."""
    account = claimed["account"]
    operations = [
        {
            "Update": products.write_operation(
                account,
                write.data,
                table.new_revision(),
                create_only=write.expected_revision is None,
                expected_revision=write.expected_revision,
                image_due=write.image_due,
            )
        }
        for write in writes
    ]
    operations.append({"Update": _checkpoint_update(claimed, progress)})
    if errors:
        key = keys.import_errors_key(account, claimed["id"], errors[0]["row"])
        operations.append({"Put": {"TableName": table.name(), "Item": table.to_item({**key, "errors": errors})}})
    try:
        if len(operations) == 1:
            table.client().update_item(**operations[0]["Update"])
        else:
            table.client().transact_write_items(TransactItems=operations)
    except ClientError as error:
        if len(operations) == 1 and table.is_conditional_failure(error):
            return LostLease()
        codes = table.cancellation_codes(error)
        if not codes:
            raise
        if codes[len(writes)] not in ("None", ""):
            if codes[len(writes)] == table.CONDITION_FAILED:
                return LostLease()
            return Conflicts([])  # the import item itself was busy: try the chunk again
        return Conflicts([i for i, code in enumerate(codes[: len(writes)]) if code not in ("None", "")])
    return Committed()


def release(claimed: dict, due_at: dt.datetime) -> bool:
    """Give the import back to the queue, due at due_at (the next job continues from the checkpoint)."""
    return _conditional_update(
        claimed,
        "SET GSI3SK = :due, stalls = :zero REMOVE lease",
        due=keys.import_due(iso(due_at), claimed["account"], claimed["id"])["GSI3SK"],
        zero=0,
    )


def finish(claimed: dict, status: str, finished_at: dt.datetime, reason: str | None = None) -> bool:
    """End the import (DONE or FAILED) and take it off the queue."""
    update = "SET #status = :status, finished_at = :at"
    named = {"status": status, "at": iso(finished_at)}
    if reason is not None:
        update += ", reason = :reason"
        named["reason"] = reason
    return _conditional_update(claimed, update + " REMOVE lease, GSI3PK, GSI3SK", names={"#status": "status"}, **named)


def _conditional_update(claimed: dict, expression: str, names: dict | None = None, **named) -> bool:
    """An update of the import item while our lease holds; False when it no longer does."""
    return _update_if(claimed, expression, "lease = :token", names, token=claimed["lease"], **named) is not None


def _update_if(item: dict, expression: str, condition: str, names: dict | None = None, **named) -> dict | None:
    """Update the import item if `condition` holds: the item as it is now, or None when it did not hold."""
    request = {
        "TableName": table.name(),
        "Key": table.to_item({"PK": item["PK"], "SK": item["SK"]}),
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeValues": table.values(**named),
        "ReturnValues": "ALL_NEW",
    }
    if names:
        request["ExpressionAttributeNames"] = names
    try:
        response = table.client().update_item(**request)
    except ClientError as error:
        if table.is_conditional_failure(error):
            return None
        raise
    return table.from_item(response["Attributes"])


def delete_pieces(account: str, import_id: str, count: int) -> None:
    _write_batch(
        [{"DeleteRequest": {"Key": table.to_item(keys.import_rows_key(account, import_id, n))}} for n in range(count)]
    )
