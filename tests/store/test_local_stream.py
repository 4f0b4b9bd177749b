"""Issue 34: `make run`'s stream feeder reads DynamoDB Local's table stream and hands batches to the stream
Lambda's handler, retrying from the first failed record as the event source mapping does."""

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.localdev import stream
from chalicelib.service import clock
from chalicelib.store import feed, table
from tests.transactions import record_changes

pytestmark = pytest.mark.pending_feed


@pytest.fixture
def local_table(request, monkeypatch):
    import uuid

    server = request.getfixturevalue("dynamodb_local_server")

    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.endpoint)
    monkeypatch.setenv("TABLE_NAME", f"stream-test-{uuid.uuid4().hex[:12]}")
    table.reset_client()
    table.create_table()
    yield
    table.client().delete_table(TableName=table.name())
    table.reset_client()


def Feeder(handler=None) -> stream.StreamFeeder:
    built = stream.feeder()
    if handler is not None:
        built.handler = handler
    return built


def test_a_write_reaches_the_stream_handler_which_numbers_it(local_table):
    feeder = Feeder()
    feeder.poll_once()  # opens the shards at their end
    record_changes("acme", [Change(ChangeType.CATEGORY_CREATED, "mine")], clock.now())
    assert feeder.poll_once() >= 1
    assert feed.read_head("acme").sequence == 1


def test_a_batch_with_failed_records_is_retried_from_the_first_failed_one_then_given_up(local_table):
    seen = []

    def handler(event):
        numbers = [record["dynamodb"]["SequenceNumber"] for record in event["Records"]]
        seen.append(numbers)
        return {"batchItemFailures": [{"itemIdentifier": numbers[-1]}]}

    feeder = Feeder(handler)
    feeder.poll_once()
    for n in range(3):
        record_changes("acme", [Change(ChangeType.CATEGORY_CREATED, f"c{n}")], clock.now())
    feeder.poll_once()
    assert len(seen[0]) == 3
    assert seen[1:] == [[seen[0][-1]]] * stream.RETRIES
