"""Parts 3 and 4 of bench/feed_scale.py: a failing account beside healthy ones, and a replay of a day's records.

Both run the feed as `make run` runs it, each on a table of its own: make run's stream feeder (localdev/stream.py)
hands DynamoDB Local's stream to the forwarder, make run's queue poller hands the feed queue to the numbering.

3. Healthy accounts and one failing account write, each a change every WRITE_PERIOD seconds, for WRITE_SECONDS; from
   FAIL_FROM to FAIL_UNTIL the store's numbering fails for the failing account only (store/feed_sequencer.number
   raises for it: at once, or after FAIL_SLOW_SECONDS, as a throttled store would). A reader polls each healthy
   account's feed as GET /changes reads it (service/changes.py); a healthy change's lag is from its write's commit to
   the first read that shows it. Then the failing account's changes are awaited: numbered in full once it recovers,
   none lost or doubled.
4. A day's records (DAY_ACCOUNTS accounts, DAY_CHANGES changes in all) numbered from the stream, then handed over
   again twice: every record of the stream from its start to the forwarder (a mapping made again at TRIM_HORIZON
   does this), and the replay command's path (`cli replay-feed`: service/feed_replay.replay reads the stream from
   its start and numbers what the feed is missing). Numbered again by each (target 0) and the time of each.
"""

import datetime as dt
import logging
import os
import threading
import time

from bench import feed_sim, harness

HEALTHY = int(os.environ.get("BENCH_FAULT_ACCOUNTS", "10"))
WRITE_PERIOD, WRITE_SECONDS = 1.0, 20.0
FAIL_FROM, FAIL_UNTIL = 3.0, 13.0
FAIL_SLOW_SECONDS = 2.0
CATEGORIES = 5  # each account renames its categories in turn
DAY_ACCOUNTS = 60
DAY_CHANGES = int(os.environ.get("BENCH_DAY_CHANGES", "6000"))
WAIT_SECONDS = 300
LAG_TARGET_SECONDS = 5.0  # decisions §13


class Live:
    """make run's stream feeder (in a thread) forwarding to a queue of its own, numbered by make run's poller. The
    section's runs share one feeder, each going on where the last stopped: a feeder of its own would hand every
    earlier run's records over again first, and the backlog would count in the run's lag."""

    feeders: dict[str, object] = {}  # per table

    def __init__(self, queue_name: str):
        from chalicelib.store import table

        self.numbering = feed_sim.Numbering(queue_name)
        self.stop_event = threading.Event()
        if table.name() not in Live.feeders:
            Live.feeders[table.name()] = harness.stream_feeder(self._forward)
        self.feeder = Live.feeders[table.name()]
        self.feeder.handler = self._forward
        self.numbering.poller.numbered = self.feeder.numbered
        self.thread = threading.Thread(target=self.feeder.run_forever, args=(self.stop_event,), daemon=True)

    def _forward(self, event: dict) -> dict:
        answer = harness.forward(event)
        self.numbering.bell.ring()  # as make run's handler rings the poller
        return answer

    def __enter__(self) -> "Live":
        self.numbering.start()
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        self.thread.join(timeout=30)
        self.numbering.stop()


def _failing(sick: str, window: dict, slow: float):
    """store/feed_sequencer.number failing for `sick` while window["failing"] (at once, or after `slow` seconds)."""
    from chalicelib.store import feed_sequencer as feed_numbering

    real = feed_numbering.number

    def number(account, records, *args, **kwargs):
        if account == sick and window["failing"]:
            window["failures"] += 1
            time.sleep(slow)
            raise RuntimeError("injected: the store's numbering fails for this account")
        return real(account, records, *args, **kwargs)

    return real, number


def _writer(account: str, stop: threading.Event, written: dict, answered: dict) -> None:
    from chalicelib.domain.feed import Change, ChangeType
    from chalicelib.store import categories as store
    from chalicelib.store.unit_of_work import unit_of_work

    n = 0
    while not stop.wait(WRITE_PERIOD if n else 0):
        cid = f"c{n % CATEGORIES}"
        first = n < CATEGORIES
        with unit_of_work(account, dt.datetime.now(dt.timezone.utc)) as uow:
            uow.add((store.creating if first else store.renaming)(account, cid, f"{cid} {n}"))
            uow.record(Change(ChangeType.CATEGORY_CREATED if first else ChangeType.CATEGORY_UPDATED, cid))
            assert uow.commit() is None
        answered[(uow.unit, cid)] = time.perf_counter()
        written.setdefault(cid, []).append(uow.unit)
        n += 1


