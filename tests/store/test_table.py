"""store/table.py: a cancelled transaction's reasons by item, and a claim that kept being let go is Contended."""

from botocore.exceptions import ClientError

from chalicelib.store import idempotency, outcomes, table

PUT = {"Put": {"TableName": "t", "Item": table.to_item({"PK": "A#1", "SK": "X", "name": "n"})}}
UPDATE = {
    "Update": {"TableName": "t", "Key": table.to_item({"PK": "A#1", "SK": "Y"}), "UpdateExpression": "SET a = :a"}
}
CHECK = {
    "ConditionCheck": {"TableName": "t", "Key": table.to_item({"PK": "A#2", "SK": "Z"}), "ConditionExpression": "c"}
}


def cancelled(*codes: str, message: str = "cancelled") -> ClientError:
    response = {"Error": {"Code": "TransactionCanceledException", "Message": message}}
    if codes:
        response["CancellationReasons"] = [{"Code": code} for code in codes]
    return ClientError(response, "TransactWriteItems")


def test_reasons_are_answered_by_each_operations_item():
    reasons = table.cancellation_reasons(cancelled("None", "ConditionalCheckFailed", "None"), [PUT, UPDATE, CHECK])
    assert reasons == {("A#1", "X"): "None", ("A#1", "Y"): table.CONDITION_FAILED, ("A#2", "Z"): "None"}
    assert reasons[table.key_of({"PK": "A#1", "SK": "Y"})] == table.CONDITION_FAILED


def test_reasons_of_items_someone_else_appended_are_left_out():
    """store/feed.py puts its own items after the caller's: the caller asks only about its own."""
    reasons = table.cancellation_reasons(cancelled("None", "TransactionConflict", "ConditionalCheckFailed"), [PUT])
    assert reasons == {("A#1", "X"): "None"}


def test_reasons_only_in_the_message_are_read_too():
    error = cancelled(message="Transaction cancelled, please refer ... [ConditionalCheckFailed, None]")
    assert table.cancellation_reasons(error, [PUT, CHECK]) == {
        ("A#1", "X"): table.CONDITION_FAILED,
        ("A#2", "Z"): "None",
    }


def test_another_error_has_no_reasons():
    error = ClientError({"Error": {"Code": "ValidationException", "Message": "bad"}}, "TransactWriteItems")
    assert table.cancellation_reasons(error, [PUT]) == {}


class LetGoEachTime:
    """A key whose holder lets it go between our conditional put and our read, every time."""

    def put_item(self, **request):
        raise ClientError({"Error": {"Code": "ConditionalCheckFailedException", "Message": "held"}}, "PutItem")

    def get_item(self, **request):
        return {}


def test_a_key_let_go_between_put_and_read_again_and_again_is_contended(monkeypatch):
    monkeypatch.setattr(table, "client", LetGoEachTime)
    monkeypatch.setattr(table, "name", lambda: "t")
    assert idempotency.claim("acme", "SUPPLIER", "k-1", "f" * 64, 1_800_000_000) == outcomes.Contended()
