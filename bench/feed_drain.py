"""How long the stream's numbering takes to reach an order behind 6000 imported rows, on DynamoDB Local (issue 34).

`python bench/feed_drain.py`: 6000 product items written in transactions of 99 as an import's chunks write them,
each marked with its `product.created` (store/feed_marks.py), then an order's delivery marked `delivery.requested`;
then make run's feeder (localdev/stream.StreamFeeder, batches of up to 1000 records) hands the stream to the
numbering's handler (jobs/handlers.number_changes) until the order is numbered. Prints the seconds and the changes
numbered per second (an import writes about 143 rows a second: numbering must keep ahead of it).
"""

import datetime as dt
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROWS, CHUNK = 6000, 99


def write_changes(account: str, now: dt.datetime) -> None:
    """The rows as an import's chunks write them, then the order: each item with its change's mark."""
    from chalicelib.domain.feed import Change, ChangeType
    from chalicelib.store import keys, table
    from chalicelib.store.unit_of_work import Operation, unit_of_work

    def put(key: dict) -> Operation:
        return Operation({"Put": {"TableName": table.name(), "Item": table.to_item({**key, "name": "row"})}})

    for start in range(0, ROWS, CHUNK):
        ids = [f"p{n}" for n in range(start, min(ROWS, start + CHUNK))]
        with unit_of_work(account, now) as uow:
            uow.add(*(put(keys.product_key(account, pid)) for pid in ids))
            uow.record(*(Change(ChangeType.PRODUCT_CREATED, pid) for pid in ids))
            assert uow.commit() is None
    with unit_of_work(account, now) as uow:
        uow.add(put(keys.delivery_key(account, 1)))
        uow.record(Change(ChangeType.DELIVERY_REQUESTED, "1", "PENDING"))
        assert uow.commit() is None


def main() -> int:
    os.environ.update(
        AWS_ACCESS_KEY_ID="x",
        AWS_SECRET_ACCESS_KEY="x",
        AWS_DEFAULT_REGION="us-east-1",
        TABLE_NAME="drain",
        SIGNING_SECRET="s" * 40,
        POWERTOOLS_LOG_LEVEL="WARNING",
    )
    from chalicelib.localdev import dynamodb_local

    server = dynamodb_local.start()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
    try:
        from bench import harness
        from chalicelib.store import feed, table

        table.create_table()
        write_changes("acme", dt.datetime.now(dt.timezone.utc))
        feeder = harness.numbering_feeder()
        began = time.perf_counter()
        while feed.read_head("acme").sequence < ROWS + 1:
            assert feeder.poll_once(), "the stream ran dry before the order was numbered"
        seconds = time.perf_counter() - began
        print(f"{ROWS + 1} changes numbered from the stream in {seconds:.1f} s ({(ROWS + 1) / seconds:.0f} a second)")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
