"""The table stream's two functions in the deploy template (deploy_template.py merges these resources): their
event sources, the queue that takes the batches they give up on, and the alarms.

TableFeed (jobs/triggers.table_feed) numbers the changes (jobs/handlers.number_changes); TableStream
(jobs/triggers.table_stream) sends the events and starts images and imports (jobs/handlers.on_table_change).
"""

from .store import feed_numbering

# The two functions on the table's stream (jobs/triggers.py), by logical id: the feed's numbering and the rest
# (events, images, imports).
FEED_FUNCTION, STREAM_FUNCTION = "TableFeed", "TableStream"
STREAM_PARALLELIZATION = 10  # the most Lambda allows
# A table_stream batch whose work keeps failing is retried this often (halved each time, only from its first failed
# record), then its description goes to the on-failure queue and the shard moves on; the one-minute schedule sends
# the events and takes the images and imports it held. Without a limit a poison batch would hold its shard for the
# stream's 24 hours.
STREAM_RETRIES = 5
STREAM_RECORD_AGE_SECONDS = 3600  # a record older than this goes to the on-failure queue, whatever the bisections
# The numbering has no safety net: a record given up on is a change never in the feed. It keeps retrying (its
# failure is an account's, handed over again whole) until the record is this old; the head keeps each shard's
# position at least as long, so a batch handed over again is numbered once (store/feed_numbering.py).
FEED_RECORD_AGE_SECONDS = feed_numbering.REDELIVERED_WITHIN_SECONDS
# Only so that every batch carries its `shardId` (the numbering's positions are per shard); the handler answers
# `state: {}` and keeps nothing in it.
FEED_WINDOW_SECONDS = 900
STREAM_AGE_ALARM_MILLISECONDS = 60_000  # a stream function's records waiting longer than the schedule's period
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


def _iterator_age_alarm(function: str, late: str) -> dict:
    return {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "AlarmDescription": f"The table stream's {function} function is behind, its oldest record waited over a "
            f"minute: {late}. Read the function's logs.",
            "Namespace": "AWS/Lambda",
            "MetricName": "IteratorAge",
            "Dimensions": [{"Name": "FunctionName", "Value": {"Ref": function}}],
            "Statistic": "Maximum",
            "Period": 60,
            "EvaluationPeriods": 5,
            "Threshold": STREAM_AGE_ALARM_MILLISECONDS,
            "ComparisonOperator": "GreaterThanThreshold",
            "TreatMissingData": "notBreaching",
        },
    }


def resources(stream_arn: dict) -> dict:
    """The stream functions' resources by logical id; `stream_arn`: the table's stream, by CloudFormation reference."""
    return {
        # Chalice writes the stream ARN it saw at import (a placeholder); point the triggers at our table's stream.
        FEED_FUNCTION: _stream_source(
            FEED_FUNCTION,
            stream_arn,
            # One batch of a shard at a time: a shard's records are numbered in its order, and the head keeps
            # one position per shard.
            ParallelizationFactor=1,
            TumblingWindowInSeconds=FEED_WINDOW_SECONDS,
            MaximumRetryAttempts=-1,
            MaximumRecordAgeInSeconds=FEED_RECORD_AGE_SECONDS,
            # A numbering never fails on one record: a failed account's records are answered whole and handed
            # over again; halving the batch would only hand them over again.
            BisectBatchOnFunctionError=False,
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
            "Properties": {"MessageRetentionPeriod": 1209600, "SqsManagedSseEnabled": True},
        },
        "StreamFailuresAlarm": {
            "Type": "AWS::CloudWatch::Alarm",
            "Properties": {
                "AlarmDescription": "Stream batches a stream function gave up on: read the queue's messages for "
                "the function, shard and sequence numbers, and the function's logs. TableStream's work is "
                "taken by the schedule; TableFeed's changes are not in the feed.",
                "Namespace": "AWS/SQS",
                "MetricName": "ApproximateNumberOfMessagesVisible",
                "Dimensions": [{"Name": "QueueName", "Value": {"Fn::GetAtt": [STREAM_FAILURES, "QueueName"]}}],
                "Statistic": "Maximum",
                "Period": 60,
                "EvaluationPeriods": 1,
                "Threshold": 0,
                "ComparisonOperator": "GreaterThanThreshold",
                "TreatMissingData": "notBreaching",
            },
        },
        # A stream function falling behind (a slow or failing batch, before it is given up on): its records are
        # this old when it gets them.
        "FeedIteratorAgeAlarm": _iterator_age_alarm(
            FEED_FUNCTION, "the feed's numbering is behind: changes are late in GET /changes and their events"
        ),
        "StreamIteratorAgeAlarm": _iterator_age_alarm(
            STREAM_FUNCTION, "events, images and imports are late (the one-minute schedule is the safety net)"
        ),
    }
