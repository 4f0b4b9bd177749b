"""make run's feed queue keeps a message group's order after a pause, as SQS does (localdev/queue.keep_fifo_order):
the numbering postpones a failed account's messages together, and they must come back first to last."""

import boto3
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.sqs.models import sqs_backends

from chalicelib.localdev import queue as local_queue


def test_a_groups_messages_back_from_a_pause_come_in_their_order():
    with mock_aws():
        sqs = boto3.client("sqs", region_name="eu-central-1")
        url = local_queue.create_queues(sqs, "order-check.fifo")
        for body in ("M1", "M2", "M3"):
            sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="acct", MessageDeduplicationId=body)
        first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        assert [m["Body"] for m in first] == ["M1", "M2", "M3"]
        for message in first:  # the numbering's postpone
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=60)
        _pause_passes("order-check.fifo")
        again = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        assert [m["Body"] for m in again] == ["M1", "M2", "M3"]


def test_a_group_with_a_message_still_in_flight_hands_nothing_over():
    with mock_aws():
        sqs = boto3.client("sqs", region_name="eu-central-1")
        url = local_queue.create_queues(sqs, "locked-check.fifo")
        for body in ("M1", "M2"):
            sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="acct", MessageDeduplicationId=body)
        first = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=first[0]["ReceiptHandle"], VisibilityTimeout=60)
        _pause_passes("locked-check.fifo", only="M1")
        assert sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []) == []


def _pause_passes(queue_name: str, only: str | None = None) -> None:
    """The postponed messages' pause ends, without waiting for it: moto compares visible_at with the wall clock."""
    queue = sqs_backends[DEFAULT_ACCOUNT_ID]["eu-central-1"].queues[queue_name]
    for message in queue._messages:
        if only is None or message.body == only:
            message.visible_at = 0
