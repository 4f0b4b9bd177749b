"""Modules a reader can hold in mind (issue 26.6): none of the service's own modules passes 400 lines."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 400


def test_no_module_of_the_service_passes_400_lines():
    modules = [ROOT / "app.py", *sorted((ROOT / "chalicelib").rglob("*.py"))]
    too_long = {
        str(module.relative_to(ROOT)): lines
        for module in modules
        if (lines := len(module.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert len(modules) > 100 and too_long == {}
