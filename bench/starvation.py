"""Issue 34's starvation probe, against `make run` over HTTP with a receiver on this machine:
`python bench/starvation.py` (`make bench-starvation`). Writes bench/issue34.json's "starvation".

1. One busy account writes 10 a second over 150 resources (it creates 150 categories, then renames one every
   0.1 s, its webhook selecting category.created and category.updated), while QUIET_PER_SHARD quiet accounts in
   every queue shard (its own included) each create one category, their webhooks selecting category.created:
   every quiet account's event must arrive within 10 s of its write's answer (decisions §10).
2. A 6,000-row catalogue import runs while orders are placed every 5 s, on the importing account and on another
   one (webhooks with the default types): every order's request-delivery event within 10 s.
"""

import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import issue34_results  # noqa: E402
from bench.lag import Api, Receiver, quantiles  # noqa: E402
from bench.localrun import LocalRun  # noqa: E402

RESOURCES = 150
RENAMES_PER_SECOND = 10
QUIET_PER_SHARD = 2
QUIET_GAP = 0.5  # seconds between two quiet accounts' writes
IMPORT_ROWS = 6000
ORDER_EVERY = 5.0
BOUND = 10.0
ADDRESS = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}


def quiet_accounts() -> list[str]:
    """QUIET_PER_SHARD account names in each queue shard."""
    from chalicelib.store import keys

    by_shard: dict[int, list[str]] = {}
    n = 0
    while any(len(by_shard.get(s, [])) < QUIET_PER_SHARD for s in range(keys.QUEUE_SHARDS)):
        name = f"quiet-{n:04d}"
        if len(by_shard.setdefault(keys.queue_shard(name), [])) < QUIET_PER_SHARD:
            by_shard[keys.queue_shard(name)].append(name)
        n += 1
    return [name for shard in sorted(by_shard) for name in by_shard[shard]]


def new_account(run: LocalRun, name: str, receiver: Receiver, events: list[str] | None) -> Api:
    from chalicelib.service import accounts

    accounts.create_account(name, name, f"token-{name}-0123456789")
    api = Api(run.port, f"token-{name}-0123456789")
    hook = {"url": receiver.url, **({"events": events} if events else {})}
    status, _ = api.call("PUT", "/account/settings/webhooks", hook)
    assert status == 200, status
    return api


def busy_writer(api: Api, stop: threading.Event, answered: dict) -> None:
    for n in range(RESOURCES):
        assert api.call("PUT", f"/categories/busy-{n}", {"name": f"Busy {n}"})[0] == 200
    n, start = 0, time.monotonic()
    while not stop.is_set():
        status, _ = api.call("PUT", f"/categories/busy-{n % RESOURCES}", {"name": f"Busy {n % RESOURCES} #{n}"})
        answered[f"category.updated:busy-{n % RESOURCES}#{n}"] = time.monotonic()
        n += 1
        time.sleep(max(0.0, start + n / RENAMES_PER_SECOND - time.monotonic()))
    answered["renames"] = n


def busy_account_probe(run: LocalRun, receiver: Receiver) -> dict:
    busy = new_account(run, "busy", receiver, ["category.created", "category.updated"])
    quiet = {name: new_account(run, name, receiver, ["category.created"]) for name in quiet_accounts()}
    stop, renamed = threading.Event(), {}
    writer = threading.Thread(target=busy_writer, args=(busy, stop, renamed))
    writer.start()
    while not renamed:
        time.sleep(0.1)
    time.sleep(5)  # the busy account at its rate
    answered = {}
    for name, api in quiet.items():
        assert api.call("PUT", f"/categories/quiet-of-{name}", {"name": "Quiet"})[0] == 200
        answered[f"category.created:quiet-of-{name}"] = time.monotonic()
        time.sleep(QUIET_GAP)
    receiver.wait_for(answered, BOUND + 5)
    stop.set()
    writer.join()
    lags = [receiver.arrived[key] - moment for key, moment in answered.items() if key in receiver.arrived]
    return {
        "busy_renames": renamed.pop("renames"),
        "busy_rate_per_s": RENAMES_PER_SECOND,
        "quiet_accounts": len(quiet),
        "quiet_event_lag": quantiles(lags),
        "quiet_late_or_missing": sum(
            key not in receiver.arrived or receiver.arrived[key] - moment > BOUND for key, moment in answered.items()
        ),
    }


def shop(run: LocalRun, api: Api, account: str) -> Api:
    """A product and a customer with a token: an Api that places orders as that customer."""
    assert api.call("PUT", "/categories/drinks", {"name": "Drinks"})[0] == 200
    product = {"status": "ACTIVE", "category": "drinks", "name": "Pale Ale", "price": 150}
    assert api.call("PUT", "/products/beer", product)[0] == 200
    assert api.call("PUT", "/customers/c1", {"name": "Bar", "address": ADDRESS})[0] == 200
    status, token = api.call("POST", "/customers/c1/tokens")
    assert status == 200, status
    return Api(run.port, token["token"])


def import_probe(run: LocalRun, receiver: Receiver) -> dict:
    importer = new_account(run, "importer", receiver, None)
    other = new_account(run, "orders-only", receiver, None)
    customers = {"importing account": shop(run, importer, "importer"), "other account": shop(run, other, "orders")}
    rows = "".join(f"i{n:05d};Product {n};Imported;1,50\n" for n in range(IMPORT_ROWS))
    status, started = importer.call(
        "POST", "/imports/products", raw=("Item ID;Item name;Category name;Price\n" + rows).encode()
    )
    assert status == 202, (status, started)
    began, answered = time.monotonic(), {name: {} for name in customers}
    order = {"items": [{"id": "beer", "count": 1}], "user": {"name": "Olli Orderer", "email": "olli@example.com"}}
    report = {}
    while True:
        for name, customer in customers.items():
            status, placed = customer.call("POST", "/customer/deliveries", order)
            assert status == 200, (status, placed)
            answered[name][f"request-delivery:{placed['deliveries'][0]['id']}"] = time.monotonic()
        report = importer.call("GET", f"/imports/products/{started['id']}")[1]
        if report["status"] != "RUNNING":
            break
        time.sleep(ORDER_EVERY)
    seconds = time.monotonic() - began
    results = {"import_rows": IMPORT_ROWS, "import_status": report["status"], "import_seconds": round(seconds, 1)}
    for name, orders in answered.items():
        receiver.wait_for(orders, BOUND + 5)
        lags = [receiver.arrived[key] - moment for key, moment in orders.items() if key in receiver.arrived]
        results[name] = {
            "orders": len(orders),
            "event_lag": quantiles(lags),
            "late_or_missing": sum(
                key not in receiver.arrived or receiver.arrived[key] - moment > BOUND for key, moment in orders.items()
            ),
        }
    return results


def measure() -> dict:
    receiver = Receiver()
    try:
        with LocalRun() as run:
            run.use_table()
            return {"busy_account": busy_account_probe(run, receiver), "import": import_probe(run, receiver)}
    finally:
        receiver.close()


if __name__ == "__main__":
    figures = measure()
    print("starvation probe:", json.dumps(figures))
    issue34_results.record("starvation", figures)
