"""The sending state of a webhook event (store/events.py describes the item): a dispatcher's claim of an attempt,
the attempt recorded, a resend queued, a postponement, giving up. Each is conditional on the state as read, so two
dispatchers never send the same attempt. The outbox's own housekeeping, no feed change: each is a write through the
store's door (store/operations.py); a resend is the service's unit of work with its Idempotency-Key answer.
"""

import datetime as dt
import time

from ..domain.event_policy import MAX_LOGGED_ATTEMPTS, EventStatus
from ..domain.retry import attempts, back_off
from ..domain.timestamps import iso
from . import events, keys, operations, table
from .events import DELIVERED, FAILED, PENDING
from .operations import Operation
from .outcomes import LostLease, Refusal, Stale, TooLarge


def _key(event: dict) -> dict:
    return table.to_item(keys.event_key(event["account"], f"{event['created_at']}#{event['event_id']}"))


def _update(event: dict, update: str, condition: str, **named) -> dict:
    return {
        "TableName": table.name(),
        "Key": _key(event),
        "UpdateExpression": update,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": table.values(**named),
    }


def _conditional_update(event: dict, update: str, condition: str, returning: bool = False, **named):
    """None when written (with returning=True: the event as stored after), Stale when the condition failed,
    TooLarge when the item would be too large."""
    request = _update(event, update, condition, **named)
    written = operations.write(Operation({"Update": request}, Stale()), "ALL_NEW" if returning else None)
    return events.event_of(written) if returning and isinstance(written, dict) else written


def _update_with(request: dict, together: tuple[Operation, ...]) -> Refusal | None:
    """The event's update and `together` in one transaction: None when written; Stale (the event's own condition
    failed), TooLarge, the refusal of an operation of `together` whose condition failed, or Contended."""
    own = Operation({"Update": request}, Stale(), rank=1, oversized=TooLarge())
    return operations.commit([own.item, *(op.item for op in together)], [own, *together])


_AS_READ = "#status = :seen_status AND next_attempt_at = :seen AND attempts = :attempts"


def _as_read(event: dict) -> dict:
    return {"seen_status": event["status"], "seen": event["next_attempt_at"], "attempts": event["attempts"]}


def claim(event: dict, lease_until: dt.datetime) -> dict | Stale | TooLarge:
    """Take the attempt for ourselves until lease_until; Stale when another dispatcher got it first, TooLarge
    for an old event whose stored body leaves no room to claim it (give it up).

    Returns the event as it is stored after the claim (fresh, whatever the index showed).
    """
    lease = iso(lease_until)
    sort_key = keys.outbox_due(lease, event["account"], event["event_id"])
    return _conditional_update(
        event,
        "SET next_attempt_at = :lease, GSI1SK = :sk",
        _AS_READ,
        returning=True,
        lease=lease,
        sk=sort_key,
        **_as_read(event),
    )


def _last(entry: dict) -> tuple[str, dict]:
    """SET clauses and values naming the latest attempt's outcome."""
    if "status_code" in entry:
        return "last_status_code = :code", {"code": entry["status_code"]}
    return "last_error = :error", {"error": entry.get("error", "")}


def _last_removed(entry: dict) -> str:
    return "last_error" if "status_code" in entry else "last_status_code"


def record_attempt(
    claimed: dict,
    entry: dict,
    status: EventStatus,
    next_attempt: dt.datetime | None,
    now: dt.datetime,
    reason: str | None = None,
    compact: bool = False,
    together: tuple[Operation, ...] = (),
) -> Refusal | None:
    """Store the attempt we claimed and what follows: PENDING until next_attempt, or DELIVERED / FAILED (a
    resend that did not deliver a settled event gives its status as it was). The log keeps the latest
    MAX_LOGGED_ATTEMPTS attempts, resends included; `attempts` counts all. The attempt is a queued resend's, if
    any: the event stays due now while more are queued, so each accepted resend makes its own attempt.

    Conditional on our claim still holding. When it does not (the lease ran out, a resend was queued), the
    attempt is still counted and logged, and the state is left to whoever changed it (LostLease). TooLarge: the
    item cannot grow; compact=True drops the log and any stored body, for an old event too large to grow.
    `together`: what commits with it or not at all (the settings' unchanged_check, the account's parking); a
    refusal of theirs (Changed) or a conflict (Contended) writes nothing, and the caller decides again.
    """
    log = [entry] if compact else ((claimed.get("attempt_log") or []) + [entry])[-MAX_LOGGED_ATTEMPTS:]
    last, named = _last(entry)
    named.update(status=status.value, one=1, log=log, **_as_read(claimed))
    named["seen"] = claimed["next_attempt_at"]
    sets = ["#status = :status", "attempt_log = :log", last]
    removals = [_last_removed(entry), "resend", "GSI2PK", "GSI2SK"] + (["body"] if compact else [])
    left = max(events.queued_resends(claimed) - 1, 0)
    if left:
        sets.append("resends = :left")
        named["left"] = left
    else:
        removals.append("resends")
    if status == PENDING or left:
        next_iso = iso(now) if left else iso(next_attempt)  # the next queued resend is due at once
        sets += ["next_attempt_at = :next", "GSI1SK = :sk"]
        named.update(next=next_iso, sk=keys.outbox_due(next_iso, claimed["account"], claimed["event_id"]))
    else:
        removals += ["next_attempt_at", "GSI1PK", "GSI1SK"]
    if status != PENDING and status != claimed["status"]:
        sets.append("finished_at = :finished")
        named["finished"] = iso(now)
    if status == DELIVERED:
        removals.append("reason")
    elif reason is not None:
        sets.append("reason = :reason")
        named["reason"] = reason
    resends_condition, seen_resends = events.resends_as_read(claimed)
    update = f"REMOVE {', '.join(removals)} SET {', '.join(sets)} ADD attempts :one"
    condition = f"{_AS_READ} AND {resends_condition}"
    if together:
        written = _update_with(_update(claimed, update, condition, **named, **seen_resends), together)
    else:
        written = _conditional_update(claimed, update, condition, **named, **seen_resends)
    if isinstance(written, Stale):
        _log_only(claimed, entry)
        return LostLease()
    return written


