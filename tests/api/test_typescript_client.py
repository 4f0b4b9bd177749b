"""TypeScript's stock generator: openapi-typescript (no options) turns the served /openapi.json into types, and
tests/ts/client.ts, the docs' calls written with openapi-fetch, compiles under `tsc --strict` with no error and
runs against the app behind a real HTTP server. Versions are pinned in package.json / package-lock.json."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from tests.api.http_server import serving
from tests.conftest import SUPPLIER_TOKEN

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "node_modules" / ".bin"
CLIENT = ROOT / "tests" / "ts" / "client.ts"
TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "noEmitOnError": True,
        "target": "ES2022",
        "module": "NodeNext",
        "moduleResolution": "NodeNext",
        "skipLibCheck": True,
        "types": [],
        "lib": ["ES2022", "DOM"],
        "outDir": "out",
    },
    "files": ["client.ts", "api.d.ts"],
}

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (BIN / "tsc").exists() or not (BIN / "openapi-typescript").exists(),
    reason="node, or the npm packages of package.json (typescript, openapi-typescript), are not installed: run `make`",
)


def _run(args: list[str], cwd: Path, **env) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120, env={**os.environ, **env})


def test_the_readme_calls_compile_and_run_with_openapi_typescript(accounts_ready, tmp_path):
    (tmp_path / "node_modules").symlink_to(ROOT / "node_modules")
    (tmp_path / "package.json").write_text(json.dumps({"type": "module", "private": True}))
    (tmp_path / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    shutil.copy(CLIENT, tmp_path / "client.ts")
    with serving() as url:
        (tmp_path / "openapi.json").write_text(requests.get(f"{url}/openapi.json", timeout=10).text)
        generated = _run([str(BIN / "openapi-typescript"), "openapi.json", "-o", "api.d.ts"], tmp_path)
        assert generated.returncode == 0, generated.stdout + generated.stderr
        compiled = _run([str(BIN / "tsc"), "-p", "tsconfig.json"], tmp_path)
        assert (compiled.stdout + compiled.stderr).splitlines() == []
        assert compiled.returncode == 0
        ran = _run(["node", "out/client.js"], tmp_path, BASE_URL=url, TOKEN=SUPPLIER_TOKEN)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "ok\n", "")
