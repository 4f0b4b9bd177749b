"""Every product rule (interface: Product, Vessel, Bundle, Delivery rule, Scaled pricing, Image; decisions §5-6),
each with a failing and a passing case. Bodies are given as the HTTP layer parses JSON: floats as Decimal."""

from decimal import Decimal

import pytest

from chalicelib.domain.errors import ValidationFailed
from chalicelib.domain.product import validate_product

D = Decimal


def product(**fields):
    return {"id": "p1", "status": "ACTIVE", "category": "drinks", "name": "Apple juice", **fields}


def error_paths(data, product_id=None) -> list[str]:
    with pytest.raises(ValidationFailed) as caught:
        validate_product(data, product_id)
    return [e.path for e in caught.value.errors]


def accepted(data, product_id=None) -> dict:
    return validate_product(data, product_id)


def refused(data, path):
    assert error_paths(data) == [path]


CRATE = {"type": "CT", "size": 6}


def pallet(**fields):
    return {"type": "PX", "size": 40, **fields}


# --- name ---


@pytest.mark.parametrize(
    "name, stored",
    [
        ("abc", "abc"),
        ("  abc  ", "abc"),
        ("x" * 64, "x" * 64),
        (" " + "x" * 64 + " ", "x" * 64),
        ("Apfel-Saft naturtrüb", None),
    ],
)
def test_name_is_trimmed_and_3_to_64_long(name, stored):
    assert accepted(product(name=name))["name"] == (stored or name)


@pytest.mark.parametrize("name", ["ab", "  ab  ", "", "   ", "x" * 65, "a\tbc", "ab\ncd", "ab\rcd"])
def test_name_refused(name):
    refused(product(name=name), "name")


def test_name_must_be_a_string():
    refused(product(name=123), "name")


# --- id and status ---


@pytest.mark.parametrize("product_id", ["p1", "A-b_9", "0", "x" * 128])
def test_id_charset_accepted(product_id):
    assert accepted(product(id=product_id))["id"] == product_id


@pytest.mark.parametrize("product_id", ["p.1", "p 1", "äpfel", "p/1", "", "x" * 129, 12])
def test_id_charset_refused(product_id):
    refused(product(id=product_id), "id")


@pytest.mark.parametrize("status", ["ACTIVE", "INACTIVE", "OUT_OF_STOCK"])
def test_status_accepted(status):
    assert accepted(product(status=status))["status"] == status


@pytest.mark.parametrize("status", ["active", "DELETED", "", None])
def test_status_refused(status):
    refused(product(status=status), "status")


def test_category_must_be_an_identifier():
    assert accepted(product(category="drinks-1"))["category"] == "drinks-1"
    refused(product(category="drinks 1"), "category")


# --- order_by and vessel ---


def test_order_by_values():
    assert accepted(product(order_by="vessel"))["order_by"] == "vessel"
    assert accepted(product(order_by="kg"))["order_by"] == "kg"
    refused(product(order_by="box"), "order_by")


def test_order_by_kg_needs_a_1_kg_vessel_or_none():
    assert accepted(product(order_by="kg", vessel={"size": 1, "unit": "kg"}))["vessel"] == {"size": 1, "unit": "kg"}
    refused(product(order_by="kg", vessel={"size": 2, "unit": "kg"}), "vessel")
    refused(product(order_by="kg", vessel={"size": 1, "unit": "l"}), "vessel")


def test_order_by_vessel_allows_any_vessel():
    assert accepted(product(vessel={"size": 2, "unit": "kg"}))


@pytest.mark.parametrize("size", [D("1.5"), 1, D("0.001"), 1000])
def test_vessel_size_positive(size):
    assert accepted(product(vessel={"size": size, "unit": "l"}))["vessel"]["size"] == size


@pytest.mark.parametrize("size", [0, -1, D("-0.5"), "1", True, None])
def test_vessel_size_refused(size):
    refused(product(vessel={"size": size, "unit": "l"}), "vessel.size")


