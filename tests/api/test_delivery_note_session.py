"""The curl session of docs/delivery-note.md, run as it is written with bash and curl against the service over
HTTP (dates computed from today, as the session computes them): substitutes in an ACCEPT, the driver's note with
If-Match and an Idempotency-Key, a second note refused, the balances, the statement and the feed's entry."""

import json
import os
import re
import subprocess
from pathlib import Path

from tests.conftest import SUPPLIER_TOKEN

from .customer_support import customer_token, make_category, make_customer
from .http_server import serving

DOC = Path(__file__).resolve().parents[2] / "docs" / "delivery-note.md"
CRATE = {"type": "CR", "size": 20}


def session() -> str:
    return re.search(r"## A session.*?```sh\n(.*?)```", DOC.read_text(), re.S).group(1)


def test_the_documented_session_runs_as_written(api):
    make_category(api)
    make_customer(  # as docs/api.md's session makes it
        api,
        "bar-1",
        company="Bar One Oy",
        contact={"name": "Anna", "email": "anna@example.com"},
        address={"address1": "Main St 1", "zip": "00100", "city": "Helsinki", "country": "FI"},
    )
    env = {
        **os.environ,
        "AUTH": f"Authorization: token {SUPPLIER_TOKEN}",
        "JSON": "Content-Type: application/json",
        "CUSTOMER_TOKEN": customer_token(api, "bar-1"),
    }
    with serving() as url:
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", session()],
            env={**env, "BASE": url},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert ran.returncode == 0, ran.stderr
    answers = [json.loads(line) for line in ran.stdout.splitlines() if line.strip()]
    bottle, crate, pils, helles, accepted, delivered, again, balances, movements, entry = answers
    assert (bottle["id"], crate["id"], pils["id"], helles["id"]) == ("bottle", "crate", "pils", "helles")
    assert accepted["status"] == "ACCEPTED"
    assert accepted["responses"][0]["substitutions"] == [
        {"for": "pils", "id": "helles", "count": 2, "bundle": CRATE, "vessel_count": 40, "price": 95}
    ]
    note = delivered["delivery_note"]
    assert delivered["status"] == "DELIVERED" and note["number"] == "LS-4711"
    assert note["items"] == [
        {
            "id": "pils",
            "bundle": CRATE,
            "ordered": 20,
            "confirmed": 18,
            "count": 17,
            "vessel_count": 340,
            "reason": "OTHER",
        }
    ]
    assert note["substitutions"] == accepted["responses"][0]["substitutions"]
    assert note["empties"] == [{"id": "crate", "name": "Crate (20 bottles)", "price": 150, "count": 19}]
    assert note["proof"] == {"received_by": "Anna", "photo_urls": ["https://photos.example/ls-4711.jpg"]}
    assert delivered["deposits"] == {
        "charged": [
            {"id": "bottle", "name": "Bottle 0.5 l", "price": 8, "count": 380},
            {"id": "crate", "name": "Crate (20 bottles)", "price": 150, "count": 19},
        ],
        "returned": [{"id": "crate", "name": "Crate (20 bottles)", "price": 150, "count": 19}],
        "total": 3040,
    }
    assert (again["status"], again["type"]) == (400, "invalid-transition")
    assert [(b["id"], b["balance"]) for b in balances["deposits"]] == [("bottle", 380), ("crate", 0)]
    assert balances["total"] == 3040
    assert [(m["id"], m["count"], m["delivery_id"]) for m in movements["movements"]] == [
        ("bottle", 380, delivered["id"])
    ]
    assert {k: entry[k] for k in ("type", "resource", "id", "status", "by")} == {
        "type": "delivery.delivered",
        "resource": "delivery",
        "id": str(delivered["id"]),
        "status": "DELIVERED",
        "by": "supplier",
    }
