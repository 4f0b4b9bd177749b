"""The AWS triggers of the background work, registered on the app without loading it.

Every Lambda of the app imports app.py, the HTTP one included, so this module holds only the triggers; the
work they start (jobs/handlers.py, and the phases, budgets and use cases behind it) loads on their first call.
Chalice wants the stream's and the feed queue's ARNs as strings when the app is packaged: TABLE_STREAM_ARN and
FEED_QUEUE_ARN give them, else config's placeholders stand in (imports, tests, local runs), and the packaging step
replaces them in the template with the template's own ({"Fn::GetAtt": ["Table", "StreamArn"]}, the queue's).
"""

from chalice import Blueprint, Rate

from .. import config

bp = Blueprint(__name__)


# From the stream's start: every record it still holds when the mapping is made is forwarded (none is lost to LATEST).
@bp.on_dynamodb_record(
    stream_arn=config.table_stream_arn(), batch_size=1000, starting_position="TRIM_HORIZON", name="table_feed"
)
def forward_changes(event):
    from . import handlers

    return handlers.forward_changes(event)  # the records the feed queue refused (batchItemFailures)


# The feed queue (FIFO, a message group per account): one account's messages at a time, in order, ten at most.
@bp.on_sqs_message(queue_arn=config.feed_queue_arn(), batch_size=10, name="feed_numbering")
def number_changes(event):
    from . import handlers

    return handlers.number_changes(event)  # the messages not numbered (batchItemFailures)


@bp.on_dynamodb_record(stream_arn=config.table_stream_arn(), batch_size=100, name="table_stream")
def on_table_change(event):
    from . import handlers

    return handlers.on_table_change(event)


@bp.schedule(Rate(1, unit=Rate.MINUTES), name="background_schedule")
def every_minute(event):
    from . import handlers

    handlers.every_minute(event)
