"""A delivery's writes as the use cases commit them (service/write_units.commit of store/delivery_writes'
operations), for tests that write deliveries without going through a request."""

import datetime as dt

from chalicelib.domain.feed import Change
from chalicelib.service import write_units
from chalicelib.store import delivery_writes
from chalicelib.store.deliveries import IntegrationWrite, StoredDelivery


def place(account: str, deliveries: list[dict], used_products: list[str], claim, integration: IntegrationWrite | None,
          *, changes: list[Change], now: dt.datetime, bases=None, guards=(), pinned=None,
          used_already: frozenset = frozenset()):  # fmt: skip
    operations = delivery_writes.placing(
        account, deliveries, used_products, integration, bases=bases, pinned=pinned, used_already=used_already
    )
    return write_units.commit(account, now, operations + list(guards), changes, claim)


def change(account: str, delivery: dict, expected_version: int, integration: IntegrationWrite | None = None,
           claim=None, *, changes: list[Change], now: dt.datetime, also=(), extra: dict | None = None):  # fmt: skip
    operations = delivery_writes.updating(account, delivery["id"], expected_version, delivery, integration, extra)
    return write_units.commit(account, now, operations + list(also), changes, claim)


def set_integration(account: str, stored: StoredDelivery, integration: IntegrationWrite, *, changes: list[Change],
                    now: dt.datetime):  # fmt: skip
    operations = delivery_writes.updating(account, stored.delivery["id"], stored.version, None, integration)
    return write_units.commit(account, now, operations, changes)
