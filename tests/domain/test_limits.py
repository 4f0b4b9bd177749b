"""The limits fit together (domain/limits.py): the largest objects the field limits allow, measured as the API
renders them. The store tests write the largest objects to DynamoDB Local (tests/store/test_limits_store.py)."""

import datetime as dt

from chalicelib.domain import limits
from chalicelib.domain.customer import Customer
from chalicelib.domain.rendering import size_in_bytes

WORST = "\x01"  # renders as \u0001: 6 bytes for one character of a length limit


def test_a_page_of_the_largest_customers_stays_under_5_mib():
    days = [(dt.date(2030, 1, 1) + dt.timedelta(days=n)).isoformat() for n in range(limits.DATED_RULES)]
    contact = {"name": WORST * 256, "email": WORST * 126 + "@" + WORST * 124 + ".fi"}
    address = {
        "address1": WORST * 256,
        "address2": WORST * 256,
        "zip": WORST * 32,
        "city": WORST * 256,
        "country": "FI",
    }
    customer = {
        "id": "c" * 128,
        "name": WORST * 128,
        "company": WORST * 256,
        "address": address,
        "contact": contact,
        "price_group": "g" * 64,
        "delivery_days": {str(d): {"lead_days": 365, "cutoff": "23:59"} for d in range(7)},
        "delivery_date_overrides": {day: {"lead_days": 365, "cutoff": "23:59"} for day in days},
        "dates_with_no_delivery": days,
        "substitutions": "NOT_ALLOWED",
    }
    Customer.model_validate(customer)  # every field within its limit

    assert size_in_bytes(customer) <= limits.LISTED_BYTES
    assert limits.PAGE_ITEMS * limits.LISTED_BYTES + 10_000 < limits.PAGE_BYTES


def test_the_final_change_fits_in_the_room_kept_for_it():
    largest_reject = {
        "type": "REJECT",
        "timestamp": "2026-05-04T09:30:00.000Z",
        "reference": WORST * 256,
        "user": {"name": WORST * 256, "email": WORST * 126 + "@" + WORST * 124 + ".fi"},
        "message": WORST * limits.MESSAGE_LENGTH,
    }
    largest_action = {
        "timestamp": "2026-05-04T09:30:00.000Z",
        "user": largest_reject["user"],
        "message": largest_reject["message"],
    }

    assert size_in_bytes(largest_reject) + len(",") <= limits.FINAL_CHANGE_BYTES
    assert size_in_bytes({"cancelled": largest_action}) + len(",") <= limits.FINAL_CHANGE_BYTES
    assert limits.OPEN_DELIVERY_BYTES + limits.FINAL_CHANGE_BYTES == limits.DELIVERY_SUMMARY_BYTES


def test_one_request_body_limit_for_requests_and_event_bodies():
    """1 MiB once (decisions §3): what we accept and the largest event body we send a receiver."""
    from chalicelib.domain import event_policy
    from chalicelib.http import bodies

    assert bodies.MAX_BODY_BYTES is limits.MAX_BODY_BYTES is event_policy.MAX_BODY_BYTES
    assert bodies.limit_for("/products") == limits.MAX_BODY_BYTES == 1024 * 1024


def test_the_delivery_in_full_with_its_note_and_ten_claims_fits_an_event_body():
    """decisions §18: the largest note beside the largest responses and amendments, and room for ten of the largest
    claims with their answers; no limit of §8, §15 or §16 lowered for it."""
    assert (limits.ORDER_ITEMS_BYTES, limits.AMENDMENTS_BYTES, limits.AMENDMENTS) == (250_000, 60_000, 20)
    assert (limits.OPEN_RESPONSES, limits.OPEN_DELIVERY_BYTES, limits.EMPTIES_BYTES) == (100, 27_404, 7_000)
    widest_entry = {"id": "d" * 64, "name": WORST * 64, "price": limits.DEPOSIT_PRICE, "count": 10**15}
    assert size_in_bytes(widest_entry) <= limits.DEPOSIT_ENTRY_BYTES
    in_full = (
        limits.LISTED_DELIVERY_BYTES  # the summary with its integration state
        + limits.ORDER_ITEMS_BYTES
        + limits.AMENDMENTS_BYTES
        + limits.DEPOSIT_TYPES * limits.DEPOSIT_ENTRY_BYTES
        + limits.EMPTIES_BYTES
        + limits.NOTE_BYTES
        + limits.CLAIMS * (limits.CLAIM_BYTES + limits.CLAIM_ANSWER_BYTES)
    )
    assert in_full <= limits.FULL_DELIVERY_BYTES < limits.MAX_BODY_BYTES - 100_000
    dynamodb_item = 400 * 1024
    assert limits.ORDER_ITEMS_BYTES + limits.AMENDMENTS_BYTES + limits.NOTE_BYTES + 5_000 < dynamodb_item
    assert limits.CLAIMS * (limits.CLAIM_BYTES + limits.CLAIM_ANSWER_BYTES) + 5_000 < dynamodb_item
