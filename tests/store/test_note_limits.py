"""The delivery note at its byte bound on the largest delivery (decisions §18, domain/limits.py), on DynamoDB Local:
the largest order with its 20 amendments and 100 responses at their bounds still takes its largest note, with an
Idempotency-Key whose record holds the whole delivery (in parts), and then ten of the largest claims with the largest
answers (tests/store/claim_bounds.py), the delivery in full still within every answer that carries it."""

from chalicelib.domain import delivery_note, limits
from chalicelib.domain.common import parse
from chalicelib.domain.rendering import size_in_bytes
from chalicelib.service import substitutes as substitute_reads
from chalicelib.store import deliveries as delivery_store

from .claim_bounds import ten_largest_claims
from .test_amendment_limits import amended_to_the_bound
from .test_limits_store import NOW, USER, WORST, api, fill_with_updates, largest, largest_order, valid  # noqa: F401

SUBSTITUTES = limits.ORDER_ITEMS
URL = "https://proof.example/"


def _substitute_products(api) -> None:
    """Products whose bundle ids are at their longest in the widest characters: the largest substitutes."""
    for i in range(SUBSTITUTES):
        product = {
            "status": "ACTIVE",
            "category": "drinks",
            "name": "S" * 64,
            "price": 100,
            "vessel": {"size": 1, "unit": "l"},
            "bundles": [{"id": WORST * 256, "type": "CA", "size": 6}],
        }
        assert api.put(f"/products/s{i:02d}", product).status_code == 200


def _body(substitutes: int, message: int) -> dict:
    link = URL + "a" * (limits.URL_LENGTH - len(URL))
    body = {
        "number": WORST * limits.NOTE_NUMBER_LENGTH,
        "substitutions": [
            {"for": f"o{i:02d}", "id": f"s{i:02d}", "count": 1, "bundle": {"type": "CA", "size": 6}}
            for i in range(substitutes)
        ],
        "proof": {
            "received_by": WORST * limits.RECEIVED_BY_LENGTH,
            "signature_url": link,
            "photo_urls": [link] * limits.PROOF_PHOTOS,
            "note": WORST * limits.MESSAGE_LENGTH,
        },
        "user": USER,
    }
    return {**body, "message": WORST * message} if message else body


def _fits(delivery_id: int, body: dict) -> bool:
    """Whether the note would be taken, asked of the domain as the service asks it (nothing is written)."""
    stored = delivery_store.get("acme", delivery_id, consistent=True)
    parsed = parse(delivery_note.DeliveryNoteBody, body)
    substitutes = substitute_reads.read("acme", stored.delivery, parsed.substitutions, always=True)

    def check():
        shown = substitutes.shown(stored.delivery, stored.deposit_basis)
        delivery_note.deliver(stored.delivery, stored.deposit_basis, parsed, shown, None, NOW, "UTC")

    return valid(check)


def test_the_largest_note_fits_beside_the_largest_responses_and_amendments_and_then_ten_of_the_largest_claims(api):
    delivery = largest_order(api)
    delivery_id = delivery["id"]
    amended, _ = amended_to_the_bound(api, delivery)
    filled = fill_with_updates(api, delivery_id)
    assert filled["amendments"] == amended["amendments"] and len(filled["responses"]) == limits.OPEN_RESPONSES
    _substitute_products(api)

    substitutes = largest(lambda n: _fits(delivery_id, _body(n, 0)), SUBSTITUTES)
    assert substitutes < SUBSTITUTES  # the note's byte bound stopped them
    message = largest(lambda m: _fits(delivery_id, _body(substitutes, m)), limits.MESSAGE_LENGTH)
    assert message < limits.MESSAGE_LENGTH
    path = f"/deliveries/{delivery_id}/delivery-note"
    refused = api.post(path, _body(substitutes, message + 1))
    assert (refused.status_code, [e["path"] for e in refused.data["errors"]]) == (400, ["body"])
    assert refused.data["errors"][0]["message"].endswith(f"a delivery note holds at most {limits.NOTE_BYTES:,}")

    keyed = {"Idempotency-Key": "the-largest-note"}
    response = api.post(path, _body(substitutes, message), headers=keyed)
    assert response.status_code == 200, response.data
    delivered = response.data
    assert delivered["status"] == "DELIVERED"
    assert limits.NOTE_BYTES - 200 < size_in_bytes(delivered["delivery_note"]) <= limits.NOTE_BYTES
    assert delivered["amendments"] == amended["amendments"] and delivered["responses"] == filled["responses"]
    assert api.get(f"/deliveries/{delivery_id}").data == delivered
    replayed = api.post(path, _body(substitutes, message), headers=keyed)
    assert (replayed.status_code, replayed.headers.get("Idempotent-Replayed")) == (200, "true")
    assert replayed.body == response.body  # more than one item's 400 KB: the record keeps it in parts
    assert len(response.body) > 400 * 1024

    # Ten of the largest claims with their answers still fit every answer that carries the delivery in full: a
    # webhook event's body (the tightest, decisions §10), a page of the feed with data, a single read.
    ten_largest_claims(api, delivery_id, delivered)
