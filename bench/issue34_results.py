"""bench/issue34.json: the latest figures of the issue-34 benchmarks, each with the date it was measured."""

import datetime as dt
import json
from pathlib import Path

PATH = Path(__file__).resolve().parent / "issue34.json"


def record(name: str, figures: dict) -> None:
    results = json.loads(PATH.read_text()) if PATH.exists() else {}
    results[name] = {"measured": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), **figures}
    PATH.write_text(json.dumps(results, indent=2) + "\n")


def show(name: str) -> None:
    results = json.loads(PATH.read_text()) if PATH.exists() else {}
    print(f"{name} (last recorded): {json.dumps(results.get(name, 'not measured yet'))}")
