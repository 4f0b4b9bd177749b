"""What a customer sees with a customer token: their catalogue with their prices, and delivery dates
(decisions §2, §6, §7, §8)."""

import datetime as dt

import pytest

from tests.api.customer_support import customer_token, dynamodb_calls, make_customer, make_product, volume
from tests.conftest import clock_at, problem_paths
from tests.problems import assert_problem

EVERY_DAY = {str(n): {"lead_days": 0, "cutoff": "12:00"} for n in range(7)}


@pytest.fixture
def customer(api):
    """A customer token for customer bar-1."""
    make_customer(api, "bar-1")
    return customer_token(api, "bar-1")


def catalogue(api, token, query=""):
    response = api.get(f"/customer/products{query}", token=token)
    assert response.status_code == 200, response.data
    return response.data


def shown(api, token, product_id):
    return next(p for p in catalogue(api, token, "?limit=100")["products"] if p["id"] == product_id)


# --- GET /customer/products ---


def test_the_catalogue_shows_active_and_out_of_stock_products_only(api, customer):
    make_product(api, "a-active", status="ACTIVE", price=100)
    make_product(api, "b-inactive", status="INACTIVE", price=100)
    make_product(api, "c-out", status="OUT_OF_STOCK", price=100)
    assert [p["id"] for p in catalogue(api, customer)["products"]] == ["a-active", "c-out"]


def test_pages_stay_full_whatever_is_inactive(api, customer):
    statuses = ["ACTIVE", "INACTIVE", "INACTIVE", "OUT_OF_STOCK", "INACTIVE", "ACTIVE", "ACTIVE", "INACTIVE", "ACTIVE"]
    for n, status in enumerate(statuses):
        make_product(api, f"p{n}", status=status)
    seen, sizes, query = [], [], "?limit=2"
    while True:
        page = catalogue(api, customer, query)
        seen += [p["id"] for p in page["products"]]
        sizes.append(len(page["products"]))
        if "cursor" not in page:
            break
        query = f"?limit=2&cursor={page['cursor']}"
    assert seen == ["p0", "p3", "p5", "p6", "p8"]
    assert sizes == [2, 2, 1]


def test_a_product_leaves_and_rejoins_the_catalogue_with_its_status(api, customer):
    make_product(api, "beer", price=100)
    make_product(api, "beer", status="INACTIVE", price=100)
    assert catalogue(api, customer) == {"products": []}
    make_product(api, "beer", status="OUT_OF_STOCK", price=100)
    assert [p["id"] for p in catalogue(api, customer)["products"]] == ["beer"]


def test_a_product_is_shown_as_get_shows_it_when_the_product_price_applies(api, customer):
    product = make_product(
        api,
        "beer",
        price=250,
        price_per="l",
        vessel={"size": 0.33, "unit": "l", "type": "BO"},
        bundles=[{"id": "crate", "type": "CT", "size": 24}],
        delivery_days={"1": {"lead_days": 1}},
        gtin="6411401015090",
    )
    assert shown(api, customer, "beer") == product


def test_the_level_with_pricing_drops_the_plain_price(api, customer):
    make_product(api, "beer", price=250, pricing=volume((1, 240), (24, 200)))
    entry = shown(api, customer, "beer")
    assert entry["pricing"] == volume((1, 240), (24, 200))
    assert "price" not in entry


def test_the_price_group_of_the_customer_applies_before_the_product(api, customer):
    make_product(api, "beer", price=250, pricing=volume((1, 240)))
    api.put("/products/beer/price-groups", {"gold": {"price": 200}, "silver": {"price": 230}})
    api.patch("/customers/bar-1", {"price_group": "gold"})
    entry = shown(api, customer, "beer")
    assert entry["price"] == 200
    assert "pricing" not in entry


def test_the_customer_pricing_applies_before_the_group(api, customer):
    make_product(api, "beer", price=250)
    api.put("/products/beer/price-groups", {"gold": {"price": 200}})
    api.patch("/customers/bar-1", {"price_group": "gold"})
    api.put("/products/beer/customer-pricing/bar-1", {"pricing": volume((1, 180), (10, 170)), "price": 1})
    entry = shown(api, customer, "beer")
    assert entry["pricing"] == volume((1, 180), (10, 170))
    assert "price" not in entry


def test_an_empty_customer_pricing_falls_through_to_the_group(api, customer):
    make_product(api, "beer", price=250)
    api.put("/products/beer/price-groups", {"gold": {"price": 200}})
    api.patch("/customers/bar-1", {"price_group": "gold"})
    api.put("/products/beer/customer-pricing/bar-1", {})
    assert shown(api, customer, "beer")["price"] == 200


