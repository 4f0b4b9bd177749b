"""Products: one item each, the product document in `data`, a revision for ETags and conditional writes."""
import secrets
from dataclasses import dataclass

from botocore.exceptions import ClientError

from ..domain.errors import Conflict, NotFound, PreconditionFailed, invalid
from ..domain.values import ORDERABLE_STATUSES
from . import keys, table
from .paging import Page, query_page


@dataclass(frozen=True)
class StoredProduct:
    data: dict
    revision: str
    used: bool




def from_item(item: dict) -> StoredProduct:
    return StoredProduct(data=item["data"], revision=item["rev"], used=bool(item.get("used")))


def get(account: str, product_id: str, consistent: bool = False) -> StoredProduct | None:
    response = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.product_key(account, product_id)), ConsistentRead=consistent
    )
    return from_item(table.from_item(response["Item"])) if "Item" in response else None


def list_page(account: str, limit: int, cursor: str | None) -> Page:
    page = query_page(
        account,
        "products",
        limit,
        cursor,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues=table.values(pk=keys.account_pk(account), prefix="PRODUCT#"),
    )
    return Page([from_item(item) for item in page.items], page.cursor)


def new_revision() -> str:
    return secrets.token_hex(8)


def write_operation(
    account: str,
    data: dict,
    revision: str,
    *,
    create_only: bool = False,
    expected_revision: str | None = None,
    extra_set: dict | None = None,
    extra_remove: tuple[str, ...] = (),
) -> dict:
    """The UpdateItem (as a TransactWriteItems element's body) that creates or replaces a product.

    Update (not Put) keeps attributes other writers own, such as the `used` flag set by deliveries.
    extra_set/extra_remove are further item attributes written by the same update (the image job's state).
    """
    index = keys.product_category_gsi(account, data["category"], data["id"])
    expression = "SET #data = :data, rev = :rev, GSI1PK = :gpk, GSI1SK = :gsk"
    named = {"data": data, "rev": revision, "gpk": index["GSI1PK"], "gsk": index["GSI1SK"]}
    removals = list(extra_remove)
    if data["status"] in ORDERABLE_STATUSES:
        orderable = keys.orderable_product_gsi(account, data["id"])
        expression += ", GSI2PK = :opk, GSI2SK = :osk"
        named.update(opk=orderable["GSI2PK"], osk=orderable["GSI2SK"])
    else:
        removals += ["GSI2PK", "GSI2SK"]
    extra_set = extra_set or {}
    expression += "".join(f", #x{i} = :x{i}" for i in range(len(extra_set)))
    named.update({f"x{i}": value for i, value in enumerate(extra_set.values())})
    if removals:
        expression += f" REMOVE {', '.join(f'#r{i}' for i in range(len(removals)))}"
    update = {
        "TableName": table.name(),
        "Key": table.to_item(keys.product_key(account, data["id"])),
        "UpdateExpression": expression,
        "ExpressionAttributeNames": {
            "#data": "data",
            **{f"#x{i}": name for i, name in enumerate(extra_set)},
            **{f"#r{i}": name for i, name in enumerate(removals)},
        },
        "ExpressionAttributeValues": table.values(**named),
    }
    if create_only:
        update["ConditionExpression"] = "attribute_not_exists(PK)"
    elif expected_revision is not None:
        update["ConditionExpression"] = "rev = :expected"
        update["ExpressionAttributeValues"].update(table.values(expected=expected_revision))
    return update


def save(
    account: str,
    data: dict,
    *,
    create_only: bool = False,
    expected_revision: str | None = None,
    extra_set: dict | None = None,
    extra_remove: tuple[str, ...] = (),
) -> str:
    """Create or replace a product, checking in the same transaction that its category exists.

    Returns the new revision.
    """
    revision = new_revision()
    update = write_operation(
        account,
        data,
        revision,
        create_only=create_only,
        expected_revision=expected_revision,
        extra_set=extra_set,
        extra_remove=extra_remove,
    )
    category_check = {
        "TableName": table.name(),
        "Key": table.to_item(keys.category_key(account, data["category"])),
        "ConditionExpression": "attribute_exists(PK)",
    }
    try:
        table.client().transact_write_items(
            TransactItems=[{"Update": update}, {"ConditionCheck": category_check}]
        )
    except ClientError as error:
        codes = table.cancellation_codes(error)
        if not codes:
            raise
        failures = []
        if len(codes) > 1 and codes[1] == "ConditionalCheckFailed":
            failures.append(invalid("category", "does not name an existing category"))
        if codes[0] == "ConditionalCheckFailed":
            if create_only:
                failures.append(Conflict(f"product {data['id']} already exists; use PUT to replace it"))
            else:
                failures.append(PreconditionFailed("the product was changed since the ETag given in If-Match"))
        if failures:
            raise failures[0] from None
        raise
    return revision


def delete(account: str, product_id: str, expected_revision: str | None = None) -> None:
    condition = "attribute_exists(PK) AND (attribute_not_exists(used) OR used = :false)"
    named = {"false": False}
    if expected_revision is not None:
        condition += " AND rev = :expected"
        named["expected"] = expected_revision
    try:
        table.client().delete_item(
            TableName=table.name(),
            Key=table.to_item(keys.product_key(account, product_id)),
            ConditionExpression=condition,
            ExpressionAttributeValues=table.values(**named),
        )
    except ClientError as error:
        if not table.is_conditional_failure(error):
            raise
        # Only on failure do we read, to say which condition did not hold.
        current = get(account, product_id, consistent=True)
        if current is None:
            raise NotFound(f"product {product_id} does not exist") from None
        if current.used:
            raise Conflict(f"product {product_id} is used by a delivery and cannot be deleted") from None
        raise PreconditionFailed("the product was changed since the ETag given in If-Match") from None


def list_orderable_page(account: str, limit: int, cursor: str | None) -> Page:
    """ACTIVE and OUT_OF_STOCK products by id, from their sparse index: one request per full page."""
    page = query_page(
        account,
        "orderable-products",
        limit,
        cursor,
        index=keys.GSI2,
        KeyConditionExpression="GSI2PK = :pk",
        ExpressionAttributeValues=table.values(pk=keys.orderable_products_pk(account)),
    )
    return Page([from_item(item) for item in page.items], page.cursor)


def any_in_category(account: str, category_id: str) -> bool:
    response = table.client().query(
        TableName=table.name(),
        IndexName=keys.GSI1,
        KeyConditionExpression="GSI1PK = :pk",
        ExpressionAttributeValues=table.values(pk=f"{keys.account_pk(account)}#PCAT#{category_id}"),
        Limit=1,
    )
    return bool(response.get("Items"))


def mark_used_operation(account: str, product_id: str) -> dict:
    """A transaction item that flags a product as used by a delivery (so it can no longer be deleted)."""
    return {
        "Update": {
            "TableName": table.name(),
            "Key": table.to_item(keys.product_key(account, product_id)),
            "UpdateExpression": "SET used = :true",
            "ConditionExpression": "attribute_exists(PK)",
            "ExpressionAttributeValues": table.values(true=True),
        }
    }
