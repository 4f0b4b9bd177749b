"""How long numbering takes to reach an order behind 6000 pending import rows, on DynamoDB Local (issue 34).

`python bench/feed_drain.py <tree>`: the tree to measure (this checkout, or an export of an earlier commit).
"""

import datetime as dt
import os
import sys
import time

sys.path.insert(0, sys.argv[1])
os.environ.update(
    AWS_ACCESS_KEY_ID="x",
    AWS_SECRET_ACCESS_KEY="x",
    AWS_DEFAULT_REGION="us-east-1",
    TABLE_NAME="drain",
    SIGNING_SECRET="s" * 40,
)
from chalicelib.localdev import dynamodb_local

server = dynamodb_local.start()
os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
try:
    from chalicelib.domain.feed import Change, ChangeType
    from chalicelib.service import clock
    from chalicelib.service import feed_numbering as numbering
    from chalicelib.store import feed, table

    table.create_table()
    now = dt.datetime.now(dt.timezone.utc)

    def record_changes(account, changes, now):
        """Pending entries alone, as a write records them (in a tree from before the unit of work: feed.commit)."""
        try:
            from chalicelib.store.unit_of_work import unit_of_work
        except ImportError:
            feed.commit(account, [], changes, now)
            return
        with unit_of_work(account, now) as uow:
            uow.record(*changes)
            uow.commit()

    for start in range(0, 6000, 99):
        record_changes(
            "acme", [Change(ChangeType.PRODUCT_CREATED, f"p{n}") for n in range(start, min(6000, start + 99))], now
        )
    record_changes("acme", [Change(ChangeType.DELIVERY_REQUESTED, "1", "PENDING")], now)
    began = time.perf_counter()
    while feed.read_head("acme").sequence < 6001:
        numbering.number_accounts(["acme"], clock.after(30))
    print(f"{sys.argv[1]}: 6001 changes numbered in {time.perf_counter() - began:.1f} s")
finally:
    server.stop()
