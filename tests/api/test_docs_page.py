"""The page for people at /docs: no token, assets from the service itself, renders offline in headless Chromium."""

import re
import shutil
import subprocess

import pytest
import requests

from tests.api.http_server import serving


def test_the_page_and_its_assets_need_no_token_and_no_other_host(api):
    page = api.client.http.get("/docs")
    assert page.status_code == 200
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    html = page.body.decode()
    assert not re.search(r"(src|href)=\"(https?:)?//", html), "every asset must come from the service"
    for asset, kind in (("swagger-ui-bundle.js", "text/javascript"), ("swagger-ui.css", "text/css")):
        response = api.client.http.get(f"/docs/{asset}")
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith(kind)
        assert len(response.body) > 1000
    missing = api.client.http.get("/docs/secrets.txt")
    assert missing.status_code == 404


@pytest.fixture
def chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("Debian's chromium is not installed (make test installs it when run as root with apt-get)")
    return path


def test_the_reference_renders_with_its_operations_offline(accounts_ready, chromium, tmp_path):
    with serving() as url:
        assert requests.get(f"{url}/docs", timeout=10).status_code == 200
        result = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                f"--user-data-dir={tmp_path / 'profile'}",
                # The network is cut off: every host but this machine fails to resolve, and no proxy is reachable.
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--proxy-server=127.0.0.1:9",
                "--proxy-bypass-list=127.0.0.1",
                "--virtual-time-budget=15000",
                "--run-all-compositor-stages-before-draw",
                "--dump-dom",
                f"{url}/docs",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    dom = result.stdout
    assert "Supplier Ordering Service" in dom, result.stderr[-2000:]
    assert dom.count('class="opblock ') >= 40, "every operation is listed"
    assert "/products/{product_id}" in dom or "/products/\u200b{product_id}" in dom
    assert "Create a category with the id given in the body" in dom
    assert "Failed to load API definition" not in dom
