"""Use case: forward the changes a stream batch shows to the feed queue, each account's to its own message group
(decisions §13; docs/feed.md "Numbering").

The table stream hands one shard's records at a time to jobs/handlers.forward_changes, in AWS as with `make run`.
Forwarding holds no account's fate: it reads the marks (store/feed_marks.py, pure but for the key), packs each
account's records in the stream's order into messages, and sends them; a record it cannot read goes on as
`unreadable`, to be numbered as an entry that says so. Only the queue refusing a message fails a record: the
stream hands the batch over again from there, and the queue's deduplication (five minutes) and the numbering's
record ids (ever after) keep what was sent already from being numbered twice.
"""

import datetime as dt
import json

from ..adapters import feed_queue
from ..store import feed_marks
from ..store.feed_marks import Marked

# At most per message, beside the queue's size bound: an account's turn when one hand-over holds several accounts
# (service/feed_numbering.py), about four numbering transactions.
MESSAGE_RECORDS = 200


def records_marked(records) -> list[tuple[str, Marked]]:
    """(the record's sequence number, its changes) of every record that makes changes, in the batch's order:
    `records` are Chalice DynamoDBRecords."""
    found = []
    for record in records:
        created = record.timestamp.replace(tzinfo=dt.timezone.utc)
        shown = feed_marks.record_of(
            record.event_name, record.keys, record.new_image, record.old_image, created, record.event_id
        )
        if shown is not None:
            found.append((record.sequence_number, Marked(**{**shown.as_json(), "seq": record.sequence_number})))
    return found


def _messages(account: str, records: list[Marked]) -> list[tuple[feed_queue.Message, list[str]]]:
    """The account's records packed in order into messages of the queue's size: (message, their sequence
    numbers)."""
    packed, current, size = [], [], 0
    for record in records:
        text = json.dumps(record.as_json(), separators=(",", ":"))
        if current and (size + len(text) > feed_queue.MAX_MESSAGE_BYTES or len(current) >= MESSAGE_RECORDS):
            packed.append(current)
            current, size = [], 0
        current.append((record, text))
        size += len(text) + 1
    if current:
        packed.append(current)
    return [
        (
            feed_queue.message(
                account,
                '{"account":' + json.dumps(account) + ',"records":[' + ",".join(text for _, text in chunk) + "]}",
                [record.id for record, _ in chunk],
            ),
            [record.seq for record, _ in chunk],
        )
        for chunk in packed
    ]


def forward(records) -> set[str]:
    """Send the batch's changes to the feed queue: the sequence numbers of the records not sent (each account's
    records from its first message the queue refused on; the stream hands them over again)."""
    by_account: dict[str, list[Marked]] = {}
    for _, record in records_marked(records):
        by_account.setdefault(record.account, []).append(record)
    planned = {account: _messages(account, found) for account, found in by_account.items()}
    sent = feed_queue.send_in_order({account: [m for m, _ in messages] for account, messages in planned.items()})
    return {seq for account, messages in planned.items() for _, seqs in messages[sent[account] :] for seq in seqs}