def test_a_group_the_product_does_not_price_falls_through_to_the_product(api, customer):
    make_product(api, "beer", price=250)
    api.put("/products/beer/price-groups", {"silver": {"price": 230}})
    api.patch("/customers/bar-1", {"price_group": "gold"})
    assert shown(api, customer, "beer")["price"] == 250


def test_other_customers_pricing_does_not_apply(api, customer):
    make_product(api, "beer", price=250)
    make_customer(api, "bar-2")
    api.put("/products/beer/customer-pricing/bar-2", {"price": 99})
    assert shown(api, customer, "beer")["price"] == 250
    assert shown(api, customer_token(api, "bar-2"), "beer")["price"] == 99


def test_the_minimum_shown_is_the_larger_of_the_product_and_customer_pricing(api, customer):
    make_product(api, "crate", min_order_count=6, pricing=volume((6, 100)))
    assert shown(api, customer, "crate")["min_order_count"] == 6
    api.put("/products/crate/customer-pricing/bar-1", {"pricing": volume((12, 90))})
    assert shown(api, customer, "crate")["min_order_count"] == 12
    api.put("/products/crate/customer-pricing/bar-1", {"pricing": volume((1, 90))})
    assert shown(api, customer, "crate")["min_order_count"] == 6


def test_a_catalogue_page_is_one_query_and_one_batch_read(api, customer):
    for n in range(3):
        make_product(api, f"p{n}", price=100)
    catalogue(api, customer)
    with dynamodb_calls() as calls:
        assert len(catalogue(api, customer)["products"]) == 3
    assert calls == ["Query", "BatchGetItem"]


def test_the_catalogue_belongs_to_the_account_of_the_token(api, customer):
    from tests.conftest import OTHER_TOKEN

    make_product(api, "beer", price=100)
    assert api.put("/categories/food", {"name": "Food"}, token=OTHER_TOKEN).status_code == 200
    other = {"status": "ACTIVE", "category": "food", "name": "Other bread"}
    assert api.put("/products/bread", other, token=OTHER_TOKEN).status_code == 200
    assert [p["id"] for p in catalogue(api, customer)["products"]] == ["beer"]


def test_a_cursor_of_the_supplier_list_is_refused(api, customer):
    for n in range(3):
        make_product(api, f"p{n}")
    cursor = api.get("/products?limit=1").data["cursor"]
    response = api.get(f"/customer/products?cursor={cursor}", token=customer)
    assert response.status_code == 400
    assert problem_paths(response) == ["cursor"]


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "cursor=nope"])
def test_bad_paging_parameters_are_refused(api, customer, query):
    response = api.get(f"/customer/products?{query}", token=customer)
    assert_problem(response, 400, "validation-error")
    assert problem_paths(response) == [query.split("=")[0]]


@pytest.mark.parametrize("path", ["/customer/products", "/customer/delivery-dates"])
def test_supplier_tokens_are_forbidden_on_customer_routes(api, path):
    response = api.get(path)
    assert_problem(response, 403, "forbidden")
    assert api.get(path, token=None).status_code == 401


# --- GET /customer/delivery-dates ---

# Monday 4 May 2026, 09:30 UTC = 12:30 in Helsinki.
NOW = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)


@pytest.fixture
def frozen(monkeypatch):
    clock_at(monkeypatch, NOW)


def dates(api, token, query=""):
    response = api.get(f"/customer/delivery-dates{query}", token=token)
    assert response.status_code == 200, response.data
    return response.data["dates"]


def days_from(start, count):
    first = dt.date.fromisoformat(start)
    return [(first + dt.timedelta(days=n)).isoformat() for n in range(count)]


def test_without_rules_the_next_14_days_are_listed(api, customer, frozen):
    response = api.get("/customer/delivery-dates", token=customer)
    assert response.status_code == 200
    assert response.data == {"dates": days_from("2026-05-04", 14)}


@pytest.mark.parametrize("days", ["1", "3", "60"])
def test_days_sets_how_many_dates(api, customer, frozen, days):
    assert dates(api, customer, f"?days={days}") == days_from("2026-05-04", int(days))


@pytest.mark.parametrize("days", ["0", "61", "-1", "1.5", "abc", "", "%C2%B2", "9999999999"])
def test_days_out_of_range_is_400(api, customer, frozen, days):
    response = api.get(f"/customer/delivery-dates?days={days}", token=customer)
    assert response.status_code == 400
    assert problem_paths(response) == ["days"]


def test_cutoffs_are_evaluated_in_the_account_timezone(api, customer, frozen):
    api.patch("/account/settings/deliveries", {"delivery_days": EVERY_DAY})
    assert dates(api, customer, "?days=2") == ["2026-05-04", "2026-05-05"]  # 09:30 UTC is before 12:00
    api.patch("/account/settings/deliveries", {"timezone": "Europe/Helsinki"})
    assert dates(api, customer, "?days=2") == ["2026-05-05", "2026-05-06"]  # 12:30 in Helsinki is after 12:00