def _reader(accounts: list[str], stop: threading.Event, seen: dict) -> None:
    from chalicelib.service import changes

    after = {account: 0 for account in accounts}
    while not stop.is_set():
        for account in accounts:
            page = changes.read_changes(account, after[account], 1000, False)
            now = time.perf_counter()
            for entry in page["changes"]:
                seen.setdefault((entry["unit"], entry["id"]), now)
            after[account] = page["last_sequence"]
        stop.wait(0.05)


def _percentile(values: list[float], share: float) -> float | None:
    ordered = sorted(values)
    return round(ordered[max(0, int(len(ordered) * share) - 1)], 3) if ordered else None


def failing_run(label: str, slow: float | None) -> dict:
    """One run; `slow` None: nobody fails (the same load, for comparison)."""
    from chalicelib.store import feed_sequencer as feed_numbering

    healthy = [f"{label}-healthy-{n:02d}" for n in range(HEALTHY)]
    sick = f"{label}-failing"
    written = {account: {} for account in [*healthy, sick]}
    answered: dict = {}
    seen: dict = {}
    window = {"failing": False, "failures": 0}
    real, failing = _failing(sick, window, slow or 0.0)
    feed_numbering.number = failing
    logging.disable(logging.ERROR)  # the injected failures' tracebacks
    stop_writing, stop_reading = threading.Event(), threading.Event()
    writers = [
        threading.Thread(target=_writer, args=(account, stop_writing, written[account], answered), daemon=True)
        for account in written
    ]
    reader = threading.Thread(target=_reader, args=([*healthy, sick], stop_reading, seen), daemon=True)
    try:
        with Live(f"failing-{label}") as live:
            began = time.perf_counter()
            for thread in [*writers, reader]:
                thread.start()
            time.sleep(FAIL_FROM)
            window["failing"] = slow is not None
            time.sleep(FAIL_UNTIL - FAIL_FROM)
            window["failing"] = False
            time.sleep(max(0.0, WRITE_SECONDS - (time.perf_counter() - began)))
            stop_writing.set()
            for thread in writers:
                thread.join()
            ended = time.perf_counter()
            sick_changes = _keys(written[sick])
            healthy_changes = {key for account in healthy for key in _keys(written[account])}
            ends = ended + WAIT_SECONDS
            while not (healthy_changes | sick_changes) <= seen.keys() and time.perf_counter() < ends:
                time.sleep(0.05)
            complete = max((seen.get(key, time.perf_counter()) for key in sick_changes), default=ended)
            stop_reading.set()
            reader.join()
            handed_back = live.numbering.counts.failed
            dead = live.numbering.dead_letters()
    finally:
        feed_numbering.number = real
        logging.disable(logging.WARNING)
    lags = [seen[key] - answered[key] for key in healthy_changes if key in seen]
    sick_lags = [seen[key] - answered[key] for key in sick_changes if key in seen]
    checks = {account: feed_sim.check(account, written[account]) for account in written}
    return {
        "failure": "nobody fails" if slow is None else f"fails after {slow:g} s" if slow else "fails at once",
        "healthy_accounts": HEALTHY,
        "healthy_changes": len(healthy_changes),
        "lag_p50_s": _percentile(lags, 0.5),
        "lag_p99_s": _percentile(lags, 0.99),
        "lag_max_s": round(max(lags), 3) if lags else None,
        "unseen": len(healthy_changes) - len(lags),
        "failing_changes": len(sick_changes),
        "failed_numberings": window["failures"],
        "handed_back": handed_back,
        "dead_letters": dead,
        "failing_lag_max_s": round(max(sick_lags), 3) if sick_lags else None,
        "failing_complete_s_after_writes": round(complete - ended, 2),
        "failing_feed": checks[sick],
        "faultless": all(feed_sim.faultless(found) for found in checks.values()),
    }


def _keys(written: dict[str, list[str]]) -> set[tuple[str, str]]:
    return {(unit, cid) for cid, units in written.items() for unit in units}


def warm_up() -> None:
    """DynamoDB Local's JIT warmed on the same pipeline before the first measured run (the one nobody fails in)."""
    with Live("warm-up") as live:
        for n in range(HEALTHY):
            feed_sim.write_changes(f"warm-up-{n:02d}", 30, 1, 1)
        assert live.numbering.wait_for(30 * HEALTHY, WAIT_SECONDS), "the warm-up was not numbered"


def failing_section() -> list[dict]:
    warm_up()
    return [failing_run("none", None), failing_run("at-once", 0.0), failing_run("slow", FAIL_SLOW_SECONDS)]