@pytest.mark.parametrize("unit", ["l", "dl", "cl", "ml", "kg", "g", "quantity"])
def test_vessel_unit_accepted(unit):
    assert accepted(product(vessel={"size": 1, "unit": unit}))


@pytest.mark.parametrize("unit", ["L", "lb", "pcs", ""])
def test_vessel_unit_refused(unit):
    refused(product(vessel={"size": 1, "unit": unit}), "vessel.unit")


def test_vessel_unit_required():
    refused(product(vessel={"size": 1}), "vessel.unit")


@pytest.mark.parametrize("code", ["NA", "ZZ", "BH", "BO", "CT", "BA"])
def test_vessel_type_codes_accepted(code):
    assert accepted(product(vessel={"size": 1, "unit": "l", "type": code}))["vessel"]["type"] == code


@pytest.mark.parametrize("code", ["PX", "XX", "bo", ""])
def test_vessel_type_codes_refused(code):
    refused(product(vessel={"size": 1, "unit": "l", "type": code}), "vessel.type")


def test_vessel_id_optional():
    assert accepted(product(vessel={"id": "v-1", "size": 1, "unit": "l"}))["vessel"]["id"] == "v-1"
    refused(product(vessel={"size": 1, "unit": "l", "weight": 3}), "vessel.weight")


# --- bundles ---


@pytest.mark.parametrize("code", ["CT", "BO", "NA", "ZZ", "BH"])
def test_bundle_type_codes_accepted(code):
    assert accepted(product(bundles=[{"type": code, "size": 6}]))["bundles"][0]["type"] == code


@pytest.mark.parametrize("code", ["XX", "ct", ""])
def test_bundle_type_codes_refused(code):
    refused(product(bundles=[{"type": code, "size": 6}]), "bundles[0].type")


def test_bundle_type_required():
    refused(product(bundles=[{"size": 6}]), "bundles[0].type")


def test_px_is_a_bundle_type():
    stored = accepted(product(bundles=[CRATE, pallet(pallet_bundle=CRATE)]))
    assert stored["bundles"][1]["type"] == "PX"


@pytest.mark.parametrize("size", [0, -6, "6"])
def test_bundle_size_positive(size):
    refused(product(bundles=[{"type": "CT", "size": size}]), "bundles[0].size")


def test_bundle_size_whole_without_unit():
    assert accepted(product(bundles=[{"type": "CT", "size": 6}]))
    refused(product(bundles=[{"type": "CT", "size": D("6.5")}]), "bundles[0].size")


def test_bundle_size_fractional_with_unit_kg():
    stored = accepted(product(bundles=[{"type": "CT", "size": D("2.5"), "unit": "kg"}]))
    assert stored["bundles"][0] == {"type": "CT", "size": D("2.5"), "unit": "kg"}


def test_bundle_unit_only_kg():
    refused(product(bundles=[{"type": "CT", "size": 2, "unit": "l"}]), "bundles[0].unit")


def test_pallet_size_whole_even_with_unit():
    assert accepted(product(bundles=[CRATE, pallet(size=40, pallet_bundle=CRATE)]))
    refused(product(bundles=[CRATE, pallet(size=D("40.5"), pallet_bundle=CRATE)]), "bundles[1].size")


def test_bundle_id_and_id_override_optional():
    bundle = {"id": "crate", "id_override": "apple-crate", "type": "CT", "size": 6}
    assert accepted(product(bundles=[bundle]))["bundles"] == [bundle]


def test_pallet_bundle_only_with_px():
    refused(product(bundles=[CRATE, {"type": "BO", "size": 2, "pallet_bundle": CRATE}]), "bundles[1].pallet_bundle")


