"""The delivery status machine (decisions §8), vessel counts, supplier responses and the CSV order file."""

import datetime as dt
from decimal import Decimal

import pytest

from chalicelib.domain import delivery, delivery_status
from chalicelib.domain.errors import InvalidTransition, ValidationFailed
from chalicelib.domain.order_file import order_file

NOW = dt.datetime(2026, 5, 4, 9, 30, 15, 123456, tzinfo=dt.timezone.utc)
ALL_STATUSES = ("REQUESTED", "ACCEPTED", "REJECTED", "CANCELLED", "DELIVERED")
ALL_TYPES = ("ACCEPT", "UPDATE", "REJECT")

# Every (status, response type) pair: the status it leads to, or None when forbidden.
TABLE = {
    ("REQUESTED", "ACCEPT"): "ACCEPTED",
    ("REQUESTED", "UPDATE"): None,
    ("REQUESTED", "REJECT"): "REJECTED",
    ("ACCEPTED", "ACCEPT"): "ACCEPTED",
    ("ACCEPTED", "UPDATE"): "ACCEPTED",
    ("ACCEPTED", "REJECT"): "REJECTED",
    **{(final, kind): None for final in ("REJECTED", "CANCELLED", "DELIVERED") for kind in ALL_TYPES},
}


def test_the_value_lists_are_the_documented_ones():
    assert delivery_status.STATUSES == tuple(delivery_status.DeliveryStatus) == ALL_STATUSES
    assert set(delivery_status.ResponseType) == set(ALL_TYPES)
    assert set(delivery_status.DeliveryType) == {"DELIVERY", "RETURN"}


def test_the_table_covers_every_status_and_response_type():
    assert set(TABLE) == {(s, t) for s in ALL_STATUSES for t in ALL_TYPES}


@pytest.mark.parametrize("status, kind", sorted(TABLE))
def test_response_transitions(status, kind):
    expected = TABLE[(status, kind)]
    if expected is None:
        with pytest.raises(InvalidTransition):
            delivery_status.status_after_response(status, kind)
    else:
        assert delivery_status.status_after_response(status, kind) == expected


@pytest.mark.parametrize("status", ALL_STATUSES)
def test_cancel_and_receive_only_from_requested_or_accepted(status):
    for move, target in (
        (delivery_status.status_after_cancel, "CANCELLED"),
        (delivery_status.status_after_receive, "DELIVERED"),
    ):
        if status in ("REQUESTED", "ACCEPTED"):
            assert move(status) == target
        else:
            with pytest.raises(InvalidTransition):
                move(status)


# --- vessel counts ---

CRATE = {"type": "CT", "size": 24}
PALLET = {"type": "PX", "size": 10, "pallet_bundle": {"type": "CT", "size": 24}}


@pytest.mark.parametrize(
    "count, bundle, expected",
    [
        (3, None, 3),
        (2, CRATE, 48),
        (2, PALLET, 480),
        (Decimal("1.5"), None, Decimal("1.5")),
        (Decimal("1.5"), {"type": "BA", "size": Decimal("2.5"), "unit": "kg"}, Decimal("3.75")),
        (0, CRATE, 0),
    ],
)
def test_vessel_count(count, bundle, expected):
    result = delivery.vessel_count(count, bundle)
    assert result == expected
    assert isinstance(result, int) == isinstance(expected, int)


def test_shown_bundle_drops_the_id_override():
    assert delivery.shown_bundle({"id": "b", "id_override": "x", "type": "CT", "size": 6}) == {
        "id": "b",
        "type": "CT",
        "size": 6,
    }
    assert delivery.shown_bundle(None) is None


def test_timestamp_is_utc_iso_8601_with_milliseconds():
    helsinki = NOW.astimezone(dt.timezone(dt.timedelta(hours=3)))
    assert delivery.timestamp(helsinki) == "2026-05-04T09:30:15.123Z"


# --- supplier responses ---

