"""The feed queue: an SQS FIFO queue with one message group per account (docs/feed.md).

The stream's forwarder sends each account's records here, in the stream's order; the numbering takes one group's
messages at a time, in order, groups side by side (the Lambda event source mapping in AWS, make run's poller in
localdev/queue.py). A group whose numbering fails is handed over again alone, later; no other account waits for it.

FEED_QUEUE_URL names the queue (the deploy template sets it; make run and the tests make their own queue on a local
SQS). The client is made on first use: boto3 takes AWS_ENDPOINT_URL_SQS for a local endpoint itself.
"""

import hashlib
import os
import threading
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

from .. import config

MAX_MESSAGE_BYTES = 200_000  # under SQS's 256 KiB with room for the attributes
SEND_BATCH = 10  # SendMessageBatch's most
# The queue's redrive (the deploy template's and make run's): a message the numbering keeps failing goes to the dead
# letters after this many hand-overs, days later with the numbering's pauses doubling up to 15 minutes.
MAX_RECEIVES = 400
_client = None
_lock = threading.Lock()


def client():
    global _client
    if _client is None:
        with _lock:
            if _client is None:
                _client = config.aws_client("sqs")
    return _client


def reset_client() -> None:
    global _client
    _client = None


def queue_url() -> str:
    url = os.environ.get("FEED_QUEUE_URL")
    if not url:
        raise RuntimeError("FEED_QUEUE_URL is not set: the stream's forwarder has no feed queue")
    return url


@dataclass(frozen=True)
class Message:
    group: str  # the account
    body: str  # what the numbering reads (JSON)
    deduplication_id: str  # the same message sent again within SQS's 5 minutes is taken once


def message(group: str, body: str, record_ids: list[str]) -> Message:
    return Message(group, body, hashlib.sha256("\n".join(record_ids).encode()).hexdigest())


def send_in_order(messages_by_group: dict[str, list[Message]]) -> dict[str, int]:
    """Send each group's messages in their order: how many of each group's were sent (all, or up to the first
    that failed: none after a failed one is sent, so a group's order holds when the rest is sent again). Groups
    go together, ten messages a request, one message of a group in each."""
    sent = {group: 0 for group in messages_by_group}
    waiting = {group: list(found) for group, found in messages_by_group.items() if found}
    while waiting:
        rounds = [(group, found[0]) for group, found in waiting.items()]
        for start in range(0, len(rounds), SEND_BATCH):
            chunk = rounds[start : start + SEND_BATCH]
            entries = [
                {
                    "Id": str(index),
                    "MessageBody": sent_message.body,
                    "MessageGroupId": group,
                    "MessageDeduplicationId": sent_message.deduplication_id,
                }
                for index, (group, sent_message) in enumerate(chunk)
            ]
            try:
                answer = client().send_message_batch(QueueUrl=queue_url(), Entries=entries)
                failed = {int(entry["Id"]) for entry in answer.get("Failed", [])}
            except (ClientError, BotoCoreError):
                failed = set(range(len(chunk)))
            for index, (group, _) in enumerate(chunk):
                if index in failed:
                    del waiting[group]
                    continue
                sent[group] += 1
                waiting[group].pop(0)
                if not waiting[group]:
                    del waiting[group]
    return sent


def postpone(receipts: list[tuple[str, int]]) -> None:
    """Hand messages over again after the given seconds each (a failed numbering backs off); best effort: without
    it they come back after the queue's visibility timeout."""
    for start in range(0, len(receipts), SEND_BATCH):
        entries = [
            {"Id": str(index), "ReceiptHandle": receipt, "VisibilityTimeout": seconds}
            for index, (receipt, seconds) in enumerate(receipts[start : start + SEND_BATCH])
        ]
        try:
            client().change_message_visibility_batch(QueueUrl=queue_url(), Entries=entries)
        except (ClientError, BotoCoreError):
            return
