"""The unit of work is the one commit boundary of a write that records changes (issue 35): read from the source.

- Every DynamoDB write of chalicelib goes through the store's one door (store/operations.py), whose decoder finds a
  refused item by its key; the few functions that call DynamoDB themselves are named below with why (issue 44).
- Only store/unit_of_work.py builds the feed's marks (feed_marks.marked: what the table's stream numbers) and
  commits a transaction of changes; only store/feed_sequencer.py writes feed entries and the feed head (store/feed.py
  reads them and commits nothing).
- Services own the unit of work but not the table: service/ never imports the table, its keys or a DynamoDB codec.
"""

import ast

from chalicelib.store import feed_marks
from tests.test_import_direction import PACKAGE, ROOT, imported

UNIT_OF_WORK = "chalicelib/store/unit_of_work.py"
DOOR = "chalicelib/store/operations.py"
WRITE_CALLS = ("put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item")
# Every function of chalicelib that names a DynamoDB write call, with why it is not the door's caller.
OUTSIDE_THE_DOOR = {
    f"{DOOR}:commit": "the door: every other write goes through it (write, commit), its refusal decoded by item key",
    "chalicelib/store/feed_sequencer.py:number": "the feed's numbering: reads every record's reason by key (numbered "
    "before: skipped, the rest written at once) and retries the head itself, more than one outcome can say",
    "chalicelib/store/idempotency.py:claim": "an Idempotency-Key claim: the holder's record comes back with the "
    "refusal itself (ReturnValuesOnConditionCheckFailure), which no outcome carries",
    "chalicelib/store/batch.py:write_items": "BatchWriteItem of import rows and purges: unconditional, its "
    "unprocessed items retried, no refusal to decode",
}
# What a service may not import: the table, its keys, DynamoDB's own codec.
STORE_INTERNALS = ("chalicelib.store.table", "chalicelib.store.keys", "boto3", "botocore")
# Reading DynamoDB's refusal: the door's job, and that of the functions above that keep their own write.
DECODERS = ("is_conditional_failure", "is_transaction_conflict", "is_too_large", "cancellation_codes",
            "cancellation_reasons")  # fmt: skip
DECODING = {f"{DOOR}:refusal", "chalicelib/store/feed_sequencer.py:number", "chalicelib/store/idempotency.py:claim",
            "chalicelib/store/table.py:read_together"}  # fmt: skip


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


def _naming(tree: ast.AST, names: tuple[str, ...]) -> set[str]:
    """The functions (by name; `<module>` at the top) that name one of `names`: as an attribute (x.put_item, called
    or not), a bare name, or a string (getattr(client, "put_item"))."""
    found = set()

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name if function == "<module>" else function  # a nested function is its outer one's
        named = (
            (isinstance(node, ast.Attribute) and node.attr in names)
            or (isinstance(node, ast.Name) and node.id in names)
            or (isinstance(node, ast.Constant) and node.value in names)
        )
        if named:
            found.add(function)
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "<module>")
    return found


def test_every_write_call_is_the_doors_or_named_with_why_it_is_not():
    writing = {f"{module}:{function}" for module, tree in _sources().items() for function in _naming(tree, WRITE_CALLS)}
    assert writing == set(OUTSIDE_THE_DOOR), (
        sorted(writing - set(OUTSIDE_THE_DOOR)),
        sorted(set(OUTSIDE_THE_DOOR) - writing),
    )
    assert all(reason.strip() for reason in OUTSIDE_THE_DOOR.values())


def test_only_the_door_reads_a_refusal_of_dynamodb():
    decoding = {f"{module}:{function}" for module, tree in _sources().items() for function in _naming(tree, DECODERS)}
    decoding -= {f"chalicelib/store/table.py:{name}" for name in DECODERS}  # their own definitions
    assert decoding == DECODING, sorted(decoding ^ DECODING)


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
    assert not [call for call in (*WRITE_CALLS, "commit", "write") if _calls(sources["chalicelib/store/feed.py"], call)]


NUMBERING = "chalicelib/store/feed_sequencer.py"
FEED_KEYS = {"feed_entry_key", "feed_head_key", "feed_pk", "FEED_HEAD_SK"}


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