def _log_only(event: dict, entry: dict, tries: int = 5) -> None:
    """Count and log an attempt on an event someone else changed meanwhile (its log still trimmed). An attempt
    made for a queued resend still uses one up, so the resends queued since get their own."""
    last, named = _last(entry)
    spent = events.queued_resends(event) > 0
    for attempt in attempts(None, tries, 0):  # bounded by count: the store reads no clock
        if attempt:
            back_off(attempt - 1, time.sleep, first=0.005, cap=0.05)
        current = events.get(event["account"], event["event_id"])
        if current is None:
            return
        log = ((current.get("attempt_log") or []) + [entry])[-MAX_LOGGED_ATTEMPTS:]
        sets, removals, more = ["attempt_log = :log", last], [_last_removed(entry), "GSI2PK", "GSI2SK"], {}
        queued = events.queued_resends(current)
        if spent and queued:
            removals.append("resend")
            if queued > 1:
                sets.append("resends = :left")
                more["left"] = queued - 1
            else:
                removals.append("resends")
                if current["status"] != PENDING:  # settled, and no resend left: out of the due queue
                    removals += ["next_attempt_at", "GSI1PK", "GSI1SK"]
        resends_condition, seen_resends = events.resends_as_read(current)
        written = _conditional_update(
            current,
            f"SET {', '.join(sets)} ADD attempts :one REMOVE {', '.join(removals)}",
            f"#status = :seen_status AND attempts = :attempts AND {resends_condition}",
            log=log,
            one=1,
            attempts=current["attempts"],
            seen_status=current["status"],
            **named,
            **more,
            **seen_resends,
        )
        if not isinstance(written, Stale):
            return


def resending(event: dict, now: dt.datetime) -> tuple[dict, Operation]:
    """One more attempt of the event queued (decisions §10: resend), whatever its state: the event as it is stored
    after, and the operation, conditional on the event as read (Stale: it changed or is gone; read it again). The
    dispatcher sends it like any due event, once per queued resend. The service writes it in a unit of work with
    its Idempotency-Key answer (decisions §11)."""
    now_iso = iso(now)
    queued = {key: value for key, value in event.items() if key != "resend"}
    queued.update(resends=events.queued_resends(event) + 1, next_attempt_at=now_iso)
    resends_condition, seen_resends = events.resends_as_read(event)
    update = {
        "TableName": table.name(),
        "Key": _key(event),
        "UpdateExpression": "REMOVE resend SET resends = :resends, next_attempt_at = :now, GSI1PK = :pk, GSI1SK = :sk",
        # As read, so the answer shows the event as queued.
        "ConditionExpression": "attribute_exists(PK) AND #status = :seen_status AND attempts = :attempts "
        f"AND {resends_condition}",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": table.values(
            resends=queued["resends"],
            now=now_iso,
            pk=keys.outbox_pending(event["account"]),
            sk=keys.outbox_due(now_iso, event["account"], event["event_id"]),
            seen_status=event["status"],
            attempts=event["attempts"],
            **seen_resends,
        ),
    }
    return queued, Operation({"Update": update}, Stale())


def postpone(event: dict, until: dt.datetime) -> None | Stale:
    """Move a pending event that was not tried to `until` (its account is parked); Stale when it changed."""
    until_iso = iso(until)
    return _conditional_update(
        event,
        "SET next_attempt_at = :until, GSI1SK = :sk",
        _AS_READ,
        until=until_iso,
        sk=keys.outbox_due(until_iso, event["account"], event["event_id"]),
        **_as_read(event),
    )


def give_up(event: dict, reason: str, now: dt.datetime) -> None | Stale:
    """FAILED without another attempt (it waited the whole retry window, or is too large to claim); Stale when
    it changed meanwhile. Only shrinks the item: an old event's stored body goes too."""
    return _conditional_update(
        event,
        # REMOVE first: moto checks the size after each clause (DynamoDB checks the result).
        "REMOVE next_attempt_at, GSI1PK, GSI1SK, GSI2PK, GSI2SK, body "
        "SET #status = :failed, reason = :reason, finished_at = :finished",
        _AS_READ,
        failed=FAILED.value,
        reason=reason,
        finished=iso(now),
        **_as_read(event),
    )
