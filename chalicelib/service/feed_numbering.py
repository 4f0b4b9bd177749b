"""Use case: give the changes the feed queue hands over their sequences (decisions §13; docs/feed.md "Numbering").

The queue hands over one account's messages at a time, in the order the forwarder sent them
(service/feed_forwarding.py); one numbering of an account runs at a time. A message is done when each of its
records is numbered (now, or before: the store skips a record it numbered already); a message that is not, and every
later message of its account in the same hand-over, go back to the queue, which hands them over again alone, later:
no other account waits for them. A message the numbering cannot read at all is numbered as one `feed.unreadable`
entry of its account, never dropped and never blocking the account.
"""

import datetime as dt
import json
import logging
from dataclasses import dataclass

from ..adapters import feed_queue
from ..store import feed_sequencer
from ..store.feed_marks import Marked, marked_from
from . import clock
from .feed_forwarding import MESSAGE_RECORDS

log = logging.getLogger("supplier-ordering.feed")

MAX_RETRY_PAUSE_SECONDS = 900  # a failing account's messages come back at most this much later (its alarm fires)
TURN_RECORDS = MESSAGE_RECORDS  # an account's turn in a hand-over: at most one full message's records


@dataclass(frozen=True)
class QueueMessage:
    id: str  # the queue's message id (what a partial answer names)
    account: str  # its message group
    body: str
    receive_count: int = 1
    deduplication_id: str = ""
    receipt: str = ""  # what hands it back to the queue


def received(record: dict) -> QueueMessage:
    """A message as the queue's event source hands it over (an SQS record of the Lambda event)."""
    attributes = record.get("attributes") or {}
    return QueueMessage(
        record["messageId"],
        attributes.get("MessageGroupId", ""),
        record.get("body", ""),
        int(attributes.get("ApproximateReceiveCount", 1)),
        attributes.get("MessageDeduplicationId", ""),
        record.get("receiptHandle", ""),
    )


def records_of(message: QueueMessage) -> list[Marked]:
    """The records a message carries; one `unreadable` record standing for a message that cannot be read."""
    try:
        data = json.loads(message.body)
        records = [marked_from(record) for record in data["records"]]
        if all(record.account == message.account for record in records) and records:
            return records
        problem = "records of another account, or none"
    except (ValueError, KeyError, TypeError) as error:
        problem = f"a message that is not the forwarder's ({type(error).__name__})"
    log.error("feed queue message %s of account %s unreadable: %s", message.id, message.account, problem)
    record_id = f"message.{message.deduplication_id or message.id}"
    return [Marked(record_id, message.account, int(clock.now().timestamp()), unreadable=problem)]


def number_messages(messages: list[QueueMessage], deadline: dt.datetime) -> set[str]:
    """Number the messages' records, each account's in their order, the accounts taking turns (a turn numbers an
    account's next messages together, up to one full message's records: an import's backlog in one hand-over holds
    another account's change for one message at most, and an account's many small messages, one per stream shard,
    cost one head read), until `deadline`: the ids of the messages not done, each account's from its first. Those of
    an account whose numbering failed come back after a pause that doubles with each hand-over (up to
    MAX_RETRY_PAUSE_SECONDS); those left for lack of time come back at once."""
    records = {message.id: records_of(message) for message in messages}
    waiting: dict[str, list[QueueMessage]] = {}
    for message in messages:
        waiting.setdefault(message.account, []).append(message)
    failed: list[QueueMessage] = []
    unstarted: list[QueueMessage] = []
    while waiting:
        for account in list(waiting):
            if clock.now() >= deadline:
                unstarted += waiting.pop(account)
                continue
            turn = _turn(waiting[account], records)
            done = _numbered(account, turn, records)
            if done < len(turn):
                failed += waiting.pop(account)[done:]
            elif len(waiting[account]) > len(turn):
                waiting[account] = waiting[account][len(turn) :]
            else:
                del waiting[account]
    pauses = [(m.receipt, min(2 ** (m.receive_count - 1), MAX_RETRY_PAUSE_SECONDS)) for m in failed]
    pauses += [(m.receipt, 0) for m in unstarted]
    if any(receipt for receipt, _ in pauses):
        feed_queue.postpone([pause for pause in pauses if pause[0]])
    return {m.id for m in failed + unstarted}


def _turn(messages: list[QueueMessage], records: dict[str, list[Marked]]) -> list[QueueMessage]:
    turn, size = messages[:1], len(records[messages[0].id])
    for message in messages[1:]:
        size += len(records[message.id])
        if size > TURN_RECORDS:
            break
        turn.append(message)
    return turn


def _numbered(account: str, turn: list[QueueMessage], records: dict[str, list[Marked]]) -> int:
    """How many of the turn's messages, from its first, are numbered."""
    try:
        taken = [record for message in turn for record in records[message.id]]
        outcome = feed_sequencer.number(account, taken, now=clock.now())
    except Exception:  # noqa: BLE001 - one account's failure is its own: logged, retried, never another's
        log.exception("numbering the feed of account %s failed (messages %s)", account, [m.id for m in turn])
        return 0
    done = 0
    for message in turn:
        if not {record.id for record in records[message.id]} <= outcome.done:
            break
        done += 1
    return done
