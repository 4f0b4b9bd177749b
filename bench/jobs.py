"""`make bench-jobs`: fairness of event sending, simulated on DynamoDB Local with a fake clock.

50 accounts: one whose receiver never answers (each send waits out the 10 s timeout) with 300 events pending
and more coming, one with a poison event (a maximal order whose receiver's address is refused), and 48
healthy accounts writing events throughout. The dispatcher is the one `make run` uses (jobs/event_lanes.py
`Dispatcher`, polled every 0.5 s) with the real store on DynamoDB Local; only the receivers and the clock are
simulated: a receiver that never answers blocks its lane until the fake clock has moved on by the timeout.
The clock moves in 0.5 s steps once every lane is either done or waiting on it.

Prints the write-to-send delay of the healthy accounts' events (median, p95, max, in simulated seconds) and
writes bench/jobs.json. Targets: max <= 10 s, no healthy event lost, the poison event FAILED with its reason.
"""

import datetime as dt
import http.client
import json
import math
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.update(
    AWS_DEFAULT_REGION="us-east-1",
    AWS_ACCESS_KEY_ID="local",
    AWS_SECRET_ACCESS_KEY="local",
    TABLE_NAME="bench-jobs",
    SIGNING_SECRET="bench-signing-secret",
)
os.environ.pop("ALLOW_PRIVATE_WEBHOOK_HOSTS", None)  # the deployed default: private addresses refused

RESULTS = Path(__file__).with_name("jobs.json")
STEP = 0.5  # seconds of simulated time per step: the `make run` poll interval
WRITING_SECONDS = int(os.environ.get("BENCH_JOBS_SECONDS", "120"))  # healthy accounts write for this long
DRAIN_SECONDS = 30
HEALTHY, BACKLOG = 48, 300
START = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.timezone.utc)
TARGET_MAX_SECONDS = 10.0


def fake_clock(start: dt.datetime):
    """The service's FakeClock (put in use for the service and the dispatcher alike), plus what the simulated
    receivers need: a thread may wait for it to reach a moment (a receiver that never answers)."""
    from chalicelib.service import clock

    class WaitableClock(clock.FakeClock):
        def __init__(self, moment: dt.datetime):
            super().__init__(moment)
            self._changed = threading.Condition()
            self.sleepers = 0

        def sleep_until(self, moment: dt.datetime) -> None:
            with self._changed:
                self.sleepers += 1
                while self.now() < moment:
                    self._changed.wait()
                self.sleepers -= 1

        def advance(self, seconds):
            with self._changed:
                moment = super().advance(seconds)
                self._changed.notify_all()
            return moment

    fake = WaitableClock(start)
    clock.use(fake)
    return fake


class Receivers:
    """The transport of the dispatcher: every account's receiver, simulated."""

    def __init__(self, clock):
        self.clock = clock
        self.sent: dict[str, dt.datetime] = {}
        self.unanswered = 0
        self._lock = threading.Lock()

    def __call__(self, method, url, *, headers, body, timeout, allow_private, **_):
        from chalicelib.adapters import outbound

        host = urlsplit(url).hostname
        if host == "never-answers.example":
            with self._lock:
                self.unanswered += 1
            self.clock.sleep_until(self.clock.now() + dt.timedelta(seconds=timeout))
            raise outbound.Timeout(f"no answer within {timeout:g} s")
        if host[0].isdigit():  # the address check of the real transport (no DNS for the simulated names)
            outbound.resolve(host, 80, allow_private)
        with self._lock:
            self.sent.setdefault(headers["webhook-id"], self.clock.now())
        return outbound.Response(200, http.client.HTTPMessage(), b"", url)


def delivery(delivery_id: int, lines: int = 1, message: str = "") -> dict:
    line = {"id": "lager", "name": "Lager 0.33 l", "count": 2, "vessel_count": 48, "price": 150}
    items = [{**line, "id": f"item-{n}", **({"message": message} if message else {})} for n in range(lines)]
    return {
        "id": delivery_id,
        "type": "DELIVERY",
        "status": "REQUESTED",
        "customer": {"id": "bar-1", "company": "Bar One"},
        "request": {"timestamp": "2026-01-05T09:00:00.000Z", "items": items},
        "responses": [],
    }


_feeder = []


def _numbered() -> None:
    from bench import harness

    if not _feeder:
        _feeder.append(harness.numbering_feeder())
    harness.drain(_feeder[0])


def write_event(account: str, delivery_id: int, now: dt.datetime, **shape) -> str:
    """A new delivery and its request-delivery event in one transaction, as placing an order writes them."""
    from chalicelib.domain.feed import ChangeType, delivery_change
    from chalicelib.service import write_units
    from chalicelib.store import delivery_writes, event_lists

    data = delivery(delivery_id, **shape)
    changes = [delivery_change(ChangeType.DELIVERY_REQUESTED, data)]  # the feed makes its event
    outcome = write_units.commit(account, now, delivery_writes.placing(account, [data], []), changes)
    assert outcome is None, outcome
    _numbered()  # the table's stream numbers the change and makes its event, as its Lambda does in AWS
    cursor = None
    while True:  # events written at one moment of the fake clock share a time, so look for the delivery's own
        page = event_lists.list_page(account, 100, cursor)
        found = [event["event_id"] for event in page.items if int(event["delivery_id"]) == delivery_id]
        if found or page.cursor is None:
            return found[0]
        cursor = page.cursor


