"""The app registers every route the endpoint decorators declare, from http/route_table.py, without importing the
route modules (each is imported on its route's first request)."""

import subprocess
import sys
from pathlib import Path

from chalicelib.http import route_table
from chalicelib.http.routes_generated import ROUTES

ROOT = Path(__file__).resolve().parents[2]


def test_the_generated_table_lists_every_declared_route():
    assert not route_table.stale(), "run python -m chalicelib.http.route_table write"
    assert route_table.discovered() == sorted(ROUTES)


def test_every_declared_route_is_registered_with_its_content_types():
    from app import app

    for path, method, _module, name, content_types in ROUTES:
        entry = app.routes[path][method]
        assert (entry.view_name, entry.content_types) == (name, list(content_types)), (path, method)


def test_importing_the_app_imports_no_route_module():
    modules = sorted({route[2] for route in ROUTES})
    script = f"import sys, app; print([m for m in {modules!r} if m in sys.modules])"
    environment = {"AWS_DEFAULT_REGION": "us-east-1", "TABLE_NAME": "t", "SIGNING_SECRET": "s", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=environment,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"