REQUEST_ITEMS = [
    {"id": "beer-crate", "name": "Pale Ale", "count": 2, "bundle": CRATE, "vessel_count": 48},
    {
        "id": "cheese",
        "name": "Cheddar",
        "order_by": "kg",
        "count": Decimal("1.5"),
        "bundle": None,
        "vessel_count": Decimal("1.5"),
    },
]


def items_of(body):
    return delivery.response_items(delivery.parse_response(body), REQUEST_ITEMS)


def paths(error: ValidationFailed):
    return [e.path for e in error.errors]


def test_response_items_compute_vessel_count_from_what_is_given_or_requested():
    result = items_of(
        {
            "type": "ACCEPT",
            "items": [{"id": "beer-crate", "count": 1}, {"id": "cheese", "count": Decimal("2.25"), "price": 1100}],
        }
    )
    assert result == [
        {"id": "beer-crate", "count": 1, "vessel_count": 24},
        {"id": "cheese", "count": Decimal("2.25"), "vessel_count": Decimal("2.25"), "price": 1100},
    ]


def test_response_item_bundle_replaces_the_requested_one_and_null_means_single_vessels():
    result = items_of(
        {"type": "ACCEPT", "items": [{"id": "beer-crate", "bundle": {"type": "PX", "size": 2, "pallet_bundle": CRATE}}]}
    )
    assert result[0]["vessel_count"] == 2 * 2 * 24
    result = items_of({"type": "ACCEPT", "items": [{"id": "beer-crate", "count": 5, "bundle": None}]})
    assert result == [{"id": "beer-crate", "count": 5, "bundle": None, "vessel_count": 5}]


def test_response_without_items_has_none():
    assert items_of({"type": "ACCEPT"}) is None


def test_response_item_errors_are_all_reported():
    with pytest.raises(ValidationFailed) as failure:
        items_of(
            {
                "type": "ACCEPT",
                "items": [
                    {"id": "wine", "count": 1},
                    {"id": "beer-crate", "count": -1},
                    {"id": "beer-crate", "count": Decimal("1.5")},
                    {"id": "cheese", "bundle": {"type": "PX", "size": 2}},
                ],
            }
        )
    assert paths(failure.value) == [
        "items[0].id",
        "items[1].count",
        "items[2].id",
        "items[2].count",
        "items[3].bundle.pallet_bundle",
    ]


def test_response_counts_of_zero_are_allowed():
    assert items_of({"type": "REJECT", "items": [{"id": "beer-crate", "count": 0}]})[0]["vessel_count"] == 0


@pytest.mark.parametrize(
    "bundle, path",
    [
        ({"type": "CT", "size": 6, "pallet_bundle": CRATE}, "items[0].bundle.pallet_bundle"),
        ({"type": "CT", "size": Decimal("1.5")}, "items[0].bundle.size"),
        ({"type": "XX", "size": 6}, "items[0].bundle.type"),
        ({"type": "CT"}, "items[0].bundle.size"),
    ],
)
def test_response_bundle_shape(bundle, path):
    with pytest.raises(ValidationFailed) as failure:
        items_of({"type": "ACCEPT", "items": [{"id": "beer-crate", "bundle": bundle}]})
    assert paths(failure.value) == [path]


def test_reject_with_scheduled_is_refused_but_accept_and_update_may_carry_it():
    with pytest.raises(ValidationFailed) as failure:
        delivery.parse_response({"type": "REJECT", "scheduled": {"date": "2026-05-06"}})
    assert paths(failure.value) == ["scheduled"]
    for kind in ("ACCEPT", "UPDATE"):
        assert delivery.parse_response({"type": kind, "scheduled": {"date": "2026-05-06", "time": "10:00"}})


def test_build_response_keeps_only_what_was_given_and_stamps_server_time():
    body = delivery.parse_response({"type": "UPDATE", "reference": "R-1", "message": "late"})
    assert delivery.build_response(body, None, NOW) == {
        "type": "UPDATE",
        "timestamp": "2026-05-04T09:30:15.123Z",
        "reference": "R-1",
        "message": "late",
    }


