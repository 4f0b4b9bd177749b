"""The feed's and the background work's resources in the deploy template (deploy_template.py merges them): the feed
queue and its dead letters, the event sources of the three functions that move changes, the queue that takes the
stream batches given up on, and the alarms. docs/deploy.md says how they run and what to do when an alarm fires.

TableFeed (jobs/triggers.forward_changes) forwards the stream's marked records to the feed queue, each account's to
its own message group; FeedNumbering (jobs/triggers.number_changes) numbers them, one account's at a time; TableStream
(jobs/triggers.on_table_change) sends events and starts images and imports.
"""

from .adapters.feed_queue import MAX_RECEIVES
from .jobs.budget import LAMBDA_TIMEOUT_SECONDS

# The functions by logical id (Chalice's names of jobs/triggers.py's): the forwarder, the numbering, the rest.
FEED_FUNCTION, NUMBERING_FUNCTION, STREAM_FUNCTION = "TableFeed", "FeedNumbering", "TableStream"
FEED_QUEUE, FEED_DEAD_LETTERS = "FeedQueue", "FeedDeadLetters"
FEED_QUEUE_ARN = {"Fn::GetAtt": [FEED_QUEUE, "Arn"]}
FEED_QUEUE_URL = {"Ref": FEED_QUEUE}
FEED_DEAD_LETTERS_ARN = {"Fn::GetAtt": [FEED_DEAD_LETTERS, "Arn"]}
STREAM_PARALLELIZATION = 10  # the most Lambda allows
QUEUE_RETENTION_SECONDS = 14 * 86400  # SQS's most
# Lambda's advice for a queue's event source: six times the function's timeout, so a message is not handed to a
# second numbering while a retried first one still runs.
FEED_VISIBILITY_SECONDS = 6 * LAMBDA_TIMEOUT_SECONDS
# Numberings at once (each one account's messages). It bounds the numbering's DynamoDB writes: an account is numbered
# by one at a time, at most ~500 changes a second (its entries share a partition key: 1,000 units a second, two a
# transactional write), each change at most 6 units (its entry, record item and event, in a transaction), so 10 write
# at most ~30,000 units a second, under the 40,000 a table takes by default, and leave the API the rest. Reserved, the
# same 10 are always there for it however busy the API's functions are (and the event source never starts more than
# the function may run: a throttled hand-over would count towards the dead letters).
NUMBERING_CONCURRENCY = 10
# A table_stream batch whose work keeps failing is retried this often (halved each time, only from its first failed
# record), then its description goes to the on-failure queue and the shard moves on; the one-minute schedule sends
# the events and takes the images and imports it held. Without a limit a poison batch would hold its shard for the
# stream's 24 hours.
STREAM_RETRIES = 5
STREAM_RECORD_AGE_SECONDS = 3600  # a record older than this goes to the on-failure queue, whatever the bisections
BEHIND_SECONDS = 60  # a function's records, or the feed queue's oldest message, waiting longer than this alarm
STREAM_FAILURES = "StreamFailures"  # logical id of the on-failure destination (SQS) of both stream functions
STREAM_FAILURES_ARN = {"Fn::GetAtt": [STREAM_FAILURES, "Arn"]}
ON_FAILURE = {"OnFailure": {"Type": "SQS", "Destination": STREAM_FAILURES_ARN}}


def _stream_source(function: str, stream_arn: dict, **settings) -> dict:
    """A stream function's event source: the table's stream, each record whose work failed answered by the handler
    (jobs/handlers.py), a batch given up on described in the on-failure queue."""
    properties = {
        "Stream": stream_arn,
        **settings,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "DestinationConfig": ON_FAILURE,
    }
    return {"Properties": {"Events": {f"{function}DynamodbEventSource": {"Properties": properties}}}}


def _with_feed_queue(function: dict) -> dict:
    """A function's resource with the feed queue's URL in its environment (FEED_QUEUE_URL, adapters/feed_queue.py)."""
    function["Properties"]["Environment"] = {"Variables": {"FEED_QUEUE_URL": FEED_QUEUE_URL}}
    return function


def _fifo_queue(**properties) -> dict:
    return {
        "Type": "AWS::SQS::Queue",
        "Properties": {
            "FifoQueue": True,
            "MessageRetentionPeriod": QUEUE_RETENTION_SECONDS,
            "SqsManagedSseEnabled": True,
            **properties,
        },
    }


def _alarm(description: str, namespace: str, metric: str, dimension: tuple[str, dict], threshold: int) -> dict:
    return {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "AlarmDescription": description,
            "Namespace": namespace,
            "MetricName": metric,
            "Dimensions": [{"Name": dimension[0], "Value": dimension[1]}],
            "Statistic": "Maximum",
            "Period": 60,
            "EvaluationPeriods": 1,
            "Threshold": threshold,
            "ComparisonOperator": "GreaterThanThreshold",
            "TreatMissingData": "notBreaching",
        },
    }


def _iterator_age_alarm(function: str, late: str, minutes: int) -> dict:
    """The function's records waited over a minute, `minutes` minutes in a row."""
    alarm = _alarm(
        f"The table stream's {function} function is behind, its oldest record waited over a minute: {late}. Read "
        "the function's logs (docs/deploy.md).",
        "AWS/Lambda",
        "IteratorAge",
        ("FunctionName", {"Ref": function}),
        BEHIND_SECONDS * 1000,
    )
    alarm["Properties"]["EvaluationPeriods"] = minutes
    return alarm


