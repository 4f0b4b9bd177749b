"""The unit of work is the one commit boundary of a write that records changes (issue 35): read from the source.

- Only store/unit_of_work.py writes the feed's pending entries (feed.pending_updates) and commits a transaction of
  changes; store/feed.py has no commit of its own any more. The modules below still call TransactWriteItems for
  writes no feed reader sees, each named with why.
- Services own the unit of work but not the table: service/ never imports the table, its keys or a DynamoDB codec.
"""

import ast

from tests.test_import_direction import PACKAGE, ROOT, imported

UNIT_OF_WORK = "chalicelib/store/unit_of_work.py"
# Modules that may call transact_write_items themselves: none records a Change.
OWN_TRANSACTIONS = {
    UNIT_OF_WORK: "the unit of work: every write that records changes",
    "chalicelib/store/feed_numbering.py": "the feed's own numbering: moves the head over pending entries",
    "chalicelib/store/tokens.py": "API tokens and their lookup items: nothing the feed shows",
    "chalicelib/store/event_attempts.py": "the webhook outbox's resend and its Idempotency-Key answer: housekeeping",
    "chalicelib/store/import_items.py": "the import queue's items: housekeeping",
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


def test_only_the_unit_of_work_writes_pending_entries_and_the_feed_commits_nothing():
    sources = _sources()
    writing = {module for module, tree in sources.items() if _calls(tree, "pending_updates")}
    assert writing == {UNIT_OF_WORK}
    feed = sources["chalicelib/store/feed.py"]
    assert "commit" not in {node.name for node in ast.walk(feed) if isinstance(node, ast.FunctionDef)}
    assert not [module for module, tree in sources.items() if _feed_commit(tree)]


def _feed_commit(tree: ast.AST) -> bool:
    """`feed.commit` anywhere: the raw-item commit the unit of work replaced."""
    return any(
        isinstance(node, ast.Attribute) and node.attr == "commit" and getattr(node.value, "id", None) == "feed"
        for node in ast.walk(tree)
    )


def test_services_import_neither_the_table_nor_its_keys_nor_a_dynamodb_codec():
    offending = [
        f"{path.relative_to(ROOT)}:{line} {name}"
        for path in sorted((PACKAGE / "service").rglob("*.py"))
        for line, name in imported(path)
        if any(name == internal or name.startswith(internal + ".") for internal in STORE_INTERNALS)
    ]
    assert offending == []