def test_pallet_bundle_must_match_another_bundle_by_type_and_size():
    assert accepted(product(bundles=[CRATE, pallet(pallet_bundle={"type": "CT", "size": 6})]))
    refused(product(bundles=[CRATE, pallet(pallet_bundle={"type": "CT", "size": 12})]), "bundles[1].pallet_bundle")
    refused(product(bundles=[CRATE, pallet(pallet_bundle={"type": "BO", "size": 6})]), "bundles[1].pallet_bundle")


def test_pallet_bundle_matches_by_id_when_given():
    crate = {"id": "c6", "type": "CT", "size": 6}
    assert accepted(product(bundles=[crate, pallet(pallet_bundle={"id": "c6", "type": "CT", "size": 6})]))
    refused(
        product(bundles=[crate, pallet(pallet_bundle={"id": "c7", "type": "CT", "size": 6})]),
        "bundles[1].pallet_bundle",
    )


def test_pallet_bundle_cannot_be_a_pallet():
    refused(product(bundles=[CRATE, pallet(pallet_bundle={"type": "PX", "size": 40})]), "bundles[1].pallet_bundle.type")


def test_pallet_bundle_selected_when_exactly_one_other_bundle_exists():
    crate = {"id": "c6", "type": "CT", "size": 6}
    stored = accepted(product(bundles=[pallet(), crate]))
    assert stored["bundles"] == [pallet(pallet_bundle={"id": "c6", "type": "CT", "size": 6}), crate]


def test_selected_pallet_bundle_has_no_id_when_the_bundle_has_none():
    stored = accepted(product(bundles=[CRATE, pallet()]))
    assert stored["bundles"][1]["pallet_bundle"] == {"type": "CT", "size": 6}


def test_pallet_without_pallet_bundle_and_no_other_bundle_is_refused():
    refused(product(bundles=[pallet()]), "bundles[0].pallet_bundle")


def test_pallet_without_pallet_bundle_and_two_other_bundles_is_refused():
    refused(product(bundles=[CRATE, {"type": "BO", "size": 12}, pallet()]), "bundles[2].pallet_bundle")


def test_two_other_bundles_are_fine_when_pallet_bundle_is_given():
    assert accepted(product(bundles=[CRATE, {"type": "BO", "size": 12}, pallet(pallet_bundle=CRATE)]))


# --- price, price_per, min_order_count ---


@pytest.mark.parametrize("price", [0, 1, 250, 10**9])
def test_price_whole_cents(price):
    assert accepted(product(price=price))["price"] == price


@pytest.mark.parametrize("price", [D("1.5"), -1, "1", True, 10**13])
def test_price_refused(price):
    refused(product(price=price), "price")


def test_null_optional_field_is_not_given():
    assert "price" not in accepted(product(price=None))


@pytest.mark.parametrize("price_per", ["vessel", "l", "kg", "100g"])
def test_price_per_accepted(price_per):
    assert accepted(product(price_per=price_per))["price_per"] == price_per


@pytest.mark.parametrize("price_per", ["g", "ml", "VESSEL"])
def test_price_per_refused(price_per):
    refused(product(price_per=price_per), "price_per")


@pytest.mark.parametrize("count", [0, -1, D("-0.5"), "1"])
def test_min_order_count_positive(count):
    refused(product(min_order_count=count), "min_order_count")


def test_min_order_count_whole_unless_kg():
    assert accepted(product(min_order_count=2))["min_order_count"] == 2
    refused(product(min_order_count=D("0.5")), "min_order_count")
    refused(product(order_by="vessel", min_order_count=D("1.5")), "min_order_count")
    assert accepted(product(order_by="kg", min_order_count=D("0.5")))["min_order_count"] == D("0.5")


# --- delivery rules ---


def test_delivery_days_weekday_keys():
    days = {str(d): {"lead_days": d} for d in range(7)}
    assert accepted(product(delivery_days=days))["delivery_days"] == days
    refused(product(delivery_days={"7": {"lead_days": 1}}), "delivery_days.7")
    refused(product(delivery_days={"mon": {"lead_days": 1}}), "delivery_days.mon")


