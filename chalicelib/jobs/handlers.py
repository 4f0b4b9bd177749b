"""AWS triggers of the background work: the table stream and a one-minute schedule call the same code.

Chalice wants the stream ARN as a string when the app is packaged: TABLE_STREAM_ARN gives it, else
config.TABLE_STREAM_PLACEHOLDER stands in (imports, tests, local runs), and the packaging step replaces that
placeholder in the template with the table's own stream ({"Fn::GetAtt": ["Table", "StreamArn"]}).
"""
import datetime as dt
import logging

from chalice import Blueprint, Rate

from .. import config
from ..store import keys, table
from ..store.product_images import PENDING as IMAGE_PENDING
from ..lazy import lazy

images = lazy("chalicelib.jobs.images")
webhooks = lazy("chalicelib.jobs.webhooks")
imports = lazy("chalicelib.jobs.imports")

bp = Blueprint(__name__)
log = logging.getLogger("supplier-ordering.jobs")

# A run stops claiming new work after these budgets; with one last send (10 s) and one last download (15 s)
# a run that does both ends within 60 s, Chalice's default Lambda timeout.
EVENTS_BUDGET_SECONDS = 20
IMAGES_BUDGET_SECONDS = 10


def _string(image: dict, name: str) -> str | None:
    return (image.get(name) or {}).get("S")


def wakes_work(record_name: str, new_image: dict | None) -> tuple[bool, bool]:
    """(events to send, images to download): only new outbox events and newly queued images wake the jobs,
    so the jobs' own writes (claims, attempts) do not trigger themselves."""
    image = new_image or {}
    new_event = record_name == "INSERT" and _string(image, "GSI1PK") == keys.OUTBOX_PENDING
    queued_image = _string(image, "image_status") == IMAGE_PENDING and _string(image, "GSI3PK") == keys.IMAGES_PENDING
    return new_event, queued_image


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


@bp.on_dynamodb_record(stream_arn=config.table_stream_arn(), batch_size=100, name="table_stream")
def on_table_change(event):
    new_events, download = [], False
    for record in event:
        new_event, queued_image = wakes_work(record.event_name, record.new_image)
        if new_event:
            new_events.append(table.from_item(record.new_image))
        download = download or queued_image
    # A failing stream batch would be retried and hold up the shard; the schedule retries the work instead.
    try:
        if new_events:
            webhooks.dispatch_due(_now(), budget_seconds=EVENTS_BUDGET_SECONDS, known=new_events)
        if download:
            images.download_pending_images(_now(), budget_seconds=IMAGES_BUDGET_SECONDS)
        imports.on_stream(event, event.context)  # catalogue imports, with the time this invocation has left
    except Exception:  # noqa: BLE001
        log.exception("background work from the table stream failed; the schedule will retry it")


@bp.schedule(Rate(1, unit=Rate.MINUTES), name="background_schedule")
def every_minute(event):
    webhooks.dispatch_due(_now(), budget_seconds=EVENTS_BUDGET_SECONDS)
    images.download_pending_images(_now(), budget_seconds=IMAGES_BUDGET_SECONDS)
    imports.advance_imports(_now(), imports.deadline_of(event.context))
