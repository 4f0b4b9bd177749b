"""Keep an ERP's copy of a supplier account in step: a reference client of the change feed (decisions §13).

Mirrors the account's catalogue (products, categories, deposit types), deliveries and each customer's deposit
balances (decisions §15) into a SQLite file, from `GET /changes?include=data`. Standard library and `requests`
only.

    python examples/sync.py --base-url http://127.0.0.1:8000 --token dev-supplier-token --db erp.sqlite

How it stays exact:
- The position in the feed (`after`) is stored in the same SQLite transaction as the changes of each page, so a
  client killed at any point resumes from the last page it fully applied: nothing is skipped, and a page applied
  again only writes the same rows again.
- The first run, and any run that meets 410 `feed-expired`, resynchronises in full: it takes the feed's
  newest position first (`after=latest`), then reads the lists, then follows the feed from that position, so
  nothing that changes during the full read is missed.
- `data` is each resource as it is now (null once deleted), so applying an entry is "store this" or "delete this".
  A delivery is mirrored as its single read shows it: an amendment (`delivery.amended`, decisions §16) brings its
  items as they now stand and what each amendment changed, line by line; a full resync reads each delivery so.
- Each delivery mirrored while its integration state is not IMPORTED is acknowledged with
  `PUT /deliveries/:id/integration {"status": "IMPORTED"}` (decisions §14) once its page is committed. What is
  still to acknowledge is recorded in the page's own SQLite transaction and removed after each PUT, so a client
  killed between the two acknowledges on its next run. The PUT appends a `delivery.integration` entry whose data
  is IMPORTED, which the mirror stores without acknowledging again. A 409 (the customer changed the delivery
  meanwhile) is left alone: the customer's change comes through the feed, PENDING, and is acknowledged then.
- Balances (`deposit_balances`: customer id -> {deposit id: balance}, zeros left out; names and prices are in
  `deposits`) change
  with an adjustment (`customer-deposits.updated`, whose data is the customer's balances) and when a delivery is
  received (its `delivery.delivered` entry): then the mirror reads that customer's balances as they are now, and
  its statement (`deposit_statements`: customer id -> its movements, newest first, as
  `GET /customers/:id/deposits/movements` pages them; the movements of a type add up to its balance).
- What was delivered (decisions §18): a `delivery.delivered` entry says `by` whom, the supplier's delivery note or
  the customer's receive. The note (the delivery's `delivery_note`: every line as ordered, confirmed and
  delivered, the substitutes and the empties collected) is what an invoice rests on, so the mirror keeps each
  delivery's note in `delivery_notes` too, beside the delivery (a note leaves the integration state as it is: a
  delivery already IMPORTED is not acknowledged again), and reads the customer's balances as for a receive.
- Claims (decisions §18): `claim.opened`, `claim.answered` and `claim.withdrawn` entries (id
  `<delivery id>:<number>`) carry their delivery as `data`, so the mirror stores that delivery again and keeps its
  claims in `delivery_claims` (what a credit note rests on). Opening or withdrawing a claim makes the delivery
  PENDING again: the mirror acknowledges it as any delivery it stores.
- A webhook's `previous_sequence` is only a hint (`webhook_hint`): when it is past what the mirror holds, read
  the feed now instead of waiting for the next poll. The feed, not the webhook, is the source of truth.
"""

import argparse
import json
import os
import sqlite3
import sys
import time

import requests

MIRRORED = {
    "product": "products",
    "category": "categories",
    "delivery": "deliveries",
    "deposit": "deposits",
    "customer-deposits": "deposit_balances",
}
PAGE = 1000
LIST_PAGE = 100


class Client:
    def __init__(self, base_url: str, token: str, session: requests.Session | None = None):
        self.base_url = base_url.rstrip("/")
        self.session = session or requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def get(self, path: str, **params) -> requests.Response:
        for attempt in range(5):
            response = self.session.get(f"{self.base_url}{path}", params=params, timeout=30)
            if response.status_code not in (409, 429, 500, 502, 503, 504):
                return response
            time.sleep(min(2**attempt, 10))  # busy or unavailable: try again a little later
        return response

    def put(self, path: str, body: dict) -> requests.Response:
        for attempt in range(5):
            response = self.session.put(f"{self.base_url}{path}", json=body, timeout=30)
            if response.status_code not in (429, 500, 502, 503, 504):
                return response
            time.sleep(min(2**attempt, 10))
        return response

    def listing(self, path: str, name: str):
        """Every item of a paged list."""
        cursor = None
        while True:
            params = {"limit": LIST_PAGE, **({"cursor": cursor} if cursor else {})}
            response = self.get(path, **params)
            response.raise_for_status()
            body = response.json()
            yield from body[name]
            cursor = body.get("cursor")
            if not cursor:
                return


