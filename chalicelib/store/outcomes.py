"""How the store says a write did not happen: one frozen dataclass per meaning, shared by every repository.

A write answers its success value (what it stored; None when there is nothing to give back) or one of these: every
write's refusal is decoded in one place, store/operations.py `refusal`, as the outcome its refused item declared,
found by the item's key, never by its position. Callers tell them apart with `isinstance` (or `match`); two answers
of the same meaning compare equal. A read answers the value, or None when there is none. Exceptions are only for
what no caller plans for: a cursor that fails its signature (cursor.BadCursor: bad input, decoded at the edge of a
list), rows of an import gone from under it (import_items.RowsMissing), and DynamoDB's own errors
(batch.StillThrottled: it kept throttling through every retry; table.WriteFailed: a write refused for a reason no
outcome declared).
"""

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class Refusal:
    """Why the store did not do what was asked (the base of every outcome below)."""


@dataclass(frozen=True)
class Taken(Refusal):
    """Creating what exists already: the id is used, the key is claimed. `owner`: the account a token's secret
    already stands for (tokens), else empty."""

    owner: str = ""


@dataclass(frozen=True)
class Gone(Refusal):
    """There is no such item to change or delete."""


@dataclass(frozen=True)
class Stale(Refusal):
    """What the write was conditional on changed since it was read (a version, a revision, a queue entry another
    job claimed first): read again and decide again."""


@dataclass(frozen=True)
class Contended(Refusal):
    """Another transaction held an item of this write for a moment (DynamoDB's TransactionConflict): try again."""


@dataclass(frozen=True)
class TooLarge(Refusal):
    """The item would pass what it may hold (DynamoDB's 400 KB, or our own budget below it)."""


@dataclass(frozen=True)
class LostClaim(Refusal):
    """The Idempotency-Key claim written with the change was taken over by a retry."""


@dataclass(frozen=True)
class LostLease(Refusal):
    """A background job's lease ran out and another job (or a resend) changed the item: stop without writing."""


@dataclass(frozen=True)
class Full(Refusal):
    """A bounded collection holds as many as it may (a customer's standing orders, an account's categories and deposit
    types)."""


@dataclass(frozen=True)
class NoCategory(Refusal):
    """The product names a category that does not exist."""


@dataclass(frozen=True)
class Changed(Refusal):
    """What a write was pinned to as read changed meanwhile: a product (products.unchanged_check), the webhook
    settings an attempt was sent under (webhook_settings.unchanged_check). Plan again."""


@dataclass(frozen=True)
class InUse(Refusal):
    """A delivery uses the product, so it stays."""


@dataclass(frozen=True)
class ProductsGone(Refusal):
    """Products of an order were deleted between the read and the write."""

    product_ids: frozenset


@dataclass(frozen=True)
class Throttled(Refusal):
    """Over a rate (resends per account): the next one is accepted at `until`."""

    until: dt.datetime


@dataclass(frozen=True)
class Beyond(Refusal):
    """A feed read from past the newest sequence."""

    max_sequence: int


@dataclass(frozen=True)
class Expired(Refusal):
    """A feed read from an entry no longer kept."""
