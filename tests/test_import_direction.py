"""Imports run one way (DESIGN "Layers"; issue 17): http/ and jobs/ are entry points that call the service; the
service uses the domain, the store and the adapters; the store and the adapters never reach up.

Every module's imports are read from its source: `import`/`from` statements anywhere (inside functions too) and
the names loaded lazily (chalicelib/lazy.py `lazy`/`load`, and the "domain.x:Model" names routes give).
"""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "chalicelib"
LAYERS = ("http", "jobs", "service", "domain", "store", "adapters")
# What each layer may not import. Everything else is allowed (the domain and the small shared modules).
FORBIDDEN = {
    "http": {"store", "jobs", "adapters"},
    "jobs": {"store", "http", "adapters"},
    "service": {"http", "jobs"},
    "store": {"service", "http", "jobs", "adapters"},
    "adapters": {"service", "store", "http", "jobs"},
    "domain": {"service", "store", "http", "jobs", "adapters", "boto3", "botocore", "chalice"},
}
LAZY_NAME = re.compile(r"^(?:chalicelib\.)?(" + "|".join(LAYERS) + r")(?:\.[A-Za-z_][\w.]*)?(?::\w+)?$")


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def _absolute(module: str, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        parts = module.split(".")[: -node.level]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" for alias in node.names]  # a module or a name of one: either names its layer


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of everything the module imports, eagerly, inside functions or lazily."""
    module = _module_name(path)
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found += [(node.lineno, name) for name in _absolute(module, node)]
        elif isinstance(node, ast.Call):
            for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    match = LAZY_NAME.match(argument.value)
                    if match and ("." in argument.value or ":" in argument.value):
                        name = argument.value.split(":", 1)[0]
                        found.append((node.lineno, name if name.startswith("chalicelib.") else f"chalicelib.{name}"))
    return found


def _layer_of(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] == "chalicelib" and len(parts) > 1:
        return parts[1] if parts[1] in LAYERS else None
    return parts[0] if parts[0] in ("boto3", "botocore", "chalice") else None


def violations() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = _layer_of(_module_name(path))
        if layer not in FORBIDDEN:
            continue
        for line, name in imported(path):
            target = _layer_of(name)
            if target in FORBIDDEN[layer]:
                found.append(f"{path.relative_to(ROOT)}:{line} ({layer}) imports {name} ({target})")
    return found


def test_every_import_follows_the_arrows():
    assert violations() == []


@pytest.mark.parametrize(
    "layer, source, offending",
    [
        ("jobs", "from ..store import events\n", "chalicelib.store.events"),
        ("jobs", "def f():\n    from chalicelib.store import keys\n", "chalicelib.store.keys"),
        ("jobs", "from ..lazy import lazy\nevents = lazy('chalicelib.store.events')\n", "chalicelib.store.events"),
        ("http", "from .. import store\n", "chalicelib.store"),
        ("http", "endpoint(bp, '/x', 'GET', body='store.products:Thing')\n", "chalicelib.store.products"),
        ("service", "from ..jobs import webhooks\n", "chalicelib.jobs.webhooks"),
        ("store", "from ..service import clock\n", "chalicelib.service.clock"),
        ("domain", "import boto3\n", "boto3"),
    ],
)
def test_an_import_against_the_arrows_is_found(tmp_path, monkeypatch, layer, source, offending):
    package = tmp_path / "chalicelib" / layer
    package.mkdir(parents=True)
    (package / "probe.py").write_text(source)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path / "chalicelib")
    found = violations()
    assert len(found) == 1 and offending in found[0], found


def test_allowed_imports_pass(tmp_path, monkeypatch):
    package = tmp_path / "chalicelib" / "jobs"
    package.mkdir(parents=True)
    (package / "probe.py").write_text("from ..service import clock\nfrom ..lazy import lazy\nx = lazy('chalicelib.service.imports')\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path / "chalicelib")
    assert violations() == []
