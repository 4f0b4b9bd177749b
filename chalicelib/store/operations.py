"""What a repository gives the unit of work (store/unit_of_work.py): one transaction item and what a refusal of
it means. Its own module, so that what the unit of work imports to mark changes (store/feed_resources.py, which
reads resources through the repositories) never leads back to it."""

from collections.abc import Callable
from dataclasses import dataclass

from . import table
from .outcomes import Refusal


@dataclass(frozen=True)
class Operation:
    """One TransactWriteItems entry ({"Put": ...}, {"Update": ...}, {"Delete": ...}, {"ConditionCheck": ...}) and
    what a failed condition on it means: an outcome, a function that tells which (called after the failure: it may
    read), or None when it has no condition that may fail. When several fail, the highest `rank` answers (the first
    added among equals). `oversized`: the outcome of the item refused for passing 400 KB, when its writer plans
    for that."""

    item: dict
    refused: Refusal | Callable[[], Refusal] | None = None
    rank: int = 0
    oversized: Refusal | None = None  # what DynamoDB's ValidationError on this item (past 400 KB) means, if planned

    @property
    def key(self) -> tuple[str, str]:
        return table.item_key(self.item)
