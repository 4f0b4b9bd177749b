"""Categories: small items under the account partition, and their count (decisions §4: at most
limits.CATEGORIES an account), moved in the same transaction as every creation and delete."""

from ..domain.limits import CATEGORIES
from . import batch, keys, operations, table
from .operations import Operation
from .outcomes import Full, Gone, NoCategory, Stale, Taken
from .paging import Page, query_page


def _public(item: dict) -> dict:
    return {"id": keys.category_id_of(item), "name": item["name"]}


def _put(account: str, category_id: str, name: str, condition: str, refused) -> Operation:
    item = {**keys.category_key(account, category_id), "name": name}
    put = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": condition}
    return Operation({"Put": put}, refused)


def creating(account: str, category_id: str, name: str) -> Operation:
    """Create a category which must not exist yet (Taken)."""
    return _put(account, category_id, name, "attribute_not_exists(PK)", Taken())


def renaming(account: str, category_id: str, name: str) -> Operation:
    """Rename a category which must still exist (Stale: it went meanwhile)."""
    return _put(account, category_id, name, "attribute_exists(PK)", Stale())


def deleting(account: str, category_id: str) -> Operation:
    """Delete a category (Gone: there is none)."""
    doomed = {
        "TableName": table.name(),
        "Key": table.to_item(keys.category_key(account, category_id)),
        "ConditionExpression": "attribute_exists(PK)",
    }
    return Operation({"Delete": doomed}, Gone())


def read_for_write(account: str, category_id: str) -> dict | None:
    """The category read consistently (what a write starts from)."""
    key = keys.category_key(account, category_id)
    found = batch.pick(batch.get_items([key], consistent=True), key)
    return _public(found) if found is not None else None


def get(account: str, category_id: str) -> dict | None:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.category_key(account, category_id))
    )
    return _public(table.from_item(response["Item"])) if "Item" in response else None


def list_page(account: str, limit: int, cursor: str | None) -> Page:
    page = query_page(
        account,
        "categories",
        limit,
        cursor,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues=table.values(pk=keys.account_pk(account), prefix=keys.CATEGORY_PREFIX),
    )
    return Page([_public(item) for item in page.items], page.cursor)


def existing(account: str, category_ids: list[str], clock: batch.Clock | None = None) -> set[str]:
    """Which of these categories exist, read consistently (the catalogue import reads its chunk's at once)."""
    found = batch.get_items([keys.category_key(account, c) for c in category_ids], consistent=True, clock=clock)
    return {keys.category_id_of(item) for item in found.values()}


def exists_check(account: str, category_id: str, rank: int = 0) -> Operation:
    """The category exists when the transaction commits (NoCategory: it does not)."""
    check = {
        "TableName": table.name(),
        "Key": table.to_item(keys.category_key(account, category_id)),
        "ConditionExpression": "attribute_exists(PK)",
    }
    return Operation({"ConditionCheck": check}, NoCategory(), rank)


def all_names(account: str) -> dict[str, str]:
    """Every category of the account, id -> name (the catalogue import reads them once, when a file comes)."""
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


COUNT = "categories"  # the count item's attribute


def _held(account: str) -> int | None:
    """The count as stored, read consistently; None for an account whose categories were made before it was kept."""
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.category_count_key(account)), ConsistentRead=True
    )
    return int(response["Item"][COUNT]["N"]) if "Item" in response else None


def _counted(account: str) -> int:
    """The categories there are, counted with a Query (only for an account without its count item yet)."""
    request = {
        "TableName": table.name(),
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
        "ExpressionAttributeValues": table.values(pk=keys.account_pk(account), prefix=keys.CATEGORY_PREFIX),
        "Select": "COUNT",
        "ConsistentRead": True,
    }
    total = 0
    while True:
        response = table.client().query(**request)
        total += response["Count"]
        if "LastEvaluatedKey" not in response:
            return total
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def held(account: str) -> int:
    """How many categories the account holds now (counted with a Query, and kept, for an account made before the
    count was kept)."""
    stored = _held(account)
    return count_from_scratch(account) if stored is None else stored


def count_from_scratch(account: str) -> int:
    """Keep the count of an account that has none yet: its categories counted with a Query. While it has none, no
    creation or delete of a category commits (their count's condition), so the Query counts them all."""
    total = _counted(account)
    item = {**keys.category_count_key(account), COUNT: total}
    put = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    if isinstance(operations.write(Operation({"Put": put}, Taken())), Taken):
        return held(account)  # another process kept it first
    return total


def counting(account: str, step: int) -> Operation:
    """The count moved by `step` (categories created, or deleted when negative) in their write: Full when it would
    pass CATEGORIES (however many create at once); Stale when the account has no count yet (`held` keeps one: then
    write again)."""
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.category_count_key(account)),
        "UpdateExpression": "ADD #count :step",
        "ConditionExpression": "attribute_exists(#count)",
        "ExpressionAttributeNames": {"#count": COUNT},
        "ExpressionAttributeValues": table.values(step=step),
    }
    if step <= 0:
        return Operation({"Update": update}, Stale())
    update["ConditionExpression"] += " AND #count <= :most"
    update["ExpressionAttributeValues"] = table.values(step=step, most=CATEGORIES - step)
    return Operation({"Update": update}, lambda: _full_or_stale(account, step))


def _full_or_stale(account: str, step: int) -> Full | Stale:
    """Why a creation's count refused it, read after the refusal: Full only when the count is at the bound now; a
    count kept by another process since (or moved by a delete) is Stale, and the creation writes again."""
    held_now = _held(account)
    return Full() if held_now is not None and held_now > CATEGORIES - step else Stale()
