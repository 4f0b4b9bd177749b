"""The curl sessions of docs/amendments.md and docs/standing-orders.md, run as written (their ```sh blocks, in
order, with bash) against a fresh `make run` each, on whatever day the test runs: their dates are computed. The
answers they print are checked here."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from chalicelib.localdev import dynamodb_local

from .test_local_run import TOKEN, runner_env, start

DOCS = Path(__file__).resolve().parents[1] / "docs"

pytestmark = pytest.mark.skipif(
    not dynamodb_local.java_available() or dynamodb_local.find_jar() is None or not shutil.which("curl"),
    reason="needs java 17+, DynamoDB Local (npm ci) and curl",
)


def session(doc: str) -> str:
    """The ```sh blocks of the doc's "A session with curl", joined."""
    text = (DOCS / doc).read_text()
    part = text.split("## A session with curl", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", part, re.S)
    assert blocks, f"{doc} has no sh blocks in its session"
    return "".join(blocks)


def run_on_fresh_make_run(doc: str, tmp_path: Path, **extra) -> list[str]:
    env = {**runner_env(LOCAL_DATA_DIR=str(tmp_path)), "TABLE_NAME": f"docs-{doc.split('.')[0]}", **extra}
    runner, base_url = start(env)
    try:
        shell = {**os.environ, "BASE": base_url, "SUPPLIER_TOKEN": TOKEN}
        ran = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + session(doc)], env=shell, capture_output=True, text=True, timeout=300
        )
    finally:
        assert runner.stop() == 0, runner.output()
    assert ran.returncode == 0, f"stdout:\n{ran.stdout}\nstderr:\n{ran.stderr}"
    assert ran.stderr == ""
    return ran.stdout.splitlines()


def parsed(line: str):
    try:
        return json.loads(line)
    except ValueError:
        return line


def test_the_amendments_session_runs_as_written(tmp_path):
    """make run started with TIMEZONE gives its demo account that zone (decisions §7), as create-account does."""
    out = [parsed(line) for line in run_on_fresh_make_run("amendments.md", tmp_path, TIMEZONE="America/New_York")]
    settings, category, ale, cider, customer, order, etag_read, accepted = out[:8]
    assert settings["allow_delivery_comments"] is True and category == {"id": "kegs", "name": "Kegs"}
    assert settings["timezone"] == "America/New_York"
    assert (ale["id"], cider["id"], customer["id"]) == ("ale-keg", "cider-keg", "aurora")
    assert order["deliveries"][0]["status"] == "REQUESTED"
    assert (etag_read, accepted) == ("1-0", "ACCEPTED")  # the header's quotes read as JSON: a string
    imported, etag_accepted, amended, refused, etag_amended, answered, feed = out[8:]
    assert imported["status"] == "IMPORTED"
    assert etag_accepted == "1-1"  # the integration state left it as it was
    assert amended["status"] == "REQUESTED"
    assert amended["request"]["message"] == "Two more kegs, no cider"
    assert amended["amendments"][0]["items"] == [
        {"id": "ale-keg", "bundle": None, "action": "CHANGED", "count_before": 4, "count": 6},
        {"id": "cider-keg", "bundle": None, "action": "REMOVED", "count_before": 6, "count": 0},
    ]
    assert (refused, etag_amended) == (412, "1-2")
    assert answered == [{"id": "ale-keg", "count": 5, "vessel_count": 5, "reason": "OUT_OF_STOCK"}]
    assert feed == "['delivery.requested', 'delivery.accepted', 'delivery.integration', 'delivery.amended', " + (
        "'delivery.accepted']"
    )


def test_the_standing_orders_session_runs_as_written(tmp_path):
    out = [parsed(line) for line in run_on_fresh_make_run("standing-orders.md", tmp_path)]
    settings, category, lager, cider, customer, written, skipped, listed, delivery, paused, status, resumed = out
    assert settings["timezone"] == "Europe/Helsinki" and len(settings["dates_with_no_delivery"]) == 1
    assert (category["id"], lager["id"], cider["status"], customer["id"]) == (
        "drinks",
        "lager-keg",
        "OUT_OF_STOCK",
        "bar-aurora",
    )
    assert written["id"] == "weekly-kegs" and written["paused"] is False
    assert skipped["status"] == "SKIPPED"
    occurrences = listed["occurrences"]
    assert [o["status"] for o in occurrences] == ["PLACED", "PLANNED", "UNDELIVERABLE", "SKIPPED", "PLANNED"]
    assert occurrences[0]["delivery_ids"] == [1]
    assert occurrences[0]["left_out"] == [{"id": "cider-keg", "reason": "OUT_OF_STOCK"}]
    assert occurrences[2]["errors"] == [
        {"path": "scheduled", "message": "is a date on which the supplier delivers none of it"}
    ]
    assert occurrences[2]["date"] == settings["dates_with_no_delivery"][0]
    assert [o["date"] for o in occurrences][3] == skipped["date"]
    assert [i["id"] for i in delivery["request"]["items"]] == ["lager-keg"]
    assert delivery["standing_order"] == {"id": "weekly-kegs", "date": occurrences[0]["date"]}
    assert (paused, status, resumed) == (True, "PAUSED", False)
