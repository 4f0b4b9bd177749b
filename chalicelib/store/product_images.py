"""The image job's state on a product item (decisions §5 and §10), beside its document (store/rendered.py).

- image_status: PENDING (written with the product) -> DOWNLOADING (claimed by a job, until a lease ends) ->
  DONE | FAILED.
- image_meta: what the last download found {url, content_type, size, sha256, etag, last_modified,
  downloaded_at}; image_error: why the last one failed {url, message, at}. Neither is part of the document,
  so product reads never show them. Items handed to the job carry the document decoded as `data`.
- While PENDING or DOWNLOADING the item carries GSI3PK = IMAGE#PENDING, GSI3SK = <due iso>#<account>#<id>:
  a sparse index of work spread over queue shards (keys.queue_partitions), emptied when the job finishes.
  Items leave this module without their keys: `account`, `product_id` and `queued_at` (when it was queued or
  its lease ends) name them.
"""

import datetime as dt

from ..domain.image_status import ImageStatus
from ..domain.timestamps import iso
from . import keys, operations, rendered, table
from .operations import Operation
from .outcomes import Stale, TooLarge

PENDING, DOWNLOADING, DONE, FAILED = ImageStatus.PENDING, ImageStatus.DOWNLOADING, ImageStatus.DONE, ImageStatus.FAILED
STATE = ("image_status", "image_meta", "image_error", "GSI3PK", "GSI3SK")


def marking(account: str, data: dict, now: dt.datetime) -> tuple[dict, tuple[str, ...]]:
    """(attributes to set, attributes to remove) for a product write: queue the image, or forget it."""
    if "image" not in data:
        return {}, STATE
    return {"image_status": PENDING, **keys.image_due(iso(now), account, data["id"])}, ("image_error",)


def product_of(item: dict) -> tuple[str, str]:
    """(account, product id) of a product as this module gives it."""
    return item["account"], item["product_id"]


def _product(stored: dict) -> dict:
    """The item without its keys, its document under `data` whichever form it is stored in (store/rendered.py)."""
    account, product_id = keys.product_of_key(stored)
    shown = {name: value for name, value in stored.items() if name not in ("PK", "SK", "GSI3PK", "GSI3SK")}
    shown.update(account=account, product_id=product_id)
    shown[rendered.LEGACY] = rendered.document(stored)
    if "GSI3SK" in stored:
        shown["queued_at"] = stored["GSI3SK"].split("#", 1)[0]
    return shown


def woken(record_name: str, image: dict) -> bool:
    """A stream record of a product whose image was just queued."""
    status = (image.get("image_status") or {}).get("S")
    return status == PENDING and keys.in_queue((image.get("GSI3PK") or {}).get("S"), keys.IMAGES_PENDING)


def _key(item: dict) -> dict:
    return table.to_item(keys.product_key(item["account"], item["product_id"]))


def get(account: str, product_id: str) -> dict | None:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.product_key(account, product_id)), ConsistentRead=True
    )
    return _product(table.from_item(response["Item"])) if "Item" in response else None


def due(now: dt.datetime, limit: int) -> list[dict]:
    """Queued images whose time has come, earliest first: at most `limit` from each queue shard."""
    return [_product(item) for item in table.due_items(keys.GSI3, keys.IMAGES_PENDING, keys.due_bound(iso(now)), limit)]


def claim(item: dict, lease_until: dt.datetime) -> dict | Stale | TooLarge:
    """Take the download until lease_until; Stale when the product changed or another job took it, TooLarge
    when the product item is too close to the item size limit to be marked."""
    account, product_id = product_of(item)
    request = {
        "TableName": table.name(),
        "Key": _key(item),
        "UpdateExpression": "SET image_status = :downloading, GSI3SK = :lease",
        "ConditionExpression": "rev = :rev AND GSI3SK = :seen",
        "ExpressionAttributeValues": table.values(
            downloading=DOWNLOADING,
            lease=keys.image_due(iso(lease_until), account, product_id)["GSI3SK"],
            rev=item["rev"],
            seen=keys.image_due(item["queued_at"], account, product_id)["GSI3SK"],
        ),
    }
    claimed = operations.write(Operation({"Update": request}, Stale(), oversized=TooLarge()), "ALL_NEW")
    return _product(claimed) if isinstance(claimed, dict) else claimed


def finishing(
    item: dict, *, data: dict | None = None, meta: dict | None = None, error: dict | None = None
) -> Operation:
    """Record the outcome, conditional on the revision read; with `data` the product document changes too (a
    product.updated for the service to record). Stale: the product changed meanwhile (read it again); TooLarge: the
    product item cannot hold the result (finish it with `failed_bare`)."""
    named = {"rev": item["rev"], "status": FAILED if error else DONE}
    names = {}
    update = ["image_status = :status"]
    removals = ["GSI3PK", "GSI3SK"]
    if data is not None:
        document_set, document_removals = rendered.product_attributes(data)
        for i, (attribute, value) in enumerate(document_set.items()):
            update.append(f"#d{i} = :d{i}")
            names[f"#d{i}"] = attribute
            named[f"d{i}"] = value
        for i, attribute in enumerate(document_removals):
            removals.append(f"#x{i}")
            names[f"#x{i}"] = attribute
        update.append("rev = :new_rev")
        named["new_rev"] = table.new_revision()
    if meta is not None:
        update.append("image_meta = :meta")
        named["meta"] = meta
    if error is not None:
        update.append("image_error = :error")
        named["error"] = error
    else:
        removals.append("image_error")
    request = {
        "TableName": table.name(),
        "Key": _key(item),
        "UpdateExpression": f"SET {', '.join(update)} REMOVE {', '.join(removals)}",
        "ConditionExpression": "rev = :rev",
        "ExpressionAttributeValues": table.values(**named),
    }
    if names:
        request["ExpressionAttributeNames"] = names
    return Operation({"Update": request}, Stale(), oversized=TooLarge())


def failed_bare(item: dict) -> None | Stale:
    """FAILED with nothing added, for a product item too large to hold more: it only shrinks (the status gets
    shorter, the queue keys go), so it always fits."""
    request = {
        "TableName": table.name(),
        "Key": _key(item),
        # REMOVE first: moto checks the size after each clause (DynamoDB checks the result).
        "UpdateExpression": "REMOVE GSI3PK, GSI3SK, image_error, image_meta SET image_status = :failed",
        "ConditionExpression": "rev = :rev",
        "ExpressionAttributeValues": table.values(failed=FAILED, rev=item["rev"]),
    }
    return operations.write(Operation({"Update": request}, Stale()))
