"""The feed's record items read and written outside a numbering (docs/deploy.md "Replaying the feed").

The numbering (store/feed_sequencer.py) writes one small item per stream record it numbers, named by the record's
id, in the numbering's own transaction; a record that finds its item is skipped. Here: which of an account's records
have theirs (what a replay reports as numbered before), and writing them without numbering (the upgrade from the
release whose numbering kept none: what it numbered is marked so, and the new forwarder numbers none of it again).
"""

from concurrent.futures import ThreadPoolExecutor

from . import batch, keys, operations, table
from .feed_marks import Marked
from .feed_sequencer import RECORD_KEPT_SECONDS
from .operations import Operation
from .outcomes import Taken

WRITERS = 8  # conditional puts at once: a day's records are marked in minutes, not hours


def numbered(account: str, record_ids: list[str]) -> set[str]:
    """The ids of the records that were numbered (or marked so), by a consistent read of their items."""
    found = batch.get_items([keys.feed_record_key(account, record_id) for record_id in record_ids], consistent=True)
    return {sort_key for _, sort_key in found}


def mark_numbered(account: str, records: list[Marked]) -> set[str]:
    """Write the item of each record that has none, as if it were numbered (it is then never numbered): the ids
    written now. The item is kept as long as the numbering keeps its own, from the record's creation."""
    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        written = pool.map(lambda record: _mark(account, record), records)
        return {record.id for record, done in zip(records, written) if done}


def _mark(account: str, record: Marked) -> bool:
    item = {**keys.feed_record_key(account, record.id), table.TTL_ATTRIBUTE: record.created + RECORD_KEPT_SECONDS}
    put = {"TableName": table.name(), "Item": table.to_item(item), "ConditionExpression": "attribute_not_exists(PK)"}
    return operations.write(Operation({"Put": put}, Taken())) is None  # Taken: numbered before