def test_delivery_days_may_be_empty():
    assert accepted(product(delivery_days={}))["delivery_days"] == {}


@pytest.mark.parametrize("lead_days", [0, 1, 14])
def test_lead_days_whole_and_not_negative(lead_days):
    assert accepted(product(delivery_days={"1": {"lead_days": lead_days}}))


@pytest.mark.parametrize("lead_days", [-1, D("1.5"), "1", True])
def test_lead_days_refused(lead_days):
    refused(product(delivery_days={"1": {"lead_days": lead_days}}), "delivery_days.1.lead_days")


def test_lead_days_required():
    refused(product(delivery_days={"1": {"cutoff": "12:00"}}), "delivery_days.1.lead_days")


@pytest.mark.parametrize("cutoff", ["00:00", "07:00", "12:30", "23:59"])
def test_cutoff_accepted(cutoff):
    stored = accepted(product(delivery_days={"1": {"lead_days": 0, "cutoff": cutoff}}))
    assert stored["delivery_days"]["1"]["cutoff"] == cutoff


@pytest.mark.parametrize("cutoff", ["24:00", "7:00", "12:60", "12:00:00", "noon", "", 1200])
def test_cutoff_refused(cutoff):
    refused(product(delivery_days={"1": {"lead_days": 0, "cutoff": cutoff}}), "delivery_days.1.cutoff")


def test_delivery_date_overrides_keys_are_real_dates():
    overrides = {"2026-02-28": {"lead_days": 0}, "2028-02-29": {"lead_days": 1, "cutoff": "10:00"}}
    assert accepted(product(delivery_date_overrides=overrides))["delivery_date_overrides"] == overrides
    refused(product(delivery_date_overrides={"2026-02-30": {"lead_days": 0}}), "delivery_date_overrides.2026-02-30")
    refused(product(delivery_date_overrides={"2026-2-3": {"lead_days": 0}}), "delivery_date_overrides.2026-2-3")


def test_delivery_date_override_rule_is_checked():
    refused(
        product(delivery_date_overrides={"2026-03-01": {"lead_days": -1}}),
        "delivery_date_overrides.2026-03-01.lead_days",
    )


def test_dates_with_no_delivery_are_iso_dates():
    dates = ["2026-12-25", "2026-12-26"]
    assert accepted(product(dates_with_no_delivery=dates))["dates_with_no_delivery"] == dates
    refused(product(dates_with_no_delivery=["2026-12-25", "2026-13-01"]), "dates_with_no_delivery[1]")
    refused(product(dates_with_no_delivery=["25.12.2026"]), "dates_with_no_delivery[0]")
    refused(product(dates_with_no_delivery="2026-12-25"), "dates_with_no_delivery")


# --- scaled pricing ---


def pricing(strategy="VOLUME", *points, **extra):
    points = points or ((1, 100),)
    return {"strategy": strategy, "price_points": [{"from": f, "price": p} for f, p in points], **extra}


@pytest.mark.parametrize("strategy", ["VOLUME", "INCREMENTAL", "DIVISIBLE"])
def test_pricing_strategy_accepted(strategy):
    assert accepted(product(pricing=pricing(strategy)))["pricing"]["strategy"] == strategy


def test_pricing_strategy_refused():
    refused(product(pricing=pricing("TIERED")), "pricing.strategy")


def test_pricing_needs_a_price_point():
    refused(product(pricing={"strategy": "VOLUME", "price_points": []}), "pricing.price_points")
    refused(product(pricing={"strategy": "VOLUME"}), "pricing.price_points")


def test_price_point_price_is_whole_cents():
    refused(product(pricing=pricing("VOLUME", (1, D("1.5")))), "pricing.price_points[0].price")
    refused(product(pricing=pricing("VOLUME", (1, -1))), "pricing.price_points[0].price")


