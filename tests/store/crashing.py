"""A Lambda that dies between two DynamoDB requests: before one is sent, or after it is answered."""

from chalicelib.store import table


class Crash(Exception):
    """The Lambda died here."""


class CrashingClient:
    """The real client, but the `at`-th request dies before it is sent, or after it is answered (`after`);
    `calls` names the requests made (at None: none dies)."""

    CALLS = {
        "get_item",
        "batch_get_item",
        "transact_write_items",
        "update_item",
        "put_item",
        "delete_item",
        "query",
        "batch_write_item",
    }

    def __init__(self, real, at: int | None, after: bool):
        self.real, self.at, self.after = real, at, after
        self.calls: list[str] = []

    def __getattr__(self, name):
        attribute = getattr(self.real, name)
        if name not in self.CALLS:
            return attribute

        def call(**request):
            index = len(self.calls)
            self.calls.append(name)
            if index == self.at and not self.after:
                raise Crash(f"before {name}")
            answer = attribute(**request)
            if index == self.at and self.after:
                raise Crash(f"after {name}")
            return answer

        return call


def crashing(monkeypatch, at: int | None, after: bool = False) -> CrashingClient:
    """Until `restored`, table.client() is a CrashingClient of the real one."""
    client = CrashingClient(table.client(), at, after)
    monkeypatch.setattr(table, "client", lambda: client)
    return client


def restored(monkeypatch, client: CrashingClient) -> None:
    monkeypatch.setattr(table, "client", lambda: client.real)
