"""Scaled pricing (decisions §6): hand-computed totals around every threshold."""

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.domain.pricing import (
    NoApplicablePrice,
    applicable_level,
    as_priced_for_customer,
    minimum_quantity,
    price_for_customer,
    price_points_on,
    total_price,
    unit_price,
)

DAY = dt.date(2026, 5, 4)


def pricing(strategy, *points, date_overrides=None):
    result = {"strategy": strategy, "price_points": [{"from": f, "price": p} for f, p in points]}
    if date_overrides is not None:
        result["date_overrides"] = date_overrides
    return result


VOLUME = pricing("VOLUME", (1, 100), (6, 90), (96, 80))
INCREMENTAL = pricing("INCREMENTAL", (1, 100), (6, 90), (96, 80))
DIVISIBLE = pricing("DIVISIBLE", (1, 100), (6, 90), (24, 80))


# --- total_price per strategy ---


@pytest.mark.parametrize(
    "quantity, total", [(1, 100), (5, 500), (6, 540), (7, 630), (95, 95 * 90), (96, 96 * 80), (97, 97 * 80)]
)
def test_volume_prices_all_units_at_the_highest_point_reached(quantity, total):
    assert total_price(VOLUME, Decimal(quantity), DAY) == total


@pytest.mark.parametrize(
    "quantity, total",
    [
        (1, 100),
        (5, 500),
        (6, 590),
        (7, 680),
        (95, 500 + 90 * 90),
        (96, 500 + 90 * 90 + 80),
        (97, 500 + 90 * 90 + 2 * 80),
    ],
)
def test_incremental_charges_each_unit_in_its_band(quantity, total):
    assert total_price(INCREMENTAL, Decimal(quantity), DAY) == total


def test_incremental_with_a_point_at_zero_starts_the_first_band_at_unit_one():
    assert total_price(pricing("INCREMENTAL", (0, 100), (3, 50)), Decimal(4), DAY) == 2 * 100 + 2 * 50


@pytest.mark.parametrize("quantity, total", [(5, 500), (7, 700), (9, 900), (10, 950), (12, 1050)])
def test_incremental_first_band_starts_at_unit_one_whatever_its_from(quantity, total):
    # Units 1-4 lie below the first point; they are charged at its price, never for free.
    assert total_price(pricing("INCREMENTAL", (5, 100), (10, 50)), Decimal(quantity), DAY) == total


def test_incremental_charges_a_fractional_unit_proportionally():
    assert total_price(INCREMENTAL, Decimal("5.5"), DAY) == Decimal(500 + 45)


@pytest.mark.parametrize(
    "quantity, total",
    [
        (1, 100),
        (5, 500),
        (6, 540),
        (7, 700),
        (12, 12 * 90),
        (13, 13 * 100),
        (18, 18 * 90),
        (24, 24 * 80),
        (30, 30 * 90),
        (48, 48 * 80),
    ],
)
def test_divisible_prices_all_units_at_the_highest_dividing_point(quantity, total):
    assert total_price(DIVISIBLE, Decimal(quantity), DAY) == total


def test_divisible_without_a_dividing_point_has_no_price():
    with pytest.raises(NoApplicablePrice):
        total_price(pricing("DIVISIBLE", (6, 90), (24, 80)), Decimal(13), DAY)


@pytest.mark.parametrize("prices", [VOLUME, INCREMENTAL, DIVISIBLE])
def test_below_the_smallest_point_there_is_no_price(prices):
    raised = pricing(prices["strategy"], (2, 100), (6, 90))
    with pytest.raises(NoApplicablePrice):
        total_price(raised, Decimal(1), DAY)


def test_no_applicable_price_is_a_value_error():
    assert issubclass(NoApplicablePrice, ValueError)


@pytest.mark.parametrize(
    "kilos, total",
    [
        ("0.5", Decimal("600.0")),
        ("0.7505", Decimal("900.6")),
        ("2.4", Decimal("2880.0")),
        ("2.499", Decimal("2998.8")),
        ("2.5", Decimal("2500.0")),
        ("5", Decimal("5000")),
        ("7.25", Decimal("7250.00")),
    ],
)
def test_kilos_with_volume_are_fractional_and_unrounded(kilos, total):
    per_kilo = pricing("VOLUME", (Decimal("0.5"), 1200), (Decimal("2.5"), 1000))
    assert total_price(per_kilo, Decimal(kilos), DAY) == total


