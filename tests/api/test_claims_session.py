"""The curl session of docs/claims.md, run as it is written with bash and curl against the service over HTTP (dates
computed from today, as the session computes them): a receipt with issues, a claim, one refused, the worklist and
its overview, two answers (one with If-Match), a withdrawal and the feed's claim entries."""

from .doc_session import answers_of


def test_the_documented_session_runs_as_written(api):
    answers = answers_of(api, "claims.md")
    pils, received, second, refused, worklist, overview, first_answer, second_answer, withdrawn, entries = answers
    assert pils["id"] == "pils"
    delivery_id = received["id"]
    assert received["status"] == "DELIVERED"
    (claim,) = received["claims"]
    assert {k: claim[k] for k in ("number", "status", "items")} == {
        "number": 1,
        "status": "OPEN",
        "items": [{"id": "pils", "issue": "DAMAGED", "count": 1, "evidence": ["https://photos.example/crate.jpg"]}],
    }
    assert [(c["number"], c["status"]) for c in second["claims"]] == [(1, "OPEN"), (2, "OPEN")]
    assert second["claims"][1]["message"] == "best before last week"
    assert (refused["status"], refused["type"]) == (400, "validation-error")
    assert refused["errors"] == [
        {
            "path": "items[0].count",
            "message": "must be at most 7: 10 delivered, 3 claimed by claims that are not WITHDRAWN or DECLINED",
        }
    ]
    assert [(e["delivery_id"], e["customer_id"], e["number"], e["status"]) for e in worklist["claims"]] == [
        (delivery_id, "bar-1", 1, "OPEN"),
        (delivery_id, "bar-1", 2, "OPEN"),
    ]
    assert overview == {
        "open": 2,
        "oldest_open": {"delivery_id": delivery_id, "number": 1, "since": worklist["claims"][0]["since"]},
    }
    credited = first_answer["claims"][0]
    assert credited["status"] == "ACCEPTED"
    assert credited["items"][0] == {
        "id": "pils",
        "issue": "DAMAGED",
        "count": 1,
        "evidence": ["https://photos.example/crate.jpg"],
        "accepted": 1,
        "resolution": "CREDIT",
        "credit": 1900,
    }
    replaced = second_answer["claims"][1]
    assert (replaced["status"], replaced["items"][0]["credit"]) == ("PARTIALLY_ACCEPTED", 0)
    assert replaced["answer"]["message"] == "a new crate on Friday"
    assert withdrawn["claims"][2]["status"] == "WITHDRAWN" and "withdrawn_at" in withdrawn["claims"][2]
    assert [(e["type"], e["id"], e["status"], e["customer_id"]) for e in entries] == [
        ("claim.opened", f"{delivery_id}:1", "OPEN", "bar-1"),
        ("claim.opened", f"{delivery_id}:2", "OPEN", "bar-1"),
        ("claim.answered", f"{delivery_id}:1", "ACCEPTED", "bar-1"),
        ("claim.answered", f"{delivery_id}:2", "PARTIALLY_ACCEPTED", "bar-1"),
        ("claim.opened", f"{delivery_id}:3", "OPEN", "bar-1"),
        ("claim.withdrawn", f"{delivery_id}:3", "WITHDRAWN", "bar-1"),
    ]