def test_price_point_from_unique():
    assert accepted(product(pricing=pricing("VOLUME", (1, 100), (6, 90))))
    refused(product(pricing=pricing("VOLUME", (1, 100), (1, 90))), "pricing.price_points[1].from")


def test_price_point_from_not_negative():
    refused(product(pricing=pricing("VOLUME", (-1, 100))), "pricing.price_points[0].from")


def test_price_point_from_whole_unless_kg_with_volume():
    refused(product(pricing=pricing("VOLUME", (D("0.5"), 100))), "pricing.price_points[0].from")
    refused(product(pricing=pricing("INCREMENTAL", (1, 100), (D("2.5"), 90))), "pricing.price_points[1].from")
    stored = accepted(product(order_by="kg", pricing=pricing("VOLUME", (D("0.5"), 100), (2, 90))))
    assert stored["pricing"]["price_points"][0] == {"from": D("0.5"), "price": 100}


@pytest.mark.parametrize("strategy", ["INCREMENTAL", "DIVISIBLE"])
def test_kg_products_only_with_volume(strategy):
    refused(product(order_by="kg", pricing=pricing(strategy)), "pricing.strategy")


def test_min_order_count_equals_smallest_positive_from():
    assert accepted(product(min_order_count=6, pricing=pricing("VOLUME", (0, 120), (6, 100), (12, 90))))
    refused(product(min_order_count=1, pricing=pricing("VOLUME", (6, 100), (12, 90))), "min_order_count")
    assert accepted(product(pricing=pricing("VOLUME", (6, 100))))  # absent: the smallest from is the minimum


def test_date_override_dates():
    override = {"from_date": "2026-07-01", "to_date": "2026-07-01", "price_points": [{"from": 1, "price": 80}]}
    assert accepted(product(pricing=pricing(date_overrides=[override])))
    backwards = {**override, "to_date": "2026-06-30"}
    refused(product(pricing=pricing(date_overrides=[backwards])), "pricing.date_overrides[0].to_date")
    bad_date = {**override, "from_date": "2026-06-31"}
    refused(product(pricing=pricing(date_overrides=[bad_date])), "pricing.date_overrides[0].from_date")


def test_date_override_needs_price_points():
    refused(
        product(pricing=pricing(date_overrides=[{"from_date": "2026-07-01", "price_points": []}])),
        "pricing.date_overrides[0].price_points",
    )


def test_date_override_points_follow_the_point_rules():
    override = {"from_date": "2026-07-01", "price_points": [{"from": 1, "price": 80}, {"from": 1, "price": 70}]}
    refused(product(pricing=pricing(date_overrides=[override])), "pricing.date_overrides[0].price_points[1].from")


def override(start, end=None):
    result = {"from_date": start, "price_points": [{"from": 1, "price": 80}]}
    if end:
        result["to_date"] = end
    return result


def test_adjacent_date_overrides_are_fine():
    assert accepted(
        product(
            pricing=pricing(date_overrides=[override("2026-07-01", "2026-07-31"), override("2026-08-01", "2026-08-31")])
        )
    )


def test_overlapping_date_overrides_are_refused():
    paths = error_paths(
        product(
            pricing=pricing(date_overrides=[override("2026-07-01", "2026-07-31"), override("2026-07-31", "2026-08-31")])
        )
    )
    assert paths == ["pricing.date_overrides[1]"]


def test_open_ended_date_override():
    assert accepted(
        product(pricing=pricing(date_overrides=[override("2026-01-01", "2026-06-30"), override("2026-07-01")]))
    )
    paths = error_paths(
        product(pricing=pricing(date_overrides=[override("2026-07-01"), override("2027-01-01", "2027-01-31")]))
    )
    assert paths == ["pricing.date_overrides[1]"]


# --- image ---


@pytest.mark.parametrize("url", ["https://img.example.com/a.png", "http://img.example.com:8080/a?b=c"])
def test_image_url_absolute_http(url):
    assert accepted(product(image={"url": url}))["image"] == {"url": url}


