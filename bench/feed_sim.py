"""The feed's engine driven as AWS drives it, for bench/feed_scale.py: writes that mark their changes, the table's
stream read once and split into simulated shards, forwarders handing each shard's batches over in order, the feed
queue's pollers numbering them (make run's, localdev/queue.py), and a check of what the feed then holds.

Nothing here changes the engine: the forwarder is jobs/handlers.forward_changes, the numbering
jobs/handlers.number_changes, the queue moto's SQS served in this process (bench/harness.py).
"""

import contextlib
import datetime as dt
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field

from bench import harness

FORWARD_BATCH = 1000  # the forwarder mapping's batch size (jobs/triggers.table_feed)


@contextlib.contextmanager
def dynamodb_local(table_name: str):
    """A DynamoDB Local of its own with the service's table: each part of the bench starts fresh, because DynamoDB
    Local 3.x writes a table made after another holds ~20,000 items some 30 times slower (measured here)."""
    import os

    from chalicelib.localdev import dynamodb_local as local
    from chalicelib.store import table

    server = local.start()
    os.environ.update(AWS_ENDPOINT_URL_DYNAMODB=server.endpoint, TABLE_NAME=table_name)
    table.reset_client()
    try:
        table.create_table()
        yield
    finally:
        server.stop()


def write_changes(account: str, categories: int, rounds: int, per_unit: int, first: int = 0) -> dict[str, list[str]]:
    """`rounds` changes of each of `categories` categories (created, then renamed), `per_unit` in one unit of work
    as the service writes them (store/categories.py's operations, store/unit_of_work.py's marks). Per category, the
    units of its changes in the order they committed (what per-resource order is checked against)."""
    from chalicelib.domain.feed import Change, ChangeType
    from chalicelib.store import categories as store
    from chalicelib.store.unit_of_work import unit_of_work

    written: dict[str, list[str]] = {}
    ids = [f"c{n:05d}" for n in range(first, first + categories)]
    for round_ in range(rounds):
        for start in range(0, len(ids), per_unit):
            chunk = ids[start : start + per_unit]
            with unit_of_work(account, dt.datetime.now(dt.timezone.utc)) as uow:
                for cid in chunk:
                    build = store.creating if round_ == 0 else store.renaming
                    uow.add(build(account, cid, f"{cid} {round_}"))
                    kind = ChangeType.CATEGORY_CREATED if round_ == 0 else ChangeType.CATEGORY_UPDATED
                    uow.record(Change(kind, cid))
                assert uow.commit() is None
                for cid in chunk:
                    written.setdefault(cid, []).append(uow.unit)
    return written


class StreamRecords:
    """The table's stream read by make run's feeder, each batch kept (not forwarded): Lambda's records, in order."""

    def __init__(self):
        self.records: list[dict] = []
        self.feeder = harness.stream_feeder(self._keep)

    def _keep(self, event: dict) -> dict:
        self.records.extend(event["Records"])
        return {"batchItemFailures": []}

    def marked(self) -> int:
        """How many of the records read make changes (what the forwarder sends on)."""
        from chalice.app import DynamoDBEvent

        from chalicelib.service.feed_forwarding import marked

        return len(marked(DynamoDBEvent({"Records": self.records}, None)))

    def read(self) -> list[dict]:
        """The records the stream added since the last read."""
        before = len(self.records)
        harness.drain(self.feeder)
        return self.records[before:]


def of_account(records: list[dict], account: str) -> list[dict]:
    """The records of the account's items (store/keys.py: its partitions are `A#<account>` and `A#<account>#...`)."""
    pk = f"A#{account}"
    return [r for r in records if (r["dynamodb"]["Keys"]["PK"]["S"] + "#").startswith(pk + "#")]