def test_respond_appends_and_moves_the_status_without_touching_the_input():
    requested = {"id": 1, "status": "REQUESTED", "responses": []}
    response = {"type": "ACCEPT", "timestamp": "t"}
    after = delivery.respond(requested, response)
    assert after == {"id": 1, "status": "ACCEPTED", "responses": [response]}
    assert requested == {"id": 1, "status": "REQUESTED", "responses": []}
    with pytest.raises(InvalidTransition):
        delivery.respond({**after, "status": "REJECTED"}, response)


# --- the CSV order file ---

DELIVERY = {
    "id": 7,
    "type": "DELIVERY",
    "status": "REQUESTED",
    "request": {
        "timestamp": "2026-05-04T09:30:00.000Z",
        "company": 'Bar "Kulma", Oy',
        "customer_id": "c1",
        "cost_center": None,
        "address": {
            "address1": "Main Street 1",
            "address2": "Backyard",
            "zip": "00100",
            "city": "Malmö",
            "country": "SE",
        },
        "scheduled": {"date": "2026-05-06", "time": "10:00"},
        "user": {"name": "Zoë Øster", "email": "zoe@example.com"},
        "message": "Ring twice\nthen wait ✓",
        "items": [
            {
                "id": "beer-crate",
                "name": "Pale Ale",
                "vessel": {"size": Decimal("0.33"), "unit": "l", "type": "BO"},
                "count": 2,
                "bundle": {"type": "PX", "size": 10, "pallet_bundle": {"type": "CT", "size": 24}},
                "vessel_count": 480,
                "price": 150,
                "price_per": "l",
            },
            {
                "id": "cheese",
                "name": "Cheddar",
                "order_by": "kg",
                "vessel": None,
                "count": Decimal("1.50"),
                "bundle": None,
                "vessel_count": Decimal("1.50"),
                "price": None,
                "message": "€ cheap",
            },
        ],
    },
    "responses": [],
}

EXPECTED_TEXT = (
    "Delivery ID,Type,Customer ID,Company,Cost Center,Address,Zip,City,Country,User name,User email,"
    "Scheduled date,Scheduled time,Message,\n"
    '7,DELIVERY,c1,"Bar ""Kulma"", Oy",,"Main Street 1, Backyard",00100,Malmö,SE,Zoë Øster,zoe@example.com,'
    '2026-05-06,10:00,"Ring twice\nthen wait ✓",\n'
    ",,,,,,,,,,,,,,\n"
    "Delivery ID,Item ID,Item name,Vessel size,Vessel unit,Vessel type,Bundle type,Bundle size,"
    "Pallet bundle type,Pallet bundle size,Count,Vessel count,Price,Price per,Message\n"
    "7,beer-crate,Pale Ale,0.33,l,BO,PX,10,CT,24,2,480,150,l,\n"
    "7,cheese,Cheddar,,,,,,,,1.5,1.5,,kg,€ cheap\n"
)


def test_order_file_utf8_starts_with_a_bom():
    assert order_file(DELIVERY, "utf-8") == b"\xef\xbb\xbf" + EXPECTED_TEXT.encode("utf-8")


def test_order_file_latin1_replaces_what_it_cannot_hold():
    content = order_file(DELIVERY, "latin1")
    assert content == EXPECTED_TEXT.replace("✓", "?").replace("€", "?").encode("latin-1")
    assert b"Malm\xf6" in content and b"\xef\xbb\xbf" not in content


def test_order_file_sections_have_the_same_number_of_columns():
    import csv
    import io

    rows = list(csv.reader(io.StringIO(EXPECTED_TEXT)))
    assert {len(row) for row in rows} == {15}
    assert rows[2] == [""] * 15


def test_order_file_encoding_must_be_known():
    with pytest.raises(ValueError):
        order_file(DELIVERY, "cp1252")
