"""Tests that step into a transaction on its way to DynamoDB: record it, refuse it, or hold an item of it."""

from typing import Callable

from botocore.exceptions import ClientError

from chalicelib.store import table


def cancelled(codes: list[str], message: str = "cancelled") -> ClientError:
    """A TransactWriteItems cancelled with these per-item codes, as DynamoDB raises it."""
    reasons = [{"Code": code} for code in codes]
    return ClientError(
        {"Error": {"Code": "TransactionCanceledException", "Message": message}, "CancellationReasons": reasons},
        "TransactWriteItems",
    )


def condition_failed(operation: str = "PutItem") -> ClientError:
    """A single write (PutItem, UpdateItem, DeleteItem) whose condition failed, as DynamoDB raises it."""
    return ClientError({"Error": {"Code": "ConditionalCheckFailedException", "Message": "failed"}}, operation)


def intercept(monkeypatch, transact: Callable[..., dict], operation: str = "transact_write_items"):
    """Until the monkeypatch is undone, table.client() is the real client but for `operation` (transact_write_items
    unless named), which calls `transact(send, **request)`: `send(**request)` sends it for real. Answers the real
    client."""
    real = table.client()

    class Intercepted:
        _real = real  # the client it stands in for (tests/stream.py keys its feeders by it)

        def __getattr__(self, name):
            attribute = getattr(real, name)
            if name != operation:
                return attribute
            return lambda **request: transact(attribute, **request)

    monkeypatch.setattr(table, "client", lambda: Intercepted())
    return real


_records = iter(range(10**20, 10**21))  # the sequence numbers of the records record_changes hands over


def record_changes(account: str, changes: list, now) -> None:
    """`changes` alone, as the table's stream shows a commit that marked them (store/feed_marks.py) and hands it
    to the numbering: one record of the tests' own, whose resources need not exist."""
    from chalicelib.store import feed_marks, feed_sequencer

    said = [feed_marks.said(change, now) for change in changes]
    record = feed_marks.Marked(str(next(_records)), account, int(now.timestamp()), said)
    assert feed_sequencer.number(account, [record]).done == {record.id}