def replay_section() -> dict:
    from chalicelib.service import feed_replay
    from chalicelib.store import feed

    accounts = [f"day-{n:02d}" for n in range(DAY_ACCOUNTS)]
    categories = max(1, DAY_CHANGES // DAY_ACCOUNTS // 4)  # each changed 4 times
    changes = categories * 4 * DAY_ACCOUNTS
    began = time.perf_counter()
    written = {account: feed_sim.write_changes(account, categories, 4, 10) for account in accounts}
    wrote = time.perf_counter() - began
    numbering = feed_sim.Numbering("replay").start()
    try:
        began = time.perf_counter()
        first = harness.drain(harness.stream_feeder(_forwarding(numbering)))
        assert numbering.wait_for(changes, WAIT_SECONDS), "the day's changes were not numbered"
        numbered_first = time.perf_counter() - began
        heads = sum(feed.read_head(account).sequence for account in accounts)
        records_first = numbering.counts.records_handed
        began = time.perf_counter()
        again = harness.drain(harness.stream_feeder(_forwarding(numbering)))  # a new feeder: from the stream's start
        assert numbering.wait_for(2 * changes, WAIT_SECONDS), "the replay's records were not all handed over"
        replayed = time.perf_counter() - began
        handed_again = numbering.counts.records_handed - records_first
        heads_forwarded = sum(feed.read_head(account).sequence for account in accounts)
    finally:
        numbering.stop()
    began = time.perf_counter()
    tallies = feed_replay.replay()
    command_s = time.perf_counter() - began
    checks = [feed_sim.check(account, written[account]) for account in accounts]
    return {
        "accounts": DAY_ACCOUNTS,
        "changes": changes,
        "written_s": round(wrote, 1),
        "stream_records_first": first,
        "numbered_first_s": round(numbered_first, 1),
        "stream_records_replayed": again,
        "records_handed_to_numbering_again": handed_again,
        "numbered_again": heads_forwarded - heads,
        "replay_s": round(replayed, 1),
        "command_records_read": sum(tally.read for tally in tallies.values()),
        "command_numbered_before": sum(tally.before for tally in tallies.values()),
        "command_numbered_again": sum(tally.now for tally in tallies.values()),
        "command_left": sum(tally.left for tally in tallies.values()),
        "command_numbered_again_by_heads": sum(feed.read_head(account).sequence for account in accounts)
        - heads_forwarded,
        "command_s": round(command_s, 1),
        "faultless": all(feed_sim.faultless(found) for found in checks),
    }


def _forwarding(numbering: feed_sim.Numbering):
    def forward(event: dict) -> dict:
        answer = harness.forward(event)
        numbering.bell.ring()
        return answer

    return forward


def lag_summary(rows: list[dict]) -> list[str]:
    lines = []
    for row in rows:
        met = (row["lag_max_s"] or 0) <= LAG_TARGET_SECONDS and row["unseen"] == 0 and row["faultless"]
        lines.append(
            f"{row['failure']:18} {row['healthy_changes']:>7} {row['lag_p50_s']:>7} {row['lag_p99_s']:>7} "
            f"{row['lag_max_s']:>7} {row['failed_numberings']:>8} {row['failing_lag_max_s']:>9} "
            f"{row['failing_complete_s_after_writes']:>9} "
            f"{row['failing_feed']['missing']:>4} {row['failing_feed']['doubled']:>7} "
            f"{row['failing_feed']['out_of_order']:>10}  {'met' if met else 'MISSED'}"
        )
    return lines


def print_tables(failing: list[dict], replay: dict) -> None:
    print()
    print(
        f"{HEALTHY} healthy accounts beside one whose numbering fails from {FAIL_FROM:g} s to {FAIL_UNTIL:g} s "
        f"(each writes every {WRITE_PERIOD:g} s for {WRITE_SECONDS:g} s; lag from commit to readable entry, s)"
    )
    print(
        f"{'failure':18} {'changes':>7} {'p50':>7} {'p99':>7} {'max':>7} {'failures':>8} {'its max':>9} "
        f"{'complete':>9} "
        f"{'lost':>4} {'doubled':>7} {'misordered':>10}  target: max <= {LAG_TARGET_SECONDS:g} s, 0 lost, doubled or "
        "misordered (every account)"
    )
    for line in lag_summary(failing):
        print(line)
    print()
    print(
        f"A day's records again: {replay['changes']} changes of {replay['accounts']} accounts numbered in "
        f"{replay['numbered_first_s']} s; the stream's {replay['stream_records_replayed']} records handed over again "
        f"from its start in {replay['replay_s']} s ({replay['records_handed_to_numbering_again']} records reached the "
        f"numbering); numbered again: {replay['numbered_again']} (target 0)"
    )
    print(
        f"The replay command's path (cli replay-feed) on the same stream: {replay['command_records_read']} records "
        f"read in {replay['command_s']} s, {replay['command_numbered_before']} found numbered before, numbered again: "
        f"{replay['command_numbered_again']} by its tally, {replay['command_numbered_again_by_heads']} by the heads "
        f"(target 0), {replay['command_left']} left"
        f"{'' if replay['faultless'] else '; FEED NOT AS WRITTEN'}"
    )
