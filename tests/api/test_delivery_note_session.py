"""The curl session of docs/delivery-note.md, run as it is written with bash and curl against the service over
HTTP (dates computed from today, as the session computes them): substitutes in an ACCEPT, the driver's note with
If-Match and an Idempotency-Key, a second note refused, the balances, the statement and the feed's entry."""

from .doc_session import answers_of

CRATE = {"type": "CR", "size": 20}


def test_the_documented_session_runs_as_written(api):
    answers = answers_of(api, "delivery-note.md")
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
