"""The AWS triggers of the background work, registered on the app without loading it.

Every Lambda of the app imports app.py, the HTTP one included, so this module holds only the triggers; the
work they start (jobs/handlers.py, and the phases, budgets and use cases behind it) loads on their first call.
Chalice wants the stream ARN as a string when the app is packaged: TABLE_STREAM_ARN gives it, else
config.TABLE_STREAM_PLACEHOLDER stands in (imports, tests, local runs), and the packaging step replaces that
placeholder in the template with the table's own stream ({"Fn::GetAtt": ["Table", "StreamArn"]}).
"""

from chalice import Blueprint, Rate

from .. import config

bp = Blueprint(__name__)


# From the stream's start: every record it still holds when the mapping is made is numbered (none is lost to LATEST).
@bp.on_dynamodb_record(
    stream_arn=config.table_stream_arn(), batch_size=1000, starting_position="TRIM_HORIZON", name="table_feed"
)
def number_changes(event):
    from . import handlers

    return handlers.number_changes(event)  # the records whose numbering failed (batchItemFailures), and `state`


@bp.on_dynamodb_record(stream_arn=config.table_stream_arn(), batch_size=100, name="table_stream")
def on_table_change(event):
    from . import handlers

    return handlers.on_table_change(event)


@bp.schedule(Rate(1, unit=Rate.MINUTES), name="background_schedule")
def every_minute(event):
    from . import handlers

    handlers.every_minute(event)