def _queue_alarm(queue: str, metric: str, threshold: int, description: str) -> dict:
    return _alarm(description, "AWS/SQS", metric, ("QueueName", {"Fn::GetAtt": [queue, "QueueName"]}), threshold)


def feed_resources() -> dict:
    """The feed queue, its dead letters, the numbering's event source and concurrency, and their alarms."""
    return {
        # One message group per account (the forwarder's MessageGroupId): in order within it, groups side by side
        # at the high-throughput FIFO quotas, deduplicated by the forwarder's ids (of the records a message holds).
        FEED_QUEUE: _fifo_queue(
            ContentBasedDeduplication=False,
            DeduplicationScope="messageGroup",
            FifoThroughputLimit="perMessageGroupId",
            VisibilityTimeout=FEED_VISIBILITY_SECONDS,
            RedrivePolicy={"deadLetterTargetArn": FEED_DEAD_LETTERS_ARN, "maxReceiveCount": MAX_RECEIVES},
        ),
        FEED_DEAD_LETTERS: _fifo_queue(),
        NUMBERING_FUNCTION: _with_feed_queue(  # it postpones a failed message
            {
                "Properties": {
                    "ReservedConcurrentExecutions": NUMBERING_CONCURRENCY,
                    "Events": {
                        # Chalice writes the queue ARN it saw at import (config.FEED_QUEUE_PLACEHOLDER): this queue's.
                        f"{NUMBERING_FUNCTION}SqsEventSource": {
                            "Properties": {
                                "Queue": FEED_QUEUE_ARN,
                                "FunctionResponseTypes": ["ReportBatchItemFailures"],
                                "ScalingConfig": {"MaximumConcurrency": NUMBERING_CONCURRENCY},
                            }
                        }
                    },
                }
            }
        ),
        "FeedQueueAgeAlarm": _queue_alarm(
            FEED_QUEUE,
            "ApproximateAgeOfOldestMessage",
            BEHIND_SECONDS,
            "A change waited over a minute in the feed queue: the numbering is behind, or an account's numbering "
            "keeps failing (FeedNumbering's logs name it). Its changes are late in GET /changes and their events; "
            "other accounts' are not held up (docs/deploy.md).",
        ),
        "FeedDeadLettersAlarm": _queue_alarm(
            FEED_DEAD_LETTERS,
            "ApproximateNumberOfMessagesVisible",
            0,
            "A feed message failed its numbering every time for days and was set aside: its changes are not in the "
            "feed. Read it, fix the cause, and move it back to the feed queue (docs/deploy.md).",
        ),
    }


def resources(stream_arn: dict) -> dict:
    """The resources by logical id; `stream_arn`: the table's stream, by CloudFormation reference."""
    return {
        # Chalice writes the stream ARN it saw at import (a placeholder); point the triggers at our table's stream.
        FEED_FUNCTION: _with_feed_queue(
            _stream_source(
                FEED_FUNCTION,
                stream_arn,
                # Batches of a shard side by side, split by partition key: one item's records stay in order.
                ParallelizationFactor=STREAM_PARALLELIZATION,
                # A record is never given up while the stream holds it: only the queue refusing fails one, and the
                # batch is handed over again from it (jobs/handlers.forward_changes); halving it would not help.
                MaximumRetryAttempts=-1,
                MaximumRecordAgeInSeconds=-1,
                BisectBatchOnFunctionError=False,
            )
        ),
        STREAM_FUNCTION: _stream_source(
            STREAM_FUNCTION,
            stream_arn,
            # Up to 10 batches of a shard at once, split by partition key (one per account's events), so an
            # account whose first send hangs holds few others' stream batches.
            ParallelizationFactor=STREAM_PARALLELIZATION,
            MaximumRetryAttempts=STREAM_RETRIES,
            # Halves of a bisected batch are not counted as retries: the age bounds them too.
            MaximumRecordAgeInSeconds=STREAM_RECORD_AGE_SECONDS,
            BisectBatchOnFunctionError=True,
        ),
        STREAM_FAILURES: {
            "Type": "AWS::SQS::Queue",
            "Properties": {"MessageRetentionPeriod": QUEUE_RETENTION_SECONDS, "SqsManagedSseEnabled": True},
        },
        "StreamFailuresAlarm": _queue_alarm(
            STREAM_FAILURES,
            "ApproximateNumberOfMessagesVisible",
            0,
            "Stream batches a stream function gave up on: read the queue's messages for the function, shard and "
            "sequence numbers, and the function's logs. TableStream's work is taken by the schedule. TableFeed "
            "never gives a record up while the stream holds it: from it, records left the stream unforwarded "
            "(docs/deploy.md).",
        ),
        **feed_resources(),
        # A stream function falling behind: its records are this old when it gets them.
        "FeedIteratorAgeAlarm": _iterator_age_alarm(
            FEED_FUNCTION,
            "the forwarder is behind (the feed queue refuses its messages, or it fails): changes are late in "
            "GET /changes and their events, and lost if the stream's 24 hours pass",
            minutes=1,
        ),
        "StreamIteratorAgeAlarm": _iterator_age_alarm(
            STREAM_FUNCTION,
            "events, images and imports are late (the one-minute schedule is the safety net)",
            minutes=5,
        ),
    }
