"""Fixtures of the background-job tests."""
import threading

import pytest


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
