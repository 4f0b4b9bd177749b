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


def intercept(monkeypatch, transact: Callable[..., dict], operation: str = "transact_write_items"):
    """Until the monkeypatch is undone, table.client() is the real client but for `operation` (transact_write_items
    unless named), which calls `transact(send, **request)`: `send(**request)` sends it for real. Answers the real
    client."""
    real = table.client()

    class Intercepted:
        def __getattr__(self, name):
            attribute = getattr(real, name)
            if name != operation:
                return attribute
            return lambda **request: transact(attribute, **request)

    monkeypatch.setattr(table, "client", lambda: Intercepted())
    return real


def record_changes(account: str, changes: list, now) -> None:
    """The pending entries of `changes` alone, written in one unit of work as a service's write records them."""
    from chalicelib.store.unit_of_work import unit_of_work

    with unit_of_work(account, now) as uow:
        uow.record(*changes)
        assert uow.commit() is None
