"""Fixtures of the background-job tests."""

import threading

import pytest

from .support import local_receivers  # noqa: F401 - a fixture


@pytest.fixture(autouse=True)
def receivers_on_loopback(local_receivers):
    """Every job test may send to loopback."""


@pytest.fixture(autouse=True)
def configured_timeout(monkeypatch):
    """chalice.test's Client gives every invocation a context with 3 s to live; Lambda gives the function's
    configured timeout, which the handlers then read from it."""
    from chalicelib.jobs import handlers

    monkeypatch.setattr(handlers, "_remaining_seconds", lambda event: None)


@pytest.fixture
def serialized_moto(monkeypatch):
    """Real DynamoDB applies one conditional write at a time per item; moto does not lock, so give it that."""
    from moto.dynamodb.models import DynamoDBBackend

    lock = threading.Lock()
    original = DynamoDBBackend.update_item

    def update_item(self, *args, **kwargs):
        with lock:
            return original(self, *args, **kwargs)

    monkeypatch.setattr(DynamoDBBackend, "update_item", update_item)
