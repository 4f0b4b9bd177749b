"""The feed at scale (issue 43 point 5): a section of `make bench`, also on its own (`python bench/feed_scale.py`,
which starts its own DynamoDB Local); prints a table and writes bench/feed_scale.json.

The engine is the deployed one: the table's stream → the forwarder (jobs/handlers.forward_changes) → the feed queue,
an SQS FIFO queue with a message group per account (moto's SQS served in this process: localdev/queue.py, the only
part not on DynamoDB Local) → make run's queue poller → the numbering (jobs/handlers.number_changes). Writes are the
service's own units of work (category creates and renames marked on their items).

1. Shards: one account's changes read from DynamoDB Local's stream and split into 1, 8, 24 and 64 simulated shards
   by item key (one item's records in one shard, in order, as DynamoDB spreads items over partitions); a thread per
   shard hands its records to the forwarder in batches of the mapping's 1000, in order, all shards at once, while
   make run's poller numbers. Changes numbered per second from the first hand-over to the last numbering, the feed
   checked (every change once, sequences without a gap, each category's changes in commit order), the head's size
   before and after.
2. Many accounts in one batch: 150 records of 150 accounts against 150 records of one account, each as one stream
   batch: time to number, DynamoDB requests and capacity (as Local reports it, and transactions recounted as AWS
   bills them: bench/capacity.py, in a second pass, since the recount reads every item it writes).
3. A failing account beside healthy ones (bench/feed_faults.py).
4. A replay of a day's records (bench/feed_faults.py).

Only ratios within one run mean anything: the machine is shared.
"""

import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import feed_faults, feed_sim, harness  # noqa: E402

SHARD_COUNTS = (1, 8, 24, 64)
ROUNDS = 4  # each category changed this often (created, then renamed): per-category order is checked
CHANGES = int(os.environ.get("BENCH_SCALE_CHANGES", "1280"))  # one account's timed changes (20 a shard at 64)
REPEATS = int(os.environ.get("BENCH_SCALE_REPEATS", "3"))  # runs per shard count (medians: the machine is shared)
WARM_CHANGES = 10  # numbered before the timed run: the head exists and its size is read
WRITE_CHUNK = 10  # changes per unit of work
ACCOUNTS = 150  # section 2
WAIT_SECONDS = 300


def _shard_run(account: str, shards: int, warm: list[dict], timed: list[dict], written: dict) -> dict:
    """The account's warm-up changes numbered; then its timed ones split into `shards`, forwarded by a thread per
    shard at once into the feed queue (moto's, one request at a time: not AWS's pace, so timed apart), and numbered
    from the full queue by make run's poller."""
    numbering = feed_sim.Numbering(f"shards-{account}").start()
    try:
        feed_sim.forward_shards([feed_sim.of_account(warm, account)], numbering.bell)
        assert numbering.wait_for(WARM_CHANGES, WAIT_SECONDS), "the warm-up changes were not numbered"
    finally:
        numbering.stop()
    head_before = feed_sim.head_bytes(account)
    mine = feed_sim.split(feed_sim.of_account(timed, account), shards)
    began = time.perf_counter()
    retries = feed_sim.forward_shards(mine, numbering.bell)
    forwarded = time.perf_counter() - began
    numbering.start()
    try:
        began = time.perf_counter()
        done = numbering.wait_for(WARM_CHANGES + CHANGES, WAIT_SECONDS)
        seconds = time.perf_counter() - began
    finally:
        numbering.stop()
    found = feed_sim.check(account, written)
    return {
        "forward_seconds": forwarded,
        "seconds": seconds,
        "per_second": CHANGES / seconds if done else 0.0,
        "messages": numbering.counts.handed - 1,  # the warm-up's message not counted
        "handed_back": numbering.counts.failed,
        "forward_retries": retries,
        "dead_letters": numbering.dead_letters(),
        "head_bytes": (head_before, feed_sim.head_bytes(account)),
        "feed": found,
        "faultless": feed_sim.faultless(found),
    }


