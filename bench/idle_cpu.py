"""Issue 34: the CPU an idle `make run` uses (all its processes, DynamoDB Local included), over 60 s after it
settled: `python bench/idle_cpu.py`. Writes bench/issue34.json's "idle_cpu". Target: under 5 % of one core."""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import issue34_results  # noqa: E402
from bench.localrun import LocalRun, cpu_share  # noqa: E402

SETTLE_SECONDS = 20
MEASURE_SECONDS = 60


def measure() -> dict:
    with LocalRun() as run:
        time.sleep(SETTLE_SECONDS)
        return {"seconds": MEASURE_SECONDS, "percent_of_a_core": cpu_share(run, MEASURE_SECONDS)}


if __name__ == "__main__":
    figures = measure()
    print(f"idle make run over {figures['seconds']} s: {figures['percent_of_a_core']} (% of one core)")
    issue34_results.record("idle_cpu", figures)
