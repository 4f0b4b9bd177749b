"""Issue 34's section of `make bench`: the idle CPU of `make run` (before the stream woke its loops: ~14-17 % of a
core, measured 14.4 % on this machine), the write -> entry / webhook lag with and without a reader and under two
CPU hogs, and the starvation probe's last recorded figures (it runs in `make bench-starvation`, ~3 minutes)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import idle_cpu, issue34_results, lag  # noqa: E402

if __name__ == "__main__":
    figures = idle_cpu.measure()
    issue34_results.record("idle_cpu", figures)
    print(f"idle make run, % of one core over {figures['seconds']} s (before: 14.4): {figures['percent_of_a_core']}")
    figures = lag.measure()
    issue34_results.record("lag", figures)
    for name in ("no_reader", "reader_20_per_s", "two_cpu_hogs", "after_a_pause"):
        print(f"lag from a write's answer, {name}: " + ", ".join(f"{k} {v}" for k, v in figures[name].items()))
    issue34_results.show("starvation")