def shards_section(stream: feed_sim.StreamRecords) -> list[dict]:
    """REPEATS runs per shard count, in a rotated order (a busy moment of the machine falls on each count alike),
    after one warm-up run that is not counted (DynamoDB Local's JIT); each run on an account of its own."""
    runs = [("warm-up", 8)] + [
        (f"{n}-{r}", n) for r in range(REPEATS) for n in SHARD_COUNTS[r % 4 :] + SHARD_COUNTS[: r % 4]
    ]
    written = {label: feed_sim.write_changes(f"shards-{label}", WARM_CHANGES, 1, WRITE_CHUNK) for label, _ in runs}
    warm = stream.read()
    for label, _ in runs:
        found = feed_sim.write_changes(f"shards-{label}", CHANGES // ROUNDS, ROUNDS, WRITE_CHUNK, first=WARM_CHANGES)
        written[label].update(found)
    timed = stream.read()
    by_count: dict[int, list[dict]] = {n: [] for n in SHARD_COUNTS}
    for label, shards in runs:
        found = _shard_run(f"shards-{label}", shards, warm, timed, written[label])
        if label != "warm-up":
            by_count[shards].append(found)
    return [_summary(n, found) for n, found in by_count.items()]


def _summary(shards: int, runs: list[dict]) -> dict:
    rates = sorted(run["per_second"] for run in runs)
    feeds = [run["feed"] for run in runs]
    return {
        "shards": shards,
        "changes": CHANGES,
        "runs": len(runs),
        "per_second_median": round(statistics.median(rates), 1),
        "per_second_runs": [round(rate, 1) for rate in rates],
        "seconds_median": round(statistics.median(run["seconds"] for run in runs), 2),
        "forward_seconds_median": round(statistics.median(run["forward_seconds"] for run in runs), 2),
        "messages_median": statistics.median(run["messages"] for run in runs),
        "handed_back": sum(run["handed_back"] for run in runs),
        "forward_retries": sum(run["forward_retries"] for run in runs),
        "dead_letters": sum(run["dead_letters"] for run in runs),
        **{name: sum(feed[name] for feed in feeds) for name in ("missing", "doubled", "gaps", "out_of_order")},
        "head_bytes_before": max(run["head_bytes"][0] for run in runs),
        "head_bytes_after": max(run["head_bytes"][1] for run in runs),
        "faultless": all(run["faultless"] for run in runs),
    }


def _batch_run(meter, records: list[dict], accounts: list[str], label: str) -> dict:
    """The records handed to the forwarder as one stream batch, then numbered by make run's poller: the forwarding's
    time (what holds the shard), the time until every record is numbered, and what the numbering asked of
    DynamoDB."""
    from chalicelib.store import feed

    numbering = feed_sim.Numbering(label).start()
    try:
        meter.reset()
        began = time.perf_counter()
        feed_sim.forward_shards([records], numbering.bell)
        forwarded = time.perf_counter() - began
        done = numbering.wait_for(len(records), WAIT_SECONDS)
        seconds = time.perf_counter() - began
    finally:
        numbering.stop()
    spent = {
        "dynamodb_requests": meter.requests,
        "operations": {name: meter.operations.count(name) for name in sorted(set(meter.operations))},
        "capacity_reported": round(meter.reported, 1),
        "capacity_recounted": round(meter.capacity, 1) if meter.recounting else None,
    }
    return {
        "records": len(records),
        "numbered": sum(feed.read_head(account).sequence for account in accounts),
        "forward_s": round(forwarded, 3),
        "seconds": round(seconds, 3) if done else None,
        "ms_per_record": round(1000 * seconds / len(records), 2),
        "messages": numbering.counts.handed,
        **spent,
    }


def accounts_section(stream: feed_sim.StreamRecords, meter) -> dict:
    """150 records of 150 accounts against 150 records of one account, each handed over as one stream batch: after a
    warm-up pass (not counted), timed (no recount), then again on other accounts with each transaction recounted
    (capacity as AWS bills it)."""
    found = {}
    for pass_, count, recount in (("warm-up", 30, False), ("timed", ACCOUNTS, False), ("capacity", ACCOUNTS, True)):
        many = [f"many-{pass_}-{n:03d}" for n in range(count)]
        one = f"one-{pass_}"
        for account in many:
            feed_sim.write_changes(account, 1, 1, 1)
        feed_sim.write_changes(one, count, 1, 1)
        records = stream.read()
        meter.recounting = recount
        one_run = _batch_run(meter, feed_sim.of_account(records, one), [one], f"one-{pass_}")
        mine = [r for account in many for r in feed_sim.of_account(records, account)]
        many_run = _batch_run(meter, mine, many, f"many-{pass_}")
        if pass_ != "warm-up":
            found[f"one account, {pass_}"], found[f"{count} accounts, {pass_}"] = one_run, many_run
    meter.recounting = False
    return found


def print_tables(found: dict) -> None:
    print()
    print(
        f"One account's {CHANGES} changes over N simulated shards: forwarded by a thread per shard at once (seconds), "
        f"then numbered from the full queue by make run's poller (changes/s); median of {REPEATS} runs"
    )
    print(
        f"{'shards':>6} {'forwarded s':>11} {'changes/s':>9} {'runs':>22} {'messages':>8} {'handed back':>11} "
        f"{'lost':>4} {'doubled':>7} {'gaps':>4} {'misordered':>10} {'head bytes before/after':>24}"
    )
    for row in found["shards"]:
        runs = " ".join(str(rate) for rate in row["per_second_runs"])
        head = f"{row['head_bytes_before']} / {row['head_bytes_after']}"
        print(
            f"{row['shards']:>6} {row['forward_seconds_median']:>11} {row['per_second_median']:>9} {runs:>22} "
            f"{row['messages_median']:>8} "
            f"{row['handed_back']:>11} {row['missing']:>4} {row['doubled']:>7} {row['gaps']:>4} "
            f"{row['out_of_order']:>10} {head:>24}"
        )
    first, last = found["shards"][0], found["shards"][-1]
    ratio = round(last["per_second_median"] / first["per_second_median"], 2) if first["per_second_median"] else 0
    found["shards_ratio"] = ratio
    print(
        f"  {last['shards']} shards ÷ {first['shards']}: {ratio} (target >= 1: {'met' if ratio >= 1 else 'MISSED'}); "
        f"every change once, in order, no gap: {'yes' if all(r['faultless'] for r in found['shards']) else 'NO'}"
    )
    print()
    print("Many accounts in one stream batch against one account")
    print(
        f"{'run':28} {'records':>7} {'forwarded s':>11} {'numbered s':>10} {'ms/record':>9} {'messages':>8} "
        f"{'requests':>8} {'capacity (Local / recounted)':>28}"
    )
    for name, row in found["accounts"].items():
        capacity = f"{row['capacity_reported']} / {row['capacity_recounted'] or '-'}"
        print(
            f"{name:28} {row['records']:>7} {row['forward_s']:>11} {row['seconds']:>10} {row['ms_per_record']:>9} "
            f"{row['messages']:>8} {row['dynamodb_requests']:>8} {capacity:>28}"
        )


def accounts_part() -> dict:
    from chalicelib.store import table

    meter = harness.attach(table.client(), recount_transactions=True)
    meter.recounting = False
    return accounts_section(feed_sim.StreamRecords(), meter)


PARTS = {
    "shards": lambda: shards_section(feed_sim.StreamRecords()),
    "accounts": accounts_part,
    "failing": feed_faults.failing_section,
    "replay": feed_faults.replay_section,
}


def main() -> int:
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        SIGNING_SECRET="bench-secret-bench-secret-bench-secret",
        POWERTOOLS_LOG_LEVEL="WARNING",
    )
    import logging

    logging.disable(logging.WARNING)
    found = {}
    for name, part in PARTS.items():
        began = time.perf_counter()
        with feed_sim.dynamodb_local(f"bench-feed-{name}"):
            found[name] = part()
        print(f"feed_scale: {name} took {time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
    print_tables(found)
    feed_faults.print_tables(found["failing"], found["replay"])
    (ROOT / "bench" / "feed_scale.json").write_text(json.dumps(found, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
