"""What the AWS triggers of jobs/triggers.py do: the table stream and a one-minute schedule call the same code.

Every kind of background work is a `budget.Phase` in PHASES; the schedule runs them all side by side within
the function's timeout, `make run` runs each in a loop of its own (chalicelib/localdev/run.py). Another kind
of work joins by adding its Phase here (docs/jobs.md).
"""

import logging

from ..domain.event_policy import SEND_TIMEOUT_SECONDS
from ..domain.limits import IMAGE_DOWNLOAD_SECONDS, IMPORT_CHUNK_SECONDS, NUMBERING_SECONDS
from ..service import background, clock
from ..service import feed_forwarding as forwarding
from ..service import feed_numbering as numbering
from . import event_lanes, images, import_turns
from .budget import Phase, run_phases
from .standing_order_turns import PHASE as STANDING_ORDERS
from .wakeups import Bells

log = logging.getLogger("supplier-ordering.jobs")

EVENTS = Phase(
    "events",
    SEND_TIMEOUT_SECONDS,
    run=lambda deadline: event_lanes.dispatch_due(deadline=deadline),
    loop=lambda stop_event, **woken: event_lanes.run_forever(stop_event, **woken),
)
IMAGES = Phase(
    "images",
    IMAGE_DOWNLOAD_SECONDS,
    run=lambda deadline: images.run(deadline=deadline),
    busy=lambda counts: counts["due"] >= images.BATCH,
)
IMPORTS = Phase(
    "imports",
    IMPORT_CHUNK_SECONDS,
    run=lambda deadline: import_turns.advance_imports(deadline),
    loop=lambda stop_event, **woken: import_turns.run_forever(stop_event, **woken),
)
PHASES: list[Phase] = [EVENTS, IMAGES, IMPORTS, STANDING_ORDERS]  # standing orders: decisions §17


def _remaining_seconds(event) -> float | None:
    context = getattr(event, "context", None)
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return remaining() / 1000 if callable(remaining) else None


def forward_changes(event) -> dict:
    """A batch of the table's stream for the feed (one shard's records, in its order): the changes its records'
    marks show go to the feed queue, each account's to its own message group (service/feed_forwarding.py). Answers
    the records the queue refused (`batchItemFailures`), so the event source mapping hands them over again from the
    first of them; an empty batch (nothing to forward) answers none."""
    records = list(event)
    if not records:  # a mapping may invoke with none (a window's end): nothing to do, nothing failed
        return {"batchItemFailures": []}
    return _partial_response(event, forwarding.forward(records))


LOCAL_NUMBERING_SECONDS = 30.0  # a hand-over's time with make run (in AWS: the function's remaining time)


def number_changes(event) -> dict:
    """A batch of the feed queue (up to ten messages, each account's in its order): their changes are numbered
    (service/feed_numbering.py). Answers the messages not numbered (`batchItemFailures`: each account's from its
    first failed one), which the queue hands over again after a pause that doubles with every hand-over."""
    messages = [numbering.received(record.to_dict()) for record in event]
    remaining = _remaining_seconds(event)
    seconds = LOCAL_NUMBERING_SECONDS if remaining is None else max(remaining - NUMBERING_SECONDS, 0)
    left = numbering.number_messages(messages, clock.after(seconds)) if messages else set()
    return {"batchItemFailures": [{"itemIdentifier": message.id} for message in messages if message.id in left]}


def on_table_change(event, local: Bells | None = None):
    """A batch of the table's stream for the background work: the new events it shows are sent, queued images and
    imports started. `local` (`make run`, jobs/wakeups.py): it rings the loops that send its events and take its
    images and imports instead, so no send, import or download ever holds up the next batch's numbering. In AWS a
    function of its own reads the stream for this, beside the numbering's (number_changes)."""
    new_events, download, queued_import = [], False, False
    for record in event:
        woken = background.woken(record.event_name, record.new_image)
        if woken.event is not None:
            new_events.append(woken.event)
        download = download or woken.image
        queued_import = queued_import or woken.import_
    if local is not None:
        _wake(local, new_events, download, queued_import)
        return {"batchItemFailures": []}
    # Only the batch's events: each account in its own lane, parked accounts' events left for the schedule.
    phases = []
    if new_events:
        phases.append(
            Phase("new events", SEND_TIMEOUT_SECONDS, lambda deadline: event_lanes.dispatch_new(new_events, deadline))
        )
    # The stream also starts queued images and imports (the schedule only every minute), for one step's time.
    if download:
        phases.append(_one_step(IMAGES))
    if queued_import:
        phases.append(_one_step(IMPORTS))
    # Sending, images and imports are retried by the schedule (their units hold their own due times).
    run_phases(phases, _remaining_seconds(event))
    return {"batchItemFailures": []}


def _wake(local: Bells, new_events: list[dict], download: bool, queued_import: bool) -> None:
    if new_events:
        local.events.ring(new_events)
    if download:
        local.images.ring()
    if queued_import:
        local.imports.ring()


def _one_step(phase: Phase) -> Phase:
    """The phase as a stream batch runs it: it starts new work only within its first step's time."""

    def run(deadline):
        return phase.run(min(deadline, clock.after(phase.longest_step_seconds)))

    return Phase(phase.name, phase.longest_step_seconds, run=run, busy=phase.busy)


def _partial_response(event, failed: set[str]) -> dict:
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

    def record_handler(record) -> None:
        if record.dynamodb.sequence_number in failed:
            raise RuntimeError("numbering its account failed")

    processor = BatchProcessor(event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False)
    return process_partial_response(
        event=event.to_dict(),
        record_handler=record_handler,
        processor=processor,
        context=getattr(event, "context", None),
    )


def every_minute(event):
    run_phases(PHASES, _remaining_seconds(event))