@pytest.mark.parametrize(
    "url",
    [
        "ftp://img.example.com/a.png",
        "/images/a.png",
        "img.example.com/a.png",
        "https://",
        "javascript:alert(1)",
        "https://img.example.com/a b.png",
    ],
)
def test_image_url_refused(url):
    refused(product(image={"url": url}), "image.url")


def test_image_url_required_and_etag_optional():
    image = {"url": "https://img.example.com/a.png", "etag": "x1", "last_modified": "2026-01-01T00:00:00Z"}
    assert accepted(product(image=image))["image"] == image
    refused(product(image={"etag": "x1"}), "image.url")


# --- custom properties, gtin, unknown fields ---


def test_custom_properties_values():
    properties = {"s": "x" * 2000, "n": D("1.5"), "zero": 0, "neg": -2, "b": False, "tags": ["a", "b"], "empty": []}
    assert accepted(product(custom_properties=properties))["custom_properties"] == properties


@pytest.mark.parametrize("value", [{"nested": 1}, "x" * 2001, [1, 2], None])
def test_custom_properties_value_refused(value):
    refused(product(custom_properties={"key": value}), "custom_properties.key")


def test_custom_properties_at_most_50_keys():
    assert accepted(product(custom_properties={f"k{i}": i for i in range(50)}))
    refused(product(custom_properties={f"k{i}": i for i in range(51)}), "custom_properties")


def test_custom_properties_must_be_an_object():
    refused(product(custom_properties=["a"]), "custom_properties")


def test_gtin_is_a_string():
    assert accepted(product(gtin="4006381333931"))["gtin"] == "4006381333931"
    refused(product(gtin=4006381333931), "gtin")


def test_unknown_top_level_field_refused():
    refused(product(colour="red"), "colour")


# --- all errors at once ---


def test_several_wrong_fields_are_all_listed():
    paths = error_paths(
        product(
            name="x",
            status="GONE",
            price=-1,
            vessel={"size": 0, "unit": "pint"},
            delivery_days={"1": {"lead_days": 0, "cutoff": "24:00"}},
        )
    )
    assert sorted(paths) == sorted(["name", "status", "price", "vessel.size", "vessel.unit", "delivery_days.1.cutoff"])


def test_rule_errors_are_listed_with_shape_errors():
    """A wrong name must not hide the bundle, pricing and custom property rules."""
    paths = error_paths(
        product(
            name="x",
            order_by="kg",
            vessel={"size": 2, "unit": "kg"},
            bundles=[{"type": "CT", "size": D("2.5")}, pallet()],
            pricing=pricing("INCREMENTAL", (1, 100), (1, 90)),
            custom_properties={"bad": {"x": 1}},
        )
    )
    assert sorted(paths) == sorted(
        [
            "name",
            "vessel",
            "bundles[0].size",
            "pricing.strategy",
            "pricing.price_points[1].from",
            "custom_properties.bad",
        ]
    )


def test_rule_errors_are_listed_when_a_sibling_field_is_wrong():
    paths = error_paths(product(price="1", bundles=[pallet()]))
    assert sorted(paths) == ["bundles[0].pallet_bundle", "price"]


def test_a_missing_id_is_listed_with_shape_errors():
    data = product(name="x")
    del data["id"]
    assert sorted(error_paths(data)) == ["id", "name"]
    assert sorted(error_paths(product(id="p.1", name="x"))) == ["id", "name"]


def test_a_non_object_body_is_one_error():
    assert error_paths(["not", "an", "object"]) == ["body"]


# --- id from the URL ---


def test_id_taken_from_the_url():
    data = product()
    del data["id"]
    assert accepted(data, "p9")["id"] == "p9"
    assert accepted(product(id="p9"), "p9")["id"] == "p9"
    assert error_paths(product(id="p1"), "p9") == ["id"]


def test_id_required_without_url_id():
    data = product()
    del data["id"]
    assert error_paths(data) == ["id"]
