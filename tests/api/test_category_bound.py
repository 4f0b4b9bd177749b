"""At most 1,000 categories an account, all on one page of GET /categories (decisions §4): a barmate catalogue-sync
client reads the list as one answer."""

import pytest

from chalicelib.domain.limits import CATEGORIES
from chalicelib.store import keys, table
from tests.conftest import problem_paths

from .test_imports import imported, upload

pytestmark = pytest.mark.usefixtures("fake_clock")
BOUND = f"an account holds at most {CATEGORIES:,} categories; delete one first"


def seed(count: int, counted: bool = True, account: str = "acme") -> None:
    """`count` categories c0000…, written straight into the table, with the account's count item unless the
    account is one from before the count was kept."""
    items = [{**keys.category_key(account, f"c{n:04d}"), "name": f"Category {n}"} for n in range(count)]
    if counted:
        items.append({**keys.category_count_key(account), "categories": count})
    else:  # (create-account keeps a count from the start)
        table.client().delete_item(TableName=table.name(), Key=table.to_item(keys.category_count_key(account)))
    for start in range(0, len(items), 25):
        requests = [{"PutRequest": {"Item": table.to_item(item)}} for item in items[start : start + 25]]
        table.client().batch_write_item(RequestItems={table.name(): requests})


def refused_as_full(response) -> None:
    assert response.status_code == 400
    assert response.data["type"].endswith("validation-error")
    assert problem_paths(response) == ["id"]
    assert response.data["errors"][0]["message"] == BOUND


@pytest.mark.parametrize("counted", [True, False], ids=["counted", "made-before-the-count"])
def test_the_thousandth_category_is_created_and_the_next_refused_naming_id(api, counted):
    seed(CATEGORIES - 1, counted)
    assert api.put("/categories/last", {"name": "Last"}).status_code == 200
    refused_as_full(api.put("/categories/beyond", {"name": "Beyond"}))
    refused_as_full(api.post("/categories", {"id": "beyond", "name": "Beyond"}))
    assert api.get("/categories/beyond").status_code == 404
    assert api.put("/categories/last", {"name": "Renamed"}).status_code == 200  # a rename creates nothing
    assert api.post("/categories", {"id": "last", "name": "Last"}).data["type"].endswith("conflict")  # as before
    assert api.delete("/categories/c0000").status_code == 204
    assert api.post("/categories", {"id": "beyond", "name": "Beyond"}).status_code == 200
    refused_as_full(api.put("/categories/more", {"name": "More"}))
    assert len(api.get("/categories").data["categories"]) == CATEGORIES


def test_the_count_follows_creates_and_deletes(api):
    for n in range(3):
        assert api.put(f"/categories/k{n}", {"name": f"K{n}"}).status_code == 200
    assert api.delete("/categories/k1").status_code == 204
    stored = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.category_count_key("acme")))
    assert stored["Item"]["categories"] == {"N": "2"}


def test_another_accounts_categories_do_not_count(api):
    seed(CATEGORIES, account="other")
    assert api.put("/categories/mine", {"name": "Mine"}).status_code == 200


def test_one_page_without_a_cursor_holds_every_category_by_default(api):
    seed(CATEGORIES)
    page = api.get("/categories")
    assert page.status_code == 200
    assert len(page.data["categories"]) == CATEGORIES
    assert "cursor" not in page.data
    assert page.data["categories"][0] == {"id": "c0000", "name": "Category 0"}
    assert api.get(f"/categories?limit={CATEGORIES}").data == page.data


def test_limit_is_1_to_1000_and_a_smaller_page_has_a_cursor(api):
    seed(120)
    first = api.get("/categories?limit=100")
    assert [c["id"] for c in first.data["categories"]] == [f"c{n:04d}" for n in range(100)]
    rest = api.get(f"/categories?limit=100&cursor={first.data['cursor']}").data
    assert [c["id"] for c in rest["categories"]] == [f"c{n:04d}" for n in range(100, 120)]
    assert "cursor" not in rest
    for bad in ("0", "1001", "x", "-1"):
        response = api.get(f"/categories?limit={bad}")
        assert response.status_code == 400
        assert problem_paths(response) == ["limit"]
        assert response.data["errors"][0]["message"] == "must be a whole number from 1 to 1000"
    assert len(api.get("/categories?limit=1").data["categories"]) == 1


def test_other_lists_keep_their_limit_of_100(api):
    response = api.get("/products?limit=101")
    assert response.status_code == 400
    assert problem_paths(response) == ["limit"]


def test_the_document_says_the_categories_limit(api):
    document = api.get("/openapi.json").data
    (limit,) = [p for p in document["paths"]["/categories"]["get"]["parameters"] if p["name"] == "limit"]
    assert limit["schema"] == {"type": "integer", "minimum": 1, "maximum": 1000, "default": 1000}
    (products,) = [p for p in document["paths"]["/products"]["get"]["parameters"] if p["name"] == "limit"]
    assert products["schema"]["maximum"] == 100


IMPORT = (
    "Item ID;Item name;Category name;Price\n"
    "a-1;Apple juice;Juices;1,00\n"
    "b-1;Beer one;Beers;2,00\n"
    "b-2;Beer two;Beers;2,00\n"
    "a-2;Apple two;Juices;1,00\n"
)


def test_an_import_creates_categories_up_to_the_bound_and_reports_rows_beyond_it(api):
    seed(CATEGORIES - 1)
    report = imported(api, IMPORT)
    assert (report["created"], report["invalid"], report["categories_created"]) == (2, 2, 1)
    assert report["errors"] == [
        {
            "row": 3,
            "column": "Category name",
            "message": f"would be a new category, and an account holds at most {CATEGORIES:,}",
        },
        {
            "row": 4,
            "column": "Category name",
            "message": f"would be a new category, and an account holds at most {CATEGORIES:,}",
        },
    ]
    assert api.get("/categories/juices").status_code == 200
    assert api.get("/products/b-1").status_code == 404
    refused_as_full(api.put("/categories/beyond", {"name": "Beyond"}))


def test_a_dry_run_reports_the_bound_where_the_file_first_needs_the_category(api):
    seed(CATEGORIES - 1)
    response = upload(api, IMPORT, query="?dry_run=true")
    from .test_imports import run_jobs

    run_jobs()
    report = api.get(f"/imports/products/{response.data['id']}").data
    assert (report["invalid"], report["categories_created"]) == (1, 1)
    assert [(e["row"], e["column"]) for e in report["errors"]] == [(3, "Category name")]
    assert api.get("/categories").data["categories"][-1]["id"] == "c0998"  # nothing written


def test_an_import_into_an_account_at_the_bound_uses_the_categories_it_has(api):
    seed(CATEGORIES)
    report = imported(api, "Item ID;Item name;Category ID;Price\nx-1;Existing one;c0005;1,00\n")
    assert (report["created"], report["invalid"]) == (1, 0)