def test_unsorted_points_are_sorted_by_from():
    shuffled = pricing("VOLUME", (96, 80), (1, 100), (6, 90))
    assert [p["from"] for p in price_points_on(shuffled, DAY)] == [1, 6, 96]
    assert total_price(shuffled, Decimal(10), DAY) == 900


def test_unknown_strategy_is_rejected():
    with pytest.raises(ValueError):
        total_price(pricing("BOGUS", (1, 100)), Decimal(1), DAY)


@pytest.mark.parametrize("quantity", [Decimal(0), Decimal(-1), Decimal("NaN")])
def test_quantity_must_be_positive(quantity):
    with pytest.raises(ValueError):
        total_price(VOLUME, quantity, DAY)
    with pytest.raises(ValueError):
        unit_price({"pricing": VOLUME}, quantity, DAY)


def test_float_quantity_is_refused():
    with pytest.raises(TypeError):
        total_price(VOLUME, 1.5, DAY)


# --- date overrides ---

SUMMER = pricing(
    "VOLUME",
    (1, 100),
    date_overrides=[
        {"from_date": "2026-06-01", "to_date": "2026-06-30", "price_points": [{"from": 1, "price": 70}]},
        {"from_date": "2026-12-01", "price_points": [{"from": 1, "price": 60}]},
    ],
)


@pytest.mark.parametrize(
    "on, price",
    [
        ("2026-05-31", 100),
        ("2026-06-01", 70),
        ("2026-06-15", 70),
        ("2026-06-30", 70),
        ("2026-07-01", 100),
        ("2026-11-30", 100),
        ("2026-12-01", 60),
        ("2031-01-01", 60),
    ],
)
def test_date_override_applies_inclusively_and_open_ended(on, price):
    assert total_price(SUMMER, Decimal(1), dt.date.fromisoformat(on)) == price


def test_date_override_points_are_sorted_too():
    override = pricing(
        "VOLUME",
        (1, 100),
        date_overrides=[
            {"from_date": "2026-01-01", "price_points": [{"from": 10, "price": 5}, {"from": 1, "price": 9}]}
        ],
    )
    assert price_points_on(override, DAY) == [{"from": 1, "price": 9}, {"from": 10, "price": 5}]


# --- unit price ---


@pytest.mark.parametrize(
    "level, quantity, expected",
    [
        ({"pricing": INCREMENTAL}, 6, 98),  # 590 / 6 = 98.33
        ({"pricing": INCREMENTAL}, 7, 97),  # 680 / 7 = 97.14
        ({"pricing": INCREMENTAL}, 8, 96),  # 770 / 8 = 96.25
        ({"pricing": pricing("INCREMENTAL", (1, 100), (2, 1))}, 2, 51),  # 101 / 2 = 50.5 -> 51
        ({"pricing": pricing("INCREMENTAL", (1, 100), (2, 0))}, 8, 13),  # 100 / 8 = 12.5 -> 13
        ({"pricing": pricing("INCREMENTAL", (1, 99), (3, 0))}, 4, 50),  # 198 / 4 = 49.5 -> 50
        ({"pricing": pricing("INCREMENTAL", (1, 97), (3, 0))}, 4, 49),  # 194 / 4 = 48.5 -> 49
        ({"pricing": VOLUME}, 96, 80),
        ({"pricing": DIVISIBLE}, 13, 100),
        ({"pricing": pricing("VOLUME", (Decimal("0.5"), 1234))}, Decimal("2.5"), 1234),
        ({"price": 250}, 3, 250),
        ({"price": 250, "pricing": VOLUME}, 6, 90),
        ({}, 3, None),
        ({"price": None, "pricing": None}, 3, None),
    ],
)
def test_unit_price(level, quantity, expected):
    assert unit_price(level, Decimal(quantity), DAY) == expected


