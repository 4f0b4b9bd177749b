"""The unit of work is the one commit boundary of a write that records changes (issue 35): read from the source.

- Only store/unit_of_work.py builds the feed's marks (feed_marks.marked: what the table's stream numbers) and
  commits a transaction of changes; only store/feed_numbering.py writes feed entries and the feed head (store/feed.py
  reads them and commits nothing). The modules below still call TransactWriteItems for writes no feed reader sees,
  each named with why.
- Services own the unit of work but not the table: service/ never imports the table, its keys or a DynamoDB codec.
"""

import ast

from chalicelib.store import feed_marks
from tests.test_import_direction import PACKAGE, ROOT, imported

UNIT_OF_WORK = "chalicelib/store/unit_of_work.py"
# Modules that may call transact_write_items themselves: none records a Change.
OWN_TRANSACTIONS = {
    UNIT_OF_WORK: "the unit of work: every write that records changes",
    "chalicelib/store/feed_numbering.py": "the feed's own numbering: moves the head, writes the entries and events",
    "chalicelib/store/tokens.py": "API tokens and their lookup items: nothing the feed shows",
    "chalicelib/store/event_attempts.py": "the webhook outbox's resend and its Idempotency-Key answer: housekeeping",
    "chalicelib/store/import_items.py": "the import queue's items: housekeeping",
    "chalicelib/store/idempotency.py": "an Idempotency-Key answer recorded after its work, with its parts: no Change",
    "chalicelib/store/migrations.py": "a one-off migration giving deposit types their own items: no Change",
}
# What a service may not import: the table, its keys, DynamoDB's own codec.
STORE_INTERNALS = ("chalicelib.store.table", "chalicelib.store.keys", "boto3", "botocore")


def _sources() -> dict[str, ast.AST]:
    return {str(path.relative_to(ROOT)): ast.parse(path.read_text(), str(path)) for path in PACKAGE.rglob("*.py")}


def _calls(tree: ast.AST, name: str) -> list[int]:
    """Lines calling an attribute `name` (x.name(...)) or a bare `name(...)`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = node.func
            if (isinstance(called, ast.Attribute) and called.attr == name) or (
                isinstance(called, ast.Name) and called.id == name
            ):
                found.append(node.lineno)
    return found


def test_only_the_unit_of_work_and_named_housekeeping_call_transact_write_items():
    calling = {module for module, tree in _sources().items() if _calls(tree, "transact_write_items")}
    assert calling <= set(OWN_TRANSACTIONS), sorted(calling - set(OWN_TRANSACTIONS))


def test_only_the_unit_of_work_builds_marks_and_nothing_else_names_the_mark():
    sources = _sources()
    building = {module for module, tree in sources.items() if _calls_of(tree, "feed_marks", "marked")}
    assert building == {UNIT_OF_WORK}
    assert not [module for module, tree in sources.items() if _imports_name(tree, "feed_marks", "marked")]
    naming = {module for module, tree in sources.items() if _strings(tree) & {feed_marks.MARK}}
    assert naming == {"chalicelib/store/feed_marks.py"}  # no write sets the attribute by hand


def test_only_the_numbering_writes_feed_entries_and_the_head_and_the_feed_reads_commit_nothing():
    sources = _sources()
    naming = {module for module, tree in sources.items() if _names(tree) & FEED_KEYS}
    assert naming == {"chalicelib/store/keys.py", "chalicelib/store/feed.py", NUMBERING}
    assert not [call for call in WRITE_CALLS if _calls(sources["chalicelib/store/feed.py"], call)]


NUMBERING = "chalicelib/store/feed_numbering.py"
FEED_KEYS = {"feed_entry_key", "feed_head_key", "feed_pk", "FEED_HEAD_SK"}
WRITE_CALLS = ("put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item", "commit")


def _calls_of(tree: ast.AST, owner: str, name: str) -> list[int]:
    """Lines calling `owner.name(...)`."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == name
        and getattr(node.func.value, "id", None) == owner
    ]


def _imports_name(tree: ast.AST, module: str, name: str) -> bool:
    """`from ...module import name` anywhere (a way round _calls_of)."""
    return any(
        isinstance(node, ast.ImportFrom)
        and (node.module or "").rsplit(".", 1)[-1] == module
        and name in {alias.name for alias in node.names}
        for node in ast.walk(tree)
    )


def _strings(tree: ast.AST) -> set[str]:
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def _names(tree: ast.AST) -> set[str]:
    """Every name and attribute the module uses or defines."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add(node.name)
    return found


def test_services_import_neither_the_table_nor_its_keys_nor_a_dynamodb_codec():
    offending = [
        f"{path.relative_to(ROOT)}:{line} {name}"
        for path in sorted((PACKAGE / "service").rglob("*.py"))
        for line, name in imported(path)
        if any(name == internal or name.startswith(internal + ".") for internal in STORE_INTERNALS)
    ]
    assert offending == []
