"""Which accounts have pending feed entries: the sparse index GSI3 `FEED#PENDING#<shard>` (docs/feed.md).

Every pending entry carries GSI3SK `<account>#<resource key>`, so a shard's entries are grouped by account. A
sweep reads one entry per account (a Query of Limit 1, then a skip past that account's keys): one busy account
with thousands of pending entries costs it one read, like a quiet account with one, and never fills the sweep.
Within a shard the sweep goes on where the last one in this process stopped, so when a shard holds more
accounts than one sweep takes, each gets its turn.
"""

from . import keys, table

_resume: dict[str, str] = {}  # per shard: the index key the next sweep in this process starts after


def _next(partition: str, after: str | None, upto: str | None) -> dict | None:
    condition, named = "GSI3PK = :pk", {"pk": partition}
    if after is not None:
        condition += " AND GSI3SK > :after"
        named["after"] = after
    request = {
        "TableName": table.name(),
        "IndexName": keys.GSI3,
        "KeyConditionExpression": condition,
        "ExpressionAttributeValues": table.values(**named),
        "Limit": 1,
    }
    items = table.client().query(**request).get("Items", [])
    if not items:
        return None
    item = table.from_item(items[0])
    return item if upto is None or item["GSI3SK"] <= upto else None


def _accounts_of_shard(partition: str, limit: int) -> list[str]:
    """At most `limit` accounts of one shard, from where the last sweep stopped, wrapping round once."""
    start = _resume.get(partition)
    found: list[str] = []
    after, upto, wrapped = start, None, start is None
    while len(found) < limit:
        item = _next(partition, after, upto)
        if item is None:
            if wrapped:
                break
            after, upto, wrapped = None, start, True
            continue
        account = keys.account_of_pk(item["PK"])
        if account not in found:
            found.append(account)
        after = keys.past_account(item["GSI3SK"])
        _resume[partition] = after
    if len(found) < limit:
        _resume.pop(partition, None)  # the whole shard was read: the next sweep starts at its beginning
    return found


def accounts_pending(limit: int) -> list[str]:
    """Accounts with pending entries (the index lags a little), at most `limit` from each shard, each once."""
    accounts: list[str] = []
    for partition in keys.queue_partitions(keys.FEED_PENDING):
        accounts += _accounts_of_shard(partition, limit)
    return list(dict.fromkeys(accounts))