def test_unit_price_is_an_int():
    assert type(unit_price({"pricing": INCREMENTAL}, Decimal(6), DAY)) is int


def test_unit_price_follows_the_date_override():
    assert unit_price({"pricing": SUMMER}, Decimal(3), dt.date(2026, 6, 30)) == 70


def test_unit_price_without_applicable_point_raises():
    with pytest.raises(NoApplicablePrice):
        unit_price({"price": 5, "pricing": pricing("VOLUME", (10, 90))}, Decimal(3), DAY)


# --- which level applies ---

PRODUCT = {"id": "p", "price": 300, "pricing": VOLUME}
CUSTOMER_LEVEL = {"price": 100}
GROUP_LEVEL = {"pricing": INCREMENTAL}


@pytest.mark.parametrize(
    "customer, group, expected",
    [
        (CUSTOMER_LEVEL, GROUP_LEVEL, CUSTOMER_LEVEL),
        (None, GROUP_LEVEL, GROUP_LEVEL),
        ({}, GROUP_LEVEL, GROUP_LEVEL),
        ({"price": None}, GROUP_LEVEL, GROUP_LEVEL),
        (None, None, PRODUCT),
        ({}, {}, PRODUCT),
        ({"pricing": DIVISIBLE}, None, {"pricing": DIVISIBLE}),
    ],
)
def test_applicable_level_prefers_customer_then_group_then_product(customer, group, expected):
    assert applicable_level(PRODUCT, customer, group) == expected


def test_applicable_level_returns_the_product_itself():
    assert applicable_level(PRODUCT, None, None) is PRODUCT


def test_pricing_beats_plain_price_on_the_same_level():
    level = applicable_level(PRODUCT, {"price": 1, "pricing": pricing("VOLUME", (1, 42))}, None)
    assert unit_price(level, Decimal(5), DAY) == 42


def test_a_customer_plain_price_beats_the_product_pricing():
    level = applicable_level(PRODUCT, {"price": 7}, None)
    assert unit_price(level, Decimal(50), DAY) == 7


# --- minimum quantity ---


@pytest.mark.parametrize(
    "product, expected",
    [
        ({"min_order_count": 6, "pricing": pricing("VOLUME", (6, 90), (12, 80))}, Decimal(6)),
        ({"min_order_count": Decimal("1.5")}, Decimal("1.5")),
        ({"min_order_count": 2, "pricing": pricing("VOLUME", (5, 90))}, Decimal(2)),  # given count wins
        ({"pricing": pricing("VOLUME", (0, 100), (4, 90))}, Decimal(4)),
        ({"pricing": pricing("VOLUME", (Decimal("0.25"), 100))}, Decimal("0.25")),
        ({"pricing": pricing("VOLUME", (0, 100))}, None),
        ({"price": 100}, None),
        ({}, None),
    ],
)
def test_product_minimum(product, expected):
    assert minimum_quantity(product, product) == expected


@pytest.mark.parametrize(
    "product, level, expected",
    [
        ({"min_order_count": 6}, {"pricing": pricing("VOLUME", (12, 80))}, Decimal(12)),
        ({"min_order_count": 6}, {"pricing": pricing("VOLUME", (0, 90), (2, 80))}, Decimal(6)),
        ({"pricing": pricing("VOLUME", (3, 100))}, {"pricing": pricing("VOLUME", (2, 80))}, Decimal(3)),
        ({"pricing": pricing("VOLUME", (3, 100))}, {"pricing": pricing("VOLUME", (5, 80))}, Decimal(5)),
        ({"price": 100}, {"pricing": pricing("VOLUME", (10, 80))}, Decimal(10)),
        ({"min_order_count": 4}, {"price": 80}, Decimal(4)),
        ({"price": 100}, {"price": 80}, None),
    ],
)
def test_customer_or_group_minimum_is_the_larger_one(product, level, expected):
    assert minimum_quantity(product, level) == expected


def test_product_minimum_ignores_date_overrides():
    product = {
        "pricing": pricing(
            "VOLUME", (2, 100), date_overrides=[{"from_date": "2026-01-01", "price_points": [{"from": 1, "price": 9}]}]
        )
    }
    assert minimum_quantity(product, product) == 2


