"""The background phases fit the function's configured timeout (decisions §10, issue: budgets)."""

import datetime as dt
import json
import threading
from pathlib import Path

import pytest

from chalicelib.domain import event_policy, limits
from chalicelib.jobs import budget, handlers
from chalicelib.service import clock

CONFIG = Path(__file__).resolve().parents[2] / ".chalice" / "config.json"


def configured_timeouts() -> list[int]:
    config = json.loads(CONFIG.read_text())
    stages = config.get("stages", {}).values()
    return [config["lambda_timeout"]] + [stage["lambda_timeout"] for stage in stages if "lambda_timeout" in stage]


def test_the_budgets_are_derived_from_the_configured_timeout():
    assert set(configured_timeouts()) == {budget.LAMBDA_TIMEOUT_SECONDS}


@pytest.mark.parametrize("phase", handlers.PHASES, ids=lambda phase: phase.name)
def test_every_phase_can_start_work_and_record_its_last_step_before_the_function_ends(phase):
    window = phase.window(budget.LAMBDA_TIMEOUT_SECONDS)
    assert window >= 5  # each phase gets real time in every invocation
    assert window + phase.longest_step_seconds + budget.RECORD_MARGIN_SECONDS <= budget.LAMBDA_TIMEOUT_SECONDS


def test_the_longest_steps_are_the_jobs_own_timeouts():
    assert handlers.EVENTS.longest_step_seconds == event_policy.SEND_TIMEOUT_SECONDS
    assert handlers.IMAGES.longest_step_seconds == limits.IMAGE_DOWNLOAD_SECONDS
    assert handlers.IMPORTS.longest_step_seconds == limits.IMPORT_CHUNK_SECONDS


pytestmark = pytest.mark.usefixtures("fake_clock")


def test_phases_run_side_by_side_so_a_slow_one_does_not_eat_anothers_time():
    deadlines = {}
    release = threading.Event()

    def slow(deadline):
        deadlines["slow"] = deadline
        release.wait(5)
        return {}

    def quick(deadline):
        deadlines["quick"] = deadline
        release.set()
        return {"done": 1}

    now = clock.now()
    results = budget.run_phases(
        [budget.Phase("slow", 10, slow), budget.Phase("quick", 15, quick)], remaining_seconds=None
    )
    assert results == {"slow": {}, "quick": {"done": 1}}
    assert deadlines == {
        "slow": now + dt.timedelta(seconds=30 - 10 - budget.RECORD_MARGIN_SECONDS),
        "quick": now + dt.timedelta(seconds=30 - 15 - budget.RECORD_MARGIN_SECONDS),
    }


def test_less_time_left_than_configured_shortens_every_deadline():
    seen = {}
    now = clock.now()
    budget.run_phases([budget.Phase("p", 10, lambda d: seen.setdefault("deadline", d) and {})], 20)
    assert seen["deadline"] == now + dt.timedelta(seconds=20 - 10 - budget.RECORD_MARGIN_SECONDS)


def test_a_failing_phase_is_logged_and_the_others_still_run(caplog):
    def broken(deadline):
        raise RuntimeError("DynamoDB is unreachable")

    results = budget.run_phases([budget.Phase("broken", 1, broken), budget.Phase("fine", 1, lambda d: {"ok": 1})])
    assert results == {"fine": {"ok": 1}}
    assert "background phase broken failed" in caplog.text