def open_mirror(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)  # transactions are explicit (BEGIN ... COMMIT)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS position (id INTEGER PRIMARY KEY CHECK (id = 1), after INTEGER NOT NULL)")
    for table in MIRRORED.values():
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} (id TEXT PRIMARY KEY, doc TEXT NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS deposit_statements (id TEXT PRIMARY KEY, doc TEXT NOT NULL)")
    for table in ("delivery_notes", "delivery_claims"):
        db.execute(f"CREATE TABLE IF NOT EXISTS {table} (id TEXT PRIMARY KEY, doc TEXT NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS to_acknowledge (id TEXT PRIMARY KEY)")
    return db


def position(db: sqlite3.Connection) -> int | None:
    row = db.execute("SELECT after FROM position WHERE id = 1").fetchone()
    return row[0] if row else None


def held(balances: dict | None) -> dict | None:
    """A customer's balances as the mirror keeps them: deposit id -> balance, those not 0 (the types hold names
    and prices)."""
    if balances is None:
        return None
    return {entry["id"]: entry["balance"] for entry in balances["deposits"] if entry["balance"]}


def balances_of(client: Client, customer_id: str) -> dict | None:
    response = client.get(f"/customers/{customer_id}/deposits")
    if response.status_code == 404:
        return None
    response.raise_for_status()
    return held(response.json())


def statement_of(client: Client, customer_id: str) -> list | None:
    """A customer's statement, every page of it (None: no movements, or no such customer)."""
    movements, cursor = [], None
    while True:
        params = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        response = client.get(f"/customers/{customer_id}/deposits/movements", **params)
        if response.status_code == 404:
            return None
        response.raise_for_status()
        page = response.json()
        movements += page["movements"]
        cursor = page.get("cursor")
        if cursor is None:
            return movements or None


def _store_deposits_of(client: Client, db: sqlite3.Connection, customer_id: str, balances) -> None:
    _store(db, "deposit_balances", customer_id, balances)
    _store(db, "deposit_statements", customer_id, statement_of(client, customer_id))


def _store(db: sqlite3.Connection, table: str, ident: str, data) -> None:
    if data is None:
        db.execute(f"DELETE FROM {table} WHERE id = ?", (ident,))
    else:
        db.execute(f"INSERT OR REPLACE INTO {table} (id, doc) VALUES (?, ?)", (ident, json.dumps(data, sort_keys=True)))
    if table == "deliveries":
        _store(db, "delivery_notes", ident, (data or {}).get("delivery_note"))  # what an invoice rests on
        _store(db, "delivery_claims", ident, (data or {}).get("claims"))  # what a credit note rests on
        if data is not None and data.get("integration", {}).get("status") != "IMPORTED":
            db.execute("INSERT OR IGNORE INTO to_acknowledge (id) VALUES (?)", (ident,))
        else:
            db.execute("DELETE FROM to_acknowledge WHERE id = ?", (ident,))


def acknowledge(client: Client, db: sqlite3.Connection) -> None:
    """Mark what the mirror holds as IMPORTED in the service, for each delivery still to acknowledge."""
    for (ident,) in db.execute("SELECT id FROM to_acknowledge ORDER BY id").fetchall():
        response = client.put(f"/deliveries/{ident}/integration", {"status": "IMPORTED"})
        if response.status_code not in (200, 404, 409):  # 404: gone; 409: changed meanwhile, the feed brings it
            response.raise_for_status()
        db.execute("DELETE FROM to_acknowledge WHERE id = ?", (ident,))


def full_delivery(client: Client, delivery_id: int) -> dict:
    """A delivery as its single read shows it (items, amendments, deposits): what the feed's data carries too."""
    response = client.get(f"/deliveries/{delivery_id}")
    response.raise_for_status()
    return response.json()


def full_resync(client: Client, db: sqlite3.Connection) -> int:
    """Position first, then the lists, then (by the caller) the feed from that position."""
    latest = client.get("/changes", after="latest")
    latest.raise_for_status()
    start = latest.json()["max_sequence"]
    lists = {
        "products": list(client.listing("/products", "products")),
        "categories": list(client.listing("/categories", "categories")),
        "deliveries": [full_delivery(client, d["id"]) for d in client.listing("/deliveries", "deliveries")],
        "deposits": list(client.listing("/deposits", "deposits")),
    }
    customers = [customer["id"] for customer in client.listing("/customers", "customers")]
    balances = {customer_id: balances_of(client, customer_id) for customer_id in customers}
    statements = {customer_id: statement_of(client, customer_id) for customer_id in customers}
    db.execute("BEGIN")
    db.execute("DELETE FROM to_acknowledge")
    db.execute("DELETE FROM delivery_notes")
    db.execute("DELETE FROM delivery_claims")
    for table, items in lists.items():
        db.execute(f"DELETE FROM {table}")
        for item in items:
            _store(db, table, str(item["id"]), item)
    db.execute("DELETE FROM deposit_balances")
    db.execute("DELETE FROM deposit_statements")
    for customer_id, balance in balances.items():
        _store(db, "deposit_balances", customer_id, balance)
        _store(db, "deposit_statements", customer_id, statements[customer_id])
    db.execute("INSERT OR REPLACE INTO position (id, after) VALUES (1, ?)", (start,))
    db.execute("COMMIT")
    return start


def follow(client: Client, db: sqlite3.Connection, die_after: int | None = None) -> int:
    """Apply the feed from the stored position until caught up; the position reached."""
    after = position(db)
    if after is None:
        after = full_resync(client, db)
    applied = 0
    while True:
        acknowledge(client, db)  # what the last committed page (or a killed run) left to acknowledge
        response = client.get("/changes", after=after, limit=PAGE, include="data")
        if response.status_code == 410:  # feed-expired: entries we never read are gone
            after = full_resync(client, db)
            continue
        response.raise_for_status()
        page = response.json()
        db.execute("BEGIN")
        for change in page["changes"]:
            resource, ident = change["resource"], change["id"]
            if resource == "claim":  # its data is its delivery, with every claim of it
                resource, ident = "delivery", ident.split(":")[0]
            table = MIRRORED.get(resource)
            data = change.get("data")
            if table == "deposit_balances":
                _store_deposits_of(client, db, ident, held(data))
            elif table is not None:
                _store(db, table, ident, data)
            customer_id = ((data or {}).get("request") or {}).get("customer_id")
            if change["type"] == "delivery.delivered" and customer_id is not None:
                _store_deposits_of(client, db, customer_id, balances_of(client, customer_id))
            applied += 1
            if die_after is not None and applied >= die_after:
                os._exit(137)  # the test's "kill -9" in the middle of a page: the page is rolled back
        db.execute("UPDATE position SET after = ? WHERE id = 1", (page["last_sequence"],))
        db.execute("COMMIT")
        after = page["last_sequence"]
        if after == page["max_sequence"] and not db.execute("SELECT 1 FROM to_acknowledge LIMIT 1").fetchone():
            return after


def webhook_hint(db: sqlite3.Connection, event: dict) -> bool:
    """True when a webhook event says the feed holds changes the mirror has not read (read it now)."""
    held = position(db) or 0
    return event.get("previous_sequence", 0) > held or event.get("sequence", 0) > held


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=os.environ.get("BASE_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--token", default=os.environ.get("SUPPLIER_TOKEN", "dev-supplier-token"))
    parser.add_argument("--db", default="mirror.sqlite")
    parser.add_argument("--follow", type=float, default=0, help="keep polling every N seconds (0: once)")
    parser.add_argument("--die-after", type=int, default=None, help=argparse.SUPPRESS)  # tests: die mid-page
    args = parser.parse_args(argv)
    client, db = Client(args.base_url, args.token), open_mirror(args.db)
    while True:
        reached = follow(client, db, args.die_after)
        print(f"in step up to sequence {reached}", flush=True)
        if not args.follow:
            return 0
        time.sleep(args.follow)


if __name__ == "__main__":
    sys.exit(main())
