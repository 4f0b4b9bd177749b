"""The lean moto transaction backup (tests/moto_transactions.py) rolls a refused transaction back as moto does."""

import pytest
from botocore.exceptions import ClientError

from chalicelib.store import table


def item(pk: str, **attributes) -> dict:
    return table.to_item({"PK": pk, "SK": "X", **attributes})


def read(client, pk: str):
    found = client.get_item(TableName=table.name(), Key=table.to_item({"PK": pk, "SK": "X"}))
    return table.from_item(found["Item"]) if "Item" in found else None


def test_a_refused_transaction_leaves_every_item_as_it_was(ddb):
    ddb.put_item(TableName=table.name(), Item=item("kept", n=1))
    ddb.put_item(TableName=table.name(), Item=item("gone", n=1))
    with pytest.raises(ClientError) as refused:
        ddb.transact_write_items(
            TransactItems=[
                {
                    "Update": {
                        "TableName": table.name(),
                        "Key": table.to_item({"PK": "kept", "SK": "X"}),
                        "UpdateExpression": "SET n = :two",
                        "ExpressionAttributeValues": table.values(two=2),
                    }
                },
                {"Delete": {"TableName": table.name(), "Key": table.to_item({"PK": "gone", "SK": "X"})}},
                {"Put": {"TableName": table.name(), "Item": item("new", n=1)}},
                {
                    "Put": {
                        "TableName": table.name(),
                        "Item": item("refused", n=1),
                        "ConditionExpression": "attribute_exists(PK)",
                    }
                },
            ]
        )
    assert table.cancellation_codes(refused.value) == ["None", "None", "None", "ConditionalCheckFailed"]
    assert read(ddb, "kept") == {"PK": "kept", "SK": "X", "n": 1}
    assert read(ddb, "gone") == {"PK": "gone", "SK": "X", "n": 1}
    assert read(ddb, "new") is None and read(ddb, "refused") is None


def test_an_accepted_transaction_writes_every_item(ddb):
    ddb.put_item(TableName=table.name(), Item=item("kept", n=1))
    ddb.transact_write_items(
        TransactItems=[
            {
                "Update": {
                    "TableName": table.name(),
                    "Key": table.to_item({"PK": "kept", "SK": "X"}),
                    "UpdateExpression": "SET n = :two",
                    "ExpressionAttributeValues": table.values(two=2),
                }
            },
            {
                "Put": {
                    "TableName": table.name(),
                    "Item": item("new", n=1),
                    "ConditionExpression": "attribute_not_exists(PK)",
                }
            },
        ]
    )
    assert read(ddb, "kept")["n"] == 2 and read(ddb, "new")["n"] == 1


def test_one_item_named_twice_is_refused_and_writes_nothing(ddb):
    with pytest.raises(ClientError) as refused:
        ddb.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table.name(), "Item": item("twice", n=1)}},
                {"Put": {"TableName": table.name(), "Item": item("twice", n=2)}},
            ]
        )
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert read(ddb, "twice") is None