def shard_of(record: dict, shards: int) -> int:
    """A simulated shard: by the item's key, as DynamoDB spreads items over partitions (one item's records in one
    shard, in order)."""
    key = record["dynamodb"]["Keys"]
    digest = hashlib.blake2b(f"{key['PK']['S']}\n{key['SK']['S']}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


def split(records: list[dict], shards: int) -> list[list[dict]]:
    found: list[list[dict]] = [[] for _ in range(shards)]
    for record in records:
        found[shard_of(record, shards)].append(record)
    return [shard for shard in found if shard]


@dataclass
class Counts:
    """What the numbering's hand-overs did: messages handed over, handed back (failed), records numbered."""

    handed: int = 0
    failed: int = 0
    records_done: int = 0
    records_handed: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class Numbering:
    """The feed queue's poller (make run's: localdev/queue.QueuePoller, WORKERS hand-overs at once) on a queue of its
    own, counting what each hand-over numbered; started with `start`, stopped with `stop`."""

    def __init__(self, queue_name: str, numbered=None):
        from chalicelib.adapters import feed_queue
        from chalicelib.localdev import queue

        self.queue_url = harness.feed_queue(queue_name)
        self.counts = Counts()
        self.poller = queue.QueuePoller(feed_queue.client(), self.queue_url, self._number, numbered)
        self.thread: threading.Thread | None = None
        self._bells()

    def _bells(self) -> None:
        from chalicelib.jobs.wakeups import Bell

        self.stop_event = threading.Event()
        self.bell = Bell(self.stop_event)

    def _number(self, event: dict) -> dict:
        answer = harness.number(event)
        failed = {item["itemIdentifier"] for item in answer.get("batchItemFailures", [])}
        with self.counts.lock:
            for message in event["Records"]:
                records = len(json.loads(message["body"])["records"])
                self.counts.handed += 1
                self.counts.records_handed += records
                if message["messageId"] in failed:
                    self.counts.failed += 1
                else:
                    self.counts.records_done += records
        return answer

    def start(self) -> "Numbering":
        """The poller's workers in a thread (again after `stop`)."""
        if self.stop_event.is_set():
            self._bells()
        self.thread = threading.Thread(target=self.poller.run_forever, args=(self.stop_event, self.bell), daemon=True)
        self.thread.start()
        return self

    def wait_for(self, records: int, timeout: float) -> bool:
        """Until `records` records were numbered (True) or `timeout` seconds passed."""
        ends = time.perf_counter() + timeout
        while self.counts.records_done < records:
            if time.perf_counter() > ends:
                return False
            time.sleep(0.01)
        return True

    def stop(self) -> None:
        self.stop_event.set()
        self.bell.ring()
        if self.thread is not None:
            self.thread.join(timeout=30)

    def dead_letters(self) -> int:
        from chalicelib.adapters import feed_queue

        dead = self.queue_url.replace(".fifo", "-dead-letters.fifo")
        found = feed_queue.client().get_queue_attributes(QueueUrl=dead, AttributeNames=["ApproximateNumberOfMessages"])
        return int(found["Attributes"]["ApproximateNumberOfMessages"])


def forward_shard(batches: list[list[dict]], bell, retries: list[int]) -> None:
    """One shard's batches handed to the forwarder in order; a batch the queue refused in part is handed over again
    from its first refused record, as the mapping does."""
    for batch in batches:
        while True:
            answer = harness.forward({"Records": batch})
            failed = {item["itemIdentifier"] for item in answer.get("batchItemFailures", [])}
            if not failed:
                break
            retries.append(1)
            batch = batch[next(i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] in failed) :]
        bell.ring()


def forward_shards(shards: list[list[dict]], bell) -> int:
    """Every shard's records forwarded by a thread of its own, each shard's in order, all at once: batches the queue
    refused and were handed over again."""
    retries: list[int] = []
    threads = [
        threading.Thread(
            target=forward_shard,
            args=([shard[i : i + FORWARD_BATCH] for i in range(0, len(shard), FORWARD_BATCH)], bell, retries),
        )
        for shard in shards
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(retries)


def head_bytes(account: str) -> int:
    """The feed head item's size as DynamoDB counts it (bench/capacity.py)."""
    from bench import capacity
    from chalicelib.store import keys, table

    found = table.client().get_item(
        TableName=table.name(), Key=table.to_item(keys.feed_head_key(account)), ConsistentRead=True
    )
    return capacity.item_size(found.get("Item"))


def entries_of(account: str) -> list[dict]:
    from chalicelib.store import keys, table

    found, start = [], None
    while True:
        asked = {"ExclusiveStartKey": start} if start else {}
        page = table.client().query(
            TableName=table.name(),
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues=table.values(pk=keys.feed_pk(account)),
            ConsistentRead=True,
            **asked,
        )
        found += [table.from_item(item) for item in page.get("Items", [])]
        start = page.get("LastEvaluatedKey")
        if not start:
            return found


def check(account: str, written: dict[str, list[str]]) -> dict:
    """What the account's feed holds against what was written: every change once (by its unit and resource),
    sequences 1..n without a gap, and each resource's changes in the order they committed."""
    from chalicelib.store import feed

    entries = entries_of(account)
    sequences = [int(e["sequence"]) for e in entries]
    seen: dict[tuple[str, str], int] = {}
    order: dict[str, list[str]] = {}
    for entry in entries:
        seen[(entry["unit"], entry["id"])] = seen.get((entry["unit"], entry["id"]), 0) + 1
        order.setdefault(entry["id"], []).append(entry["unit"])
    expected = {(unit, cid) for cid, units in written.items() for unit in units}
    return {
        "changes": len(expected),
        "entries": len(entries),
        "missing": len(expected - set(seen)),
        "doubled": sum(count - 1 for count in seen.values()),
        "gaps": len(set(range(1, max(sequences, default=0) + 1)) - set(sequences)),
        "out_of_order": sum(order.get(cid, []) != units for cid, units in written.items()),
        "head": feed.read_head(account).sequence,
    }


def faultless(found: dict) -> bool:
    return (
        found["missing"] == found["doubled"] == found["gaps"] == found["out_of_order"] == 0
        and found["entries"] == found["changes"] == found["head"]
    )
