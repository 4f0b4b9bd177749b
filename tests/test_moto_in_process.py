"""moto answering in process (tests/moto_in_process.py) answers as moto over mock_aws's HTTP path does: the same
calls of the store's kinds, on both paths, give the same answers and the same errors, call by call."""

import pytest
from botocore.exceptions import ClientError

from chalicelib.store import table

from . import moto_in_process

BIG = "x" * 410_000  # past DynamoDB's 400 KB item


def key(pk: str, sk: str = "X") -> dict:
    return table.to_item({"PK": pk, "SK": sk})


def item(pk: str, sk: str = "X", **attributes) -> dict:
    return table.to_item({"PK": pk, "SK": sk, **attributes})


def _dynamodb_calls(name: str) -> list[tuple[str, str, dict]]:
    """(what, operation, request) of the kinds the store makes, refusals and errors among them."""
    every_kind = {"s": "a", "n": 2, "d": "1.5", "b": b"\x00\xff", "t": True, "z": None, "l": [1, "two"]}
    typed = item("kinds", **{k: v for k, v in every_kind.items() if v is not None}, m={"a": 1}, ss={"x", "y"})
    typed["z"] = {"NULL": True}
    update = {"TableName": name, "Key": key("kinds"), "UpdateExpression": "SET n = n + :one"}
    update["ExpressionAttributeValues"] = table.values(one=1)
    absent = {"ConditionExpression": "attribute_not_exists(PK)"}
    transaction = [
        {"Put": {"TableName": name, "Item": item("t1", n=1)}},
        {"Update": {**update, "ConditionExpression": "n = :one"}},
        {"ConditionCheck": {"TableName": name, "Key": key("missing"), "ConditionExpression": "attribute_exists(PK)"}},
    ]
    page = {"TableName": name, "KeyConditionExpression": "PK = :pk", "ExpressionAttributeValues": table.values(pk="q")}
    index = {"TableName": name, "IndexName": "GSI1", "KeyConditionExpression": "GSI1PK = :pk"}
    index["ExpressionAttributeValues"] = table.values(pk="queue")
    return [
        ("put every kind", "put_item", {"TableName": name, "Item": typed}),
        ("get it", "get_item", {"TableName": name, "Key": key("kinds")}),
        ("get a missing item", "get_item", {"TableName": name, "Key": key("missing")}),
        ("get projected", "get_item", {"TableName": name, "Key": key("kinds"), "ProjectionExpression": "b, m.a"}),
        ("put refused", "put_item", {"TableName": name, "Item": typed, **absent}),
        (
            "put refused, old item back",
            "put_item",
            {"TableName": name, "Item": typed, **absent, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        ),
        ("update, new values back", "update_item", {**update, "ReturnValues": "ALL_NEW"}),
        ("update, old values back", "update_item", {**update, "ReturnValues": "UPDATED_OLD"}),
        ("update refused", "update_item", {**update, "ConditionExpression": "n = :one"}),
        ("transaction refused by one item", "transact_write_items", {"TransactItems": transaction}),
        ("transaction", "transact_write_items", {"TransactItems": transaction[:1]}),
        (
            "transaction of one item too large",
            "transact_write_items",
            {"TransactItems": [{"Put": {"TableName": name, "Item": item("big", s=BIG)}}]},
        ),
        ("put too large", "put_item", {"TableName": name, "Item": item("big", s=BIG)}),
        ("a bad expression", "update_item", {**update, "UpdateExpression": "SET n = = :one"}),
        (
            "an unused name",
            "get_item",
            {"TableName": name, "Key": key("kinds"), "ExpressionAttributeNames": {"#u": "u"}},
        ),
        ("read together", "transact_get_items", {"TransactItems": [{"Get": {"TableName": name, "Key": key("t1")}}]}),
        (
            "batch write",
            "batch_write_item",
            {
                "RequestItems": {
                    name: [{"PutRequest": {"Item": item("q", f"{i:02}", GSI1PK="queue")}} for i in range(5)]
                }
            },
        ),
        ("batch get", "batch_get_item", {"RequestItems": {name: {"Keys": [key("q", "00"), key("q", "03"), key("n")]}}}),
        ("a page of a query", "query", {**page, "Limit": 2}),
        ("the next page", "query", {**page, "Limit": 2, "ExclusiveStartKey": key("q", "01")}),
        ("backwards, filtered", "query", {**page, "ScanIndexForward": False, "FilterExpression": "SK > :pk"}),
        ("counted", "query", {**page, "Select": "COUNT"}),
        ("an index", "query", {**index, "Limit": 3}),
        ("an index that does not exist", "query", {**index, "IndexName": "GSI9"}),
        ("scan", "scan", {"TableName": name, "Limit": 4}),
        ("delete, old item back", "delete_item", {"TableName": name, "Key": key("kinds"), "ReturnValues": "ALL_OLD"}),
        ("a table that does not exist", "get_item", {"TableName": "nowhere", "Key": key("kinds")}),
    ]


def _answer(call) -> dict:
    try:
        answer = call()
    except ClientError as error:
        answer = {"raised": type(error).__name__, **error.response}
    answer.pop("ResponseMetadata", None)
    return answer


def _dynamodb_session() -> list[tuple[str, dict]]:
    from moto import mock_aws

    with mock_aws():
        table.reset_client()
        table.create_table()
        ddb = table.client()
        return [
            (what, _answer(lambda: getattr(ddb, op)(**request))) for what, op, request in _dynamodb_calls(table.name())
        ]


def _queue_session() -> list[tuple[str, dict]]:
    """The feed queue's calls (chalicelib/localdev/queue.py, adapters/feed_queue.py); ids and handles are moto's
    random ones, so they are named by their order, and times are the machine's."""
    import boto3
    from moto import mock_aws

    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="feed.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        sent = [
            {"Id": str(n), "MessageBody": f"body {n}", "MessageGroupId": "acme", "MessageDeduplicationId": str(n)}
            for n in range(3)
        ]
        answers = [("send", _answer(lambda: sqs.send_message_batch(QueueUrl=url, Entries=sent)))]
        received = _answer(lambda: sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"]))
        answers.append(("receive", received))
        handles = [{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(received["Messages"])]
        hidden = [{**handle, "VisibilityTimeout": 0} for handle in handles[:1]]
        answers.append(
            ("release one", _answer(lambda: sqs.change_message_visibility_batch(QueueUrl=url, Entries=hidden)))
        )
        answers.append(("delete", _answer(lambda: sqs.delete_message_batch(QueueUrl=url, Entries=handles[1:]))))
        attributes = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        answers.append(("count", _answer(lambda: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=attributes))))
        gone = url.replace("feed.fifo", "gone.fifo")
        answers.append(("a queue that does not exist", _answer(lambda: sqs.receive_message(QueueUrl=gone))))
    return [(what, _named_by_order(answer)) for what, answer in answers]


def _named_by_order(answer, names=None):
    names = {} if names is None else names
    if isinstance(answer, dict):
        return {
            k: "<time>"
            if k in _TIMES
            else names.setdefault(v, f"<{len(names)}>")
            if k in _RANDOM
            else _named_by_order(v, names)
            for k, v in answer.items()
        }
    if isinstance(answer, list):
        return [_named_by_order(v, names) for v in answer]
    return answer


_RANDOM = {"MessageId", "ReceiptHandle", "SequenceNumber"}
_TIMES = {"SentTimestamp", "ApproximateFirstReceiveTimestamp"}  # the machine's milliseconds


@pytest.mark.parametrize(
    "session, refusals",
    [
        (_dynamodb_session, {"put refused", "transaction refused by one item", "put too large", "a bad expression"}),
        (_queue_session, {"a queue that does not exist"}),
    ],
    ids=["dynamodb", "sqs"],
)
def test_every_call_is_answered_as_over_http(session, refusals):
    in_process = session()
    with moto_in_process.over_http():
        over_http = session()
    assert [what for what, _ in in_process] == [what for what, _ in over_http]
    for (what, answer), (_, expected) in zip(in_process, over_http):
        assert answer == expected, what
    assert refusals <= {what for what, answer in in_process if "raised" in answer}


def test_a_hook_a_test_registers_sees_every_call_and_none_goes_over_http(ddb, monkeypatch):
    import boto3
    from moto.core.botocore_stubber import BotocoreStubber

    sent = []
    real = BotocoreStubber.process_request

    def sent_over_http(self, request):  # another test's thread in this worker may still call DynamoDB Local: let it
        if "amazonaws.com" not in request.url:
            return real(self, request)
        sent.append(request.url)

    monkeypatch.setattr(BotocoreStubber, "process_request", sent_over_http)
    seen = []
    ddb.meta.events.register("before-call.dynamodb", lambda model, **_: seen.append(model.name))
    ddb.get_item(TableName=table.name(), Key=key("nothing"))
    ddb.put_item(TableName=table.name(), Item=item("one"))
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = sqs.create_queue(QueueName="feed")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="numbered")
    assert seen == ["GetItem", "PutItem"] and sent == []
    assert ddb.get_item(TableName=table.name(), Key=key("one"))["Item"] == item("one")
    assert [m["Body"] for m in sqs.receive_message(QueueUrl=url)["Messages"]] == ["numbered"]
