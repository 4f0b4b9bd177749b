"""`make run`'s feed queue: the SQS FIFO queue of the deploy template (deploy_stream.py), on moto's SQS, and the
event source mapping that hands its messages to the numbering (jobs/handlers.number_changes) as Lambda does.

moto (from PyPI, the tests' engine) is the local SQS with FIFO message groups, deduplication, visibility timeouts and
a dead-letter queue's redrive; it is served in this process, one request at a time, because its queues are not
thread-safe. It keeps its messages in memory: after a kill -9 they are gone, so the stream feeder keeps its place
only past records whose messages were numbered (localdev/stream.py), and forwards the rest again on restart.
"""

import functools
import logging
import threading
from typing import Callable

from ..adapters.feed_queue import MAX_RECEIVES  # the deploy template's redrive too (deploy_stream.py)

log = logging.getLogger("supplier-ordering.queue")

QUEUE, DEAD_LETTERS = "feed.fifo", "feed-dead-letters.fifo"
VISIBILITY_SECONDS = 120  # a hand-over's time: the numbering's budget and more
WORKERS = 2  # hand-overs at once (Lambda takes up to one per message group)
POLL_SECONDS = 1.0  # without a bell, how often the poller looks for messages coming back after their pause
BATCH = 10  # the most a FIFO queue's event source hands over at once


def keep_fifo_order() -> None:
    """Fix moto's FIFO order after a pause (5.2.5 and 5.2.6): when several of a group's messages come back together it
    frees them one at a time while walking the queue, so the group stays locked for the earlier ones and the last is
    handed over alone, first. SQS frees them all; so do we, before each receive. Idempotent."""
    from moto.sqs.models import SQSBackend

    original = SQSBackend.receive_message
    if getattr(original, "keeps_fifo_order", False):
        return

    @functools.wraps(original)
    def receive_message(self, queue_name: str, *args, **kwargs):
        queue = self.get_queue(queue_name)
        for message in [m for m in queue.pending_messages if m.visible]:
            queue.pending_messages.discard(message)
        return original(self, queue_name, *args, **kwargs)

    receive_message.keeps_fifo_order = True
    SQSBackend.receive_message = receive_message


keep_fifo_order()


def serve() -> tuple[str, Callable[[], None]]:
    """moto's SQS on a free port of 127.0.0.1, in a thread of this process: (endpoint, stop)."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    app = DomainDispatcherApplication(create_backend_app)
    server = make_server("127.0.0.1", 0, app, threaded=False, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, name="local-sqs", daemon=True)
    thread.start()
    host, port = server.server_address[:2]

    def stop() -> None:
        server.shutdown()
        thread.join(timeout=5)

    return f"http://{host}:{port}", stop


def create_queues(sqs, name: str = QUEUE) -> str:
    """The feed queue and its dead letters (both FIFO), as the deploy template makes them: the queue's URL."""
    import json

    dead = sqs.create_queue(QueueName=name.replace(".fifo", "-dead-letters.fifo"), Attributes=_fifo())
    dead_arn = sqs.get_queue_attributes(QueueUrl=dead["QueueUrl"], AttributeNames=["QueueArn"])["Attributes"]
    redrive = json.dumps({"deadLetterTargetArn": dead_arn["QueueArn"], "maxReceiveCount": MAX_RECEIVES})
    attributes = {**_fifo(), "VisibilityTimeout": str(VISIBILITY_SECONDS), "RedrivePolicy": redrive}
    return sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]


def _fifo() -> dict:
    return {"FifoQueue": "true", "ContentBasedDeduplication": "false", "MessageRetentionPeriod": "1209600"}


def _as_lambda_record(message: dict) -> dict:
    """A ReceiveMessage message as Lambda's SQS event hands it over."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": {},
        "eventSource": "aws:sqs",
    }


class QueuePoller:
    """The numbering's event source mapping: it receives up to BATCH messages (the FIFO queue gives one group's
    messages to one receiver at a time, in order), hands them to `handler` as a Lambda SQS event, deletes those the
    answer does not name as failed, and tells `numbered` the bodies it deleted. A failed message stays: the
    numbering already set its pause, after which the queue hands it over again."""

    def __init__(self, sqs, queue_url: str, handler: Callable[[dict], dict], numbered=None):
        self.sqs, self.queue_url, self.handler = sqs, queue_url, handler
        self.numbered = numbered or (lambda bodies: None)

    def poll_once(self) -> int:
        """One hand-over: how many messages it held."""
        messages = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=BATCH, AttributeNames=["All"], WaitTimeSeconds=0
        ).get("Messages", [])
        if not messages:
            return 0
        try:
            answer = self.handler({"Records": [_as_lambda_record(message) for message in messages]}) or {}
            failed = {item["itemIdentifier"] for item in answer.get("batchItemFailures", [])}
        except Exception:  # noqa: BLE001 - the whole hand-over failed: every message comes back
            log.exception("the feed queue's hand-over failed")
            return len(messages)
        done = [message for message in messages if message["MessageId"] not in failed]
        for start in range(0, len(done), BATCH):
            entries = [
                {"Id": str(index), "ReceiptHandle": message["ReceiptHandle"]}
                for index, message in enumerate(done[start : start + BATCH])
            ]
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=entries)
        self.numbered([message["Body"] for message in done])
        return len(messages)

    def drain(self, rounds: int = 1000) -> int:
        """Hand over until the queue has nothing visible (tests): how many messages were handed over."""
        handed = 0
        for _ in range(rounds):
            count = self.poll_once()
            if not count:
                break
            handed += count
        return handed

    def run_forever(self, stop_event: threading.Event, bell=None) -> None:
        """WORKERS hand-overs at once until `stop_event`: each worker receives again at once after a hand-over,
        else waits for the `bell` (the forwarder sent something) or POLL_SECONDS."""
        workers = [
            threading.Thread(
                target=functools.partial(self._work, stop_event, bell), name=f"feed-queue-{n}", daemon=True
            )
            for n in range(WORKERS)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    def _work(self, stop_event: threading.Event, bell) -> None:
        while not stop_event.is_set():
            try:
                if self.poll_once():
                    continue
            except Exception:  # noqa: BLE001 - the loop must survive a hiccup of the local queue
                log.exception("reading the feed queue failed; trying again")
            if bell is not None:
                bell.wait(POLL_SECONDS)
            else:
                stop_event.wait(POLL_SECONDS)
