"""Imports run one way (DESIGN "Layers"; issue 17): http/ and jobs/ are entry points that call the service; the
service uses the domain, the store and the adapters; the store and the adapters never reach up.

Every module's imports are read from its source: `import`/`from` statements anywhere (inside functions too; in
`from x import y`, y when it is a module) and the modules named in strings (the "domain.x:Model" names routes give,
a name handed to importlib, or a full "chalicelib.x.y" name kept as data, as the generated route table keeps them).
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
FULL_NAME = re.compile(r"^chalicelib\.(?:" + "|".join(LAYERS) + r")\.[A-Za-z_][\w.]*$")
NAMED_MODULE = re.compile(r"^(?:chalicelib\.)?(" + "|".join(LAYERS) + r")(?:\.[A-Za-z_][\w.]*)?(?::\w+)?$")


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
    """(line, dotted name) of everything the module imports, at the top, inside functions or by a name."""
    module = _module_name(path)
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found += [(node.lineno, name) for name in _absolute(module, node)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and FULL_NAME.match(node.value):
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.Call):
            for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    match = NAMED_MODULE.match(argument.value)
                    if match and ("." in argument.value or ":" in argument.value):
                        name = argument.value.split(":", 1)[0]
                        found.append((node.lineno, name if name.startswith("chalicelib.") else f"chalicelib.{name}"))
    return list(dict.fromkeys(found))  # a full name handed to importlib is both a call's argument and data


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
        (
            "jobs",
            "import importlib\nevents = importlib.import_module('chalicelib.store.events')\n",
            "chalicelib.store.events",
        ),
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
    (package / "probe.py").write_text("from ..service import clock\n\ndef f():\n    from ..service import importing\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path / "chalicelib")
    assert violations() == []


# No circle (issue 26): a module never reaches itself through its imports, at the top, inside functions or by name.


def _module_of(name: str, modules: set[str]) -> str | None:
    """The chalicelib module a dotted name lands in ("chalicelib.store.feed.commit" -> "chalicelib.store.feed")."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {module it imports: the line of the first such import}."""
    paths = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    modules = {name.removesuffix(".__init__") for name in paths}
    graph = {}
    for name, path in paths.items():
        module = name.removesuffix(".__init__")
        edges = graph.setdefault(module, {})
        for line, imported_name in sorted(imported(path)):
            target = _module_of(imported_name, modules)
            # A package's __init__ is imported on the way to each of its modules; it is not an edge of the circle.
            if target and target != module and not module.startswith(target + "."):
                edges.setdefault(target, line)
    return graph


def _groups(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Each strongly connected group of two or more modules (Tarjan), sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

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


def _shortest_circle(graph: dict[str, dict[str, int]], group: list[str]) -> list[str]:
    """The shortest way from the group's first module back to itself, through the group only."""
    start, members = group[0], set(group)
    came_from, frontier = {}, [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if target in members and target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no way back to {start} in {group}")


def circles() -> list[str]:
    """Each circle of imports, named edge by edge with the line that makes it ("a:3 -> b:7 -> a")."""
    graph = import_graph()
    found = []
    for group in _groups(graph):
        circle = _shortest_circle(graph, group)
        steps = [f"{module}:{graph[module][target]}" for module, target in zip(circle, circle[1:])]
        found.append(
            " -> ".join([*steps, circle[-1]])
            + (f" (in a group of {len(group)}: {group})" if len(group) > len(circle) - 1 else "")
        )
    return found


def test_no_module_reaches_itself_through_its_imports():
    found = circles()
    assert not found, "import circles:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "sources, expected",
    [
        (
            {"store.a": "from . import b\n", "store.b": "def f():\n    from . import a\n"},
            "chalicelib.store.a:1 -> chalicelib.store.b:2 -> chalicelib.store.a",
        ),
        (
            {
                "store.a": "class A:\n    def f(self):\n        from .b import thing\n",
                "store.b": "import chalicelib.store.a\n",
            },
            "chalicelib.store.a:3 -> chalicelib.store.b:1 -> chalicelib.store.a",
        ),
        (
            {
                "store.a": "import importlib\nb = importlib.import_module('chalicelib.store.b')\n",
                "store.b": "from .a import thing\n",
            },
            "chalicelib.store.a:2 -> chalicelib.store.b:1 -> chalicelib.store.a",
        ),
        (
            {
                "store.a": "from .b import x\n",
                "store.b": "from .c import y\n",
                "store.c": "from chalicelib.store import a\n",
            },
            "chalicelib.store.a:1 -> chalicelib.store.b:1 -> chalicelib.store.c:1 -> chalicelib.store.a",
        ),
        (
            {
                "http.a": "from .b import x\n",
                "http.b": "def f():\n    from ..domain import c\n",
                "domain.c": "from ..http import a\n",
            },
            "chalicelib.domain.c:1 -> chalicelib.http.a:1 -> chalicelib.http.b:2 -> chalicelib.domain.c",
        ),
        (
            {"http.a": "from .b import x\n", "http.b": "ROUTES = (\n    ('/a', 'GET', 'chalicelib.http.a'),\n)\n"},
            "chalicelib.http.a:1 -> chalicelib.http.b:2 -> chalicelib.http.a",
        ),
    ],
    ids=["deferred", "in-a-method", "by-name", "three", "across-layers", "named-in-data"],
)
def test_a_circle_is_found_however_it_is_imported(tmp_path, monkeypatch, sources, expected):
    for name, source in sources.items():
        path = tmp_path / "chalicelib" / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    first = next(iter(sources)).replace(".", "/")
    (tmp_path / "chalicelib" / f"{first}_user.py").write_text("from . import a\n")  # reaches the circle, not in it
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path / "chalicelib")
    assert circles() == [expected]


def test_modules_that_import_each_other_one_way_are_no_circle(tmp_path, monkeypatch):
    sources = {"a": "from . import b, c\n", "b": "def f():\n    from .c import y\n", "c": "from .. import store\n"}
    package = tmp_path / "chalicelib" / "store"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, source in sources.items():
        (package / f"{name}.py").write_text(source)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PACKAGE", tmp_path / "chalicelib")
    assert circles() == []
