"""Safe retries of POST requests (decisions §11).

The key is claimed with a conditional put before the work, so a concurrent duplicate gets 409 instead of doing
the work twice. The response is recorded after the work, or, better, inside the very transaction that does the
work (`IdempotencyClaim.completion`), so a request that dies after committing still replays its answer. A claim
whose request died before committing goes stale after 60 s and may then be taken over by a retry.
Replays are matched on a fingerprint of method, route, path parameters, query string, Content-Type and raw body:
the same key with another request is refused with 400 conflict. Only final answers are recorded (decisions §11):
after a 409 (busy, contended) or a 5xx the key is released, so a retry does the work and gets the real outcome.
"""

import hashlib
import json
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..domain.errors import Busy, Conflict, invalid
from ..domain.field_order import Order, ordered
from ..domain.rendering import json_text
from ..store import idempotency as records
from ..store import outcomes
from . import clock

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255
IN_PROGRESS = f"a request with this {HEADER} is still in progress; retry later"
JSON_HEADERS = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class Replay:
    status: int
    headers: dict
    body: str


@dataclass
class IdempotencyClaim:
    """A claimed key. A use case that writes a transaction may record its answer in it via `completion`."""

    record: records.ClaimedKey
    order: Order | None = None  # the field order the route renders its answer in (decisions §3)
    status: int = 200  # the route's status of success
    headers_of: Callable[[dict], dict] | None = None  # the headers the route adds to an answer (a Location)
    recorded: bool = field(default=False)

    def completion(self, body: dict) -> records.Completion:
        """`body` as this request's JSON answer of success, for the store to record in the work's own
        transaction (if our claim still holds then)."""
        self.recorded = True
        headers = {**JSON_HEADERS, **(self.headers_of(body) if self.headers_of else {})}
        return records.Completion(self.record, self.status, headers, self.text(body))

    def text(self, body: dict) -> str:
        """The body as the route answers it (http/responses.to_json), so a replay is byte for byte the same."""
        return json_text(ordered(body, self.order))


def fingerprint(
    method: str,
    route: str,
    params: dict | None,
    query: Iterable[tuple[str, str]],
    content_type: tuple[str, tuple[tuple[str, str], ...]],
    body: bytes,
) -> str:
    """The request as the service reads it (decisions §11): query pairs (one per name) as a set, Content-Type as
    parsed."""
    digest = hashlib.sha256()
    parts = (params or {}, sorted(set(query)), content_type)
    for part in (method, route, *(json.dumps(p, sort_keys=True) for p in parts)):
        digest.update(part.encode() + b"\0")
    digest.update(body)
    return digest.hexdigest()


def _valid_key(key: str) -> str:
    if not 1 <= len(key) <= MAX_KEY_LENGTH or not all(" " <= c <= "~" for c in key):
        raise invalid(HEADER, f"must be 1 to {MAX_KEY_LENGTH} printable ASCII characters")
    return key


def begin(
    account: str, scope: str, key: str, request_fingerprint: str, order: Order | None = None, status: int = 200
) -> IdempotencyClaim | Replay:
    """Claim the key, or the first answer to replay; Conflict (400) for another request, Busy (409) meanwhile.
    `order`, `status`: the field order and status of the route's answer, for one recorded in the work's
    transaction."""
    now = int(clock.now().timestamp())
    found = records.claim(account, scope, _valid_key(key), request_fingerprint, now)
    if isinstance(found, records.ClaimedKey):
        return IdempotencyClaim(found, order, status)
    if isinstance(found, outcomes.Contended):  # claimed and let go again and again while we tried
        raise Busy(IN_PROGRESS)
    if found.fingerprint != request_fingerprint:
        raise Conflict(f"this {HEADER} was already used with a different request")
    if found.state == records.COMPLETE:
        return Replay(found.status, dict(found.headers or {}), found.body or "")
    raise Busy(IN_PROGRESS)


def is_final(status: int) -> bool:
    """An answer a retry would get again. 409 means "busy, try again" and a 5xx is our failure: neither is final."""
    return status < 500 and status != 409


def finish(claim: IdempotencyClaim, status: int, headers: dict, body: str, work_failed: bool) -> None:
    """Record a final answer (unless the work's own transaction did), or release the key for a retry.

    work_failed: the use case raised, so a completion it put in its transaction was not written.
    """
    if not is_final(status):
        records.release(claim.record)
    elif work_failed or not claim.recorded:
        records.complete(claim.record, status, headers, body)


def abandon(claim: IdempotencyClaim) -> None:
    records.release(claim.record)