def setup(clock) -> tuple[dict, list[str], str]:
    from chalicelib.service import accounts, webhooks
    from chalicelib.store import table

    table.reset_client()
    table.create_table()
    healthy = [f"healthy-{n:02d}" for n in range(HEALTHY)]
    for account in healthy + ["never", "poison"]:
        accounts.create_account(account, account, f"token-{account}")
    for account in healthy:
        webhooks.put_settings(account, {"url": f"https://{account}.example/hook"})
    webhooks.put_settings("never", {"url": "https://never-answers.example/hook"})
    webhooks.put_settings("poison", {"url": "http://10.1.2.3/hook"})
    for n in range(BACKLOG):
        write_event("never", n + 1, clock.now())
    # The largest order: 50 lines with 2000-character messages of 4-byte characters.
    poison = write_event("poison", 1, clock.now(), lines=50, message="🍺" * 1990)
    # Each healthy account writes an event about every 10 s, at its own offsets.
    rng = random.Random(20260105)
    plan: dict = {}
    for account in healthy:
        moment = rng.uniform(0, 10)
        while moment < WRITING_SECONDS:
            # written at `moment`, seen by the first poll at or after it
            plan.setdefault(math.ceil(moment / STEP), []).append((account, moment))
            moment += rng.uniform(5, 15)
    return plan, healthy, poison


def quiesce(dispatcher, clock, timeout: float = 60.0) -> None:
    """Wait until every running lane is done or waiting for the fake clock."""
    deadline = time.monotonic() + timeout
    while dispatcher.active() > clock.sleepers:
        if time.monotonic() > deadline:
            raise RuntimeError("lanes did not settle")
        time.sleep(0.002)


def simulate() -> dict:
    from chalicelib.jobs import event_lanes
    from chalicelib.store import events

    clock = fake_clock(START)
    plan, healthy, poison = setup(clock)
    receivers = Receivers(clock)
    dispatcher = event_lanes.Dispatcher(transport=receivers)
    written: dict[str, dt.datetime] = {}
    ids: dict[str, int] = {}
    started = time.monotonic()
    steps = int((WRITING_SECONDS + DRAIN_SECONDS) / STEP)
    for step in range(steps):
        for account, moment in plan.get(step, []):
            ids[account] = ids.get(account, 0) + 1
            at = START + dt.timedelta(seconds=moment)
            written[write_event(account, ids[account], at)] = at
        dispatcher.poll()
        quiesce(dispatcher, clock)
        clock.advance(STEP)
    dispatcher.close(wait=False)
    clock.advance(3600)  # release the lane still waiting on the receiver that never answers
    wall = time.monotonic() - started

    delays = sorted(
        (receivers.sent[event_id] - at).total_seconds()
        for event_id, at in written.items()
        if event_id in receivers.sent
    )
    lost = [event_id for event_id in written if event_id not in receivers.sent]
    poison_event = events.get("poison", poison)
    return {
        "accounts": HEALTHY + 2,
        "healthy_events": len(written),
        "healthy_sent": len(delays),
        "healthy_lost": len(lost),
        "delay_median_s": round(statistics.median(delays), 3) if delays else None,
        "delay_p95_s": round(delays[int(0.95 * (len(delays) - 1))], 3) if delays else None,
        "delay_max_s": round(max(delays), 3) if delays else None,
        "never_answering_sends": receivers.unanswered,
        "poison_status": poison_event["status"],
        "poison_reason": poison_event.get("reason"),
        "simulated_seconds": WRITING_SECONDS + DRAIN_SECONDS,
        "wall_seconds": round(wall, 1),
    }


def main() -> int:
    from chalicelib.localdev import dynamodb_local

    server = dynamodb_local.start()
    os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
    try:
        result = simulate()
    finally:
        server.stop()
    result["targets"] = {
        "delay_max_s": f"<= {TARGET_MAX_SECONDS:g}",
        "healthy_lost": 0,
        "poison_status": "FAILED with its reason",
    }
    met = (
        result["delay_max_s"] is not None
        and result["delay_max_s"] <= TARGET_MAX_SECONDS
        and result["healthy_lost"] == 0
        and result["poison_status"] == "FAILED"
        and bool(result["poison_reason"])
    )
    result["targets_met"] = met
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    rows = [
        ("accounts (48 healthy, 1 never answers with 300 pending, 1 poison)", result["accounts"]),
        (
            "healthy events written / sent / lost",
            f"{result['healthy_events']} / {result['healthy_sent']} / {result['healthy_lost']}",
        ),
        ("write-to-send delay, median (simulated s)", result["delay_median_s"]),
        ("write-to-send delay, p95 (simulated s)", result["delay_p95_s"]),
        (f"write-to-send delay, max (simulated s; target <= {TARGET_MAX_SECONDS:g})", result["delay_max_s"]),
        ("sends to the receiver that never answers", result["never_answering_sends"]),
        ("poison event", f"{result['poison_status']}: {result['poison_reason']}"),
        ("simulated / wall seconds", f"{result['simulated_seconds']} / {result['wall_seconds']}"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    print(
        f"targets {'met' if met else 'MISSED'}; "
        f"results in {RESULTS.relative_to(Path.cwd()) if RESULTS.is_relative_to(Path.cwd()) else RESULTS}"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
