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
        ("service", "from ..jobs import event_lanes\n", "chalicelib.jobs.event_lanes"),
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
    (package / "probe.py").write_text("from ..service import clock\nfrom ..lazy import lazy\nx = lazy('chalicelib.service.importing')\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path / "chalicelib")
    assert violations() == []


# No circle (issue 26): a module never reaches itself through its imports, eager, deferred or lazy alike.


def _module_of(name: str, modules: set[str]) -> str | None:
    """The chalicelib module a dotted name lands in ("chalicelib.store.feed.commit" -> "chalicelib.store.feed")."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    modules = {name.removesuffix(".__init__") for name in paths}
    graph = {}
    for name, path in paths.items():
        module = name.removesuffix(".__init__")
        targets = {_module_of(imported_name, modules) for _, imported_name in imported(path)}
        # A package's __init__ is imported on the way to each of its modules; it is not an edge of the circle.
        graph[module] = {t for t in targets if t and t != module and not module.startswith(t + ".")}
    return graph


def circles() -> list[list[str]]:
    """Each strongly connected group of two or more modules (Tarjan), sorted, as one circle to report."""
    graph, index, low, stack, on_stack, found = import_graph(), {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_module_reaches_itself_through_its_imports():
    assert circles() == []


@pytest.mark.parametrize(
    "sources",
    [
        {"a": "from . import b\n", "b": "def f():\n    from . import a\n"},
        {"a": "from ..lazy import lazy\nb = lazy('chalicelib.store.b')\n", "b": "from .a import thing\n"},
        {"a": "from .b import x\n", "b": "from .c import y\n", "c": "from chalicelib.store import a\n"},
    ],
    ids=["deferred", "lazy", "three"],
)
def test_a_circle_is_found_however_it_is_imported(tmp_path, monkeypatch, sources):
    package = tmp_path / "chalicelib" / "store"
    package.mkdir(parents=True)
    (tmp_path / "chalicelib" / "lazy.py").write_text("def lazy(name): ...\n")
    for name, source in sources.items():
        (package / f"{name}.py").write_text(source)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path / "chalicelib")
    assert circles() == [sorted(f"chalicelib.store.{name}" for name in sources)]