# --- properties ---

positive_prices = st.integers(min_value=1, max_value=100_000)
point_lists = st.dictionaries(st.integers(min_value=1, max_value=500), positive_prices, min_size=1, max_size=6).map(
    lambda d: [(f, p) for f, p in d.items()]
)


@given(point_lists, st.integers(min_value=1, max_value=1000), st.integers(min_value=1, max_value=50))
def test_incremental_total_never_decreases_as_quantity_grows(points, quantity, more):
    prices = pricing("INCREMENTAL", *points)
    smallest = min(f for f, _ in points)
    quantity = Decimal(max(quantity, smallest))
    assert total_price(prices, quantity + more, DAY) >= total_price(prices, quantity, DAY)


@given(point_lists, st.decimals(min_value=1, max_value=1000, places=3, allow_nan=False, allow_infinity=False))
def test_volume_total_is_the_applicable_unit_price_times_quantity(points, quantity):
    prices = pricing("VOLUME", *points)
    smallest = min(f for f, _ in points)
    quantity = max(quantity, Decimal(smallest))
    applicable = max((f, p) for f, p in points if f <= quantity)[1]
    assert total_price(prices, quantity, DAY) == applicable * quantity


@given(st.sampled_from(["VOLUME", "INCREMENTAL", "DIVISIBLE"]), point_lists, st.integers(min_value=1, max_value=1000))
def test_unit_price_times_quantity_is_within_half_a_cent_per_unit_of_total(strategy, points, quantity):
    # A point at 1 makes every quantity priceable under every strategy.
    prices = pricing(strategy, (1, points[0][1]), *[(f, p) for f, p in points if f != 1])
    q = Decimal(quantity)
    total = total_price(prices, q, DAY)
    assert abs(unit_price({"pricing": prices}, q, DAY) * q - total) <= q / 2


# --- which level applies to a customer, and how the customer sees the product ---

GROUPS = {"gold": {"price": 200}, "silver": {"pricing": INCREMENTAL}}


@pytest.mark.parametrize(
    "customer, customer_pricing, groups, expected",
    [
        ({"price_group": "gold"}, {"price": 100}, GROUPS, {"price": 100}),
        ({"price_group": "gold"}, None, GROUPS, {"price": 200}),
        ({"price_group": "gold"}, {}, GROUPS, {"price": 200}),
        ({"price_group": "silver"}, None, GROUPS, {"pricing": INCREMENTAL}),
        ({"price_group": "bronze"}, None, GROUPS, PRODUCT),
        ({}, None, GROUPS, PRODUCT),
        (None, None, GROUPS, PRODUCT),
        ({"price_group": "gold"}, None, None, PRODUCT),
    ],
)
def test_price_for_customer(customer, customer_pricing, groups, expected):
    assert price_for_customer(PRODUCT, customer, customer_pricing, groups) == expected


def test_a_group_named_like_a_missing_group_is_not_none():
    assert price_for_customer(PRODUCT, {}, None, {None: {"price": 1}}) is PRODUCT


@pytest.mark.parametrize(
    "product, level, expected",
    [
        ({"id": "p", "price": 300}, None, {"id": "p", "price": 300}),
        ({"id": "p", "price": 300, "pricing": VOLUME}, None, {"id": "p", "pricing": VOLUME, "min_order_count": 1}),
        ({"id": "p", "price": 300, "pricing": VOLUME}, {"price": 100}, {"id": "p", "price": 100, "min_order_count": 1}),
        (
            {"id": "p", "price": 300},
            {"price": 100, "pricing": DIVISIBLE},
            {"id": "p", "pricing": DIVISIBLE, "min_order_count": 1},
        ),
        (
            {"id": "p", "min_order_count": 6},
            {"pricing": pricing("VOLUME", (12, 5))},
            {"id": "p", "pricing": pricing("VOLUME", (12, 5)), "min_order_count": 12},
        ),
        ({"id": "p", "price": 300}, {}, {"id": "p"}),
    ],
)
def test_as_priced_for_customer(product, level, expected):
    assert as_priced_for_customer(product, product if level is None else level) == expected