def test_the_local_day_starts_in_the_account_timezone(api, customer, monkeypatch):
    clock_at(monkeypatch, dt.datetime(2026, 5, 4, 22, 30, tzinfo=dt.timezone.utc))
    assert dates(api, customer, "?days=1") == ["2026-05-04"]
    api.patch("/account/settings/deliveries", {"timezone": "Asia/Tokyo"})
    assert dates(api, customer, "?days=1") == ["2026-05-05"]


def test_lead_days_and_weekdays_of_the_account(api, customer, frozen):
    # Deliveries on Mondays and Thursdays, ordered two days ahead by 10:00.
    rule = {"lead_days": 2, "cutoff": "10:00"}
    api.patch("/account/settings/deliveries", {"delivery_days": {"1": rule, "4": rule}})
    assert dates(api, customer, "?days=3") == ["2026-05-07", "2026-05-11", "2026-05-14"]


def test_the_customer_settings_override_the_account(api, customer, frozen):
    api.patch("/account/settings/deliveries", {"delivery_days": EVERY_DAY})
    api.patch("/customers/bar-1", {"delivery_days": {"3": {"lead_days": 0}}, "dates_with_no_delivery": ["2026-05-13"]})
    assert dates(api, customer, "?days=2") == ["2026-05-06", "2026-05-20"]


def test_empty_customer_delivery_days_means_no_weekday_but_overrides_still_apply(api, customer, frozen):
    api.patch("/customers/bar-1", {"delivery_days": {}, "delivery_date_overrides": {"2026-05-08": {"lead_days": 0}}})
    assert dates(api, customer, "?days=5") == ["2026-05-08"]


def test_no_delivery_dates_of_the_account_customer_and_product_all_count(api, customer, frozen):
    api.patch("/account/settings/deliveries", {"dates_with_no_delivery": ["2026-05-04"]})
    api.patch("/customers/bar-1", {"dates_with_no_delivery": ["2026-05-05"]})
    make_product(api, "beer", dates_with_no_delivery=["2026-05-06"])
    assert dates(api, customer, "?days=2") == ["2026-05-06", "2026-05-07"]
    assert dates(api, customer, "?days=2&products=beer") == ["2026-05-07", "2026-05-08"]


def test_every_product_of_the_order_must_be_deliverable(api, customer, frozen):
    make_product(api, "fresh", delivery_days={str(n): {"lead_days": 0} for n in range(1, 6)})
    make_product(api, "frozen", status="OUT_OF_STOCK", delivery_days={"2": {"lead_days": 1}, "4": {"lead_days": 1}})
    assert dates(api, customer, "?days=3&products=fresh") == ["2026-05-04", "2026-05-05", "2026-05-06"]
    assert dates(api, customer, "?days=3&products=fresh,frozen") == ["2026-05-05", "2026-05-07", "2026-05-12"]
    assert dates(api, customer, "?days=3&products=frozen,%20fresh,fresh") == ["2026-05-05", "2026-05-07", "2026-05-12"]


@pytest.mark.parametrize("products", ["nothing", "beer,nothing", "sleeping", "bad.id"])
def test_products_that_cannot_be_ordered_are_400(api, customer, frozen, products):
    make_product(api, "beer")
    make_product(api, "sleeping", status="INACTIVE")
    response = api.get(f"/customer/delivery-dates?products={products}", token=customer)
    assert response.status_code == 400
    assert problem_paths(response) == ["products"]


def test_products_of_another_account_are_unknown(api, customer, frozen):
    from tests.conftest import OTHER_TOKEN

    api.put("/categories/food", {"name": "Food"}, token=OTHER_TOKEN)
    api.put("/products/bread", {"status": "ACTIVE", "category": "food", "name": "Bread"}, token=OTHER_TOKEN)
    response = api.get("/customer/delivery-dates?products=bread", token=customer)
    assert response.status_code == 400
    assert problem_paths(response) == ["products"]


def test_bad_days_and_products_are_reported_together(api, customer, frozen):
    response = api.get("/customer/delivery-dates?products=a.b&days=0", token=customer)
    assert response.status_code == 400
    assert problem_paths(response) == ["products", "days"]


def test_delivery_dates_are_one_batch_read(api, customer, frozen):
    make_product(api, "beer")
    make_product(api, "wine")
    dates(api, customer)
    with dynamodb_calls() as calls:
        dates(api, customer, "?products=beer,wine")
    assert calls == ["BatchGetItem"]
