"""The served document passes Redocly's `recommended` rules and Spectral's `spectral:oas` with nothing to report."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "node_modules" / ".bin"


def _linter(name: str) -> str:
    path = BIN / name
    if not path.exists():
        if shutil.which("npm"):
            pytest.fail(f"{path} is missing: run `make deps` (npm ci installs it from package-lock.json)")
        pytest.skip("npm is not installed, so the OpenAPI linters (package.json) are not either")
    return str(path)


@pytest.fixture
def document_file(api, tmp_path):
    response = api.get("/openapi.json", token=None)
    path = tmp_path / "openapi.json"
    path.write_text(json.dumps(response.data))
    return path


def test_redocly_recommended_finds_nothing(document_file):
    result = subprocess.run(
        [_linter("redocly"), "lint", "--config", str(ROOT / "redocly.yaml"), "--format", "stylish", str(document_file)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    # Redocly reports "You have N warnings." (errors fail the exit code); a clean run says it is valid.
    assert "Your API description is valid" in output and not re.search(r"\d+ warnings?", output), output


def test_spectral_oas_finds_nothing(document_file):
    result = subprocess.run(
        [
            _linter("spectral"),
            "lint",
            "--ruleset",
            str(ROOT / ".spectral.yaml"),
            "--fail-severity",
            "hint",
            "--format",
            "text",
            str(document_file),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "" or "No results" in result.stdout, result.stdout
