"""POST/GET /imports/products over HTTP, with the background job run by the test (decisions §12)."""

import pytest

from chalicelib.jobs import import_turns
from chalicelib.service import clock, importing
from chalicelib.store import keys, table
from tests.api.customer_support import customer_token, make_customer
from tests.conftest import OTHER_TOKEN
from tests.problems import assert_problem

pytestmark = pytest.mark.usefixtures("fake_clock")

CSV = "text/csv; charset=utf-8"
FILE = (
    "Item ID;Item name;Category name;Vessel size;Vessel unit;Vessel type;Bundle size;Bundle type;Price;Status;Labels\n"
    'cola-033;Cola 0.33 l;Soft drinks;0,33;l;BO;24;CT;1,20;ACTIVE;"vegan, sugar"\n'
    "lager-05;Lager 0.5 l;Beer;0,5;l;BO;20;CT;1,95;;\n"
)


def upload(api, text: str | bytes, content_type=CSV, query="", token=...):
    raw = text.encode() if isinstance(text, str) else text
    return api.request(
        "POST", f"/imports/products{query}", raw=raw, headers={"Content-Type": content_type}, token=token
    )


def run_jobs():
    """One run of the import job with a minute to work (the fake clock moves only as the test says)."""
    return import_turns.advance_imports(clock.after(60))


def imported(api, text, **kw) -> dict:
    response = upload(api, text, **kw)
    assert response.status_code == 202, response.data
    assert run_jobs()["done"] >= 1
    report = api.get(f"/imports/products/{response.data['id']}").data
    assert report["status"] == "DONE", report
    return report


def counts(report):
    return {k: report[k] for k in ("rows", "processed", "created", "updated", "unchanged", "invalid")}


def test_upload_answers_202_with_the_running_import_and_get_shows_the_result(api):
    response = upload(api, FILE)
    assert response.status_code == 202
    assert response.headers["Location"] == f"/imports/products/{response.data['id']}"
    assert response.data == {
        "id": response.data["id"], "status": "RUNNING", "dry_run": False, "rows": 2, "processed": 0, "created": 0,
        "updated": 0, "unchanged": 0, "invalid": 0, "categories_created": 0, "error_count": 0,
        "submitted_at": response.data["submitted_at"], "errors": [],
    }  # fmt: skip
    run_jobs()
    report = api.get(f"/imports/products/{response.data['id']}").data
    assert report["status"] == "DONE" and "finished_at" in report
    assert counts(report) == {"rows": 2, "processed": 2, "created": 2, "updated": 0, "unchanged": 0, "invalid": 0}
    assert report["categories_created"] == 2 and report["errors"] == []
    assert api.get("/products/cola-033").data == {
        "id": "cola-033", "status": "ACTIVE", "category": "soft-drinks", "name": "Cola 0.33 l",
        "vessel": {"size": 0.33, "unit": "l", "type": "BO"}, "bundles": [{"type": "CT", "size": 24}], "price": 120,
        "custom_properties": {"labels": ["vegan", "sugar"]},
    }  # fmt: skip
    assert api.get("/categories/beer").data == {"id": "beer", "name": "Beer"}


def test_imported_products_are_in_the_customer_catalogue(api):
    imported(api, FILE)
    make_customer(api, "bar")
    token = customer_token(api, "bar")
    listed = api.get("/customer/products", token=None, headers={"Authorization": f"Bearer {token}"}).data
    assert [p["id"] for p in listed["products"]] == ["cola-033", "lager-05"]


def test_progress_is_visible_while_running(api, monkeypatch):
    monkeypatch.setattr("chalicelib.store.import_chunks.MAX_CHUNK_ROWS", 2)
    rows = "".join(f"p{i};Product {i};Drinks;1\n" for i in range(5))
    response = upload(api, "Item ID;Item name;Category name;Price\n" + rows)
    import_id = response.data["id"]
    # The slice's time runs out after one chunk: the clock passes the deadline when that chunk commits.
    monkeypatch.setattr("chalicelib.service.importing.IMPORT_CHUNK_SECONDS", 0.0)
    original = importing.commit_chunk
    commits = {"n": 0}

    def commit(*args):
        outcome = original(*args)
        commits["n"] += 1
        if commits["n"] == 1:
            clock.current().advance(1000)
        return outcome

    monkeypatch.setattr(importing, "commit_chunk", commit)
    summary = run_jobs()
    assert summary["paused"] == 1
    report = api.get(f"/imports/products/{import_id}").data
    assert report["status"] == "RUNNING" and report["processed"] == 2 and report["created"] == 2
    monkeypatch.setattr(importing, "commit_chunk", original)
    run_jobs()
    assert counts(api.get(f"/imports/products/{import_id}").data)["created"] == 5


def test_reimport_is_all_unchanged_and_writes_nothing(api):
    imported(api, FILE)
    etag = api.get("/products/cola-033").headers["ETag"]
    report = imported(api, FILE)
    assert counts(report) == {"rows": 2, "processed": 2, "created": 0, "updated": 0, "unchanged": 2, "invalid": 0}
    assert report["categories_created"] == 0
    assert api.get("/products/cola-033").headers["ETag"] == etag


def test_dry_run_writes_nothing_and_counts_what_would_change(api):
    imported(api, FILE)
    changed = FILE.replace("1,20", "1,30") + "fanta;Fanta;Lemonade;;;;;;1;;\n"
    report = imported(api, changed, query="?dry_run=true")
    assert report["dry_run"] is True
    assert counts(report) == {"rows": 3, "processed": 3, "created": 1, "updated": 1, "unchanged": 1, "invalid": 0}
    assert report["categories_created"] == 1
    assert api.get("/products/cola-033").data["price"] == 120
    assert api.get("/products/fanta").status_code == 404
    assert api.get("/categories/lemonade").status_code == 404
    assert imported(api, changed, query="?dry_run=false")["created"] == 1


def test_a_latin1_file_with_semicolons(api):
    text = "Item ID;Item name;Category name;Price;Description\nsaft;Apfelsäft;Säfte;2,50;Süß\n"
    report = imported(api, text.encode("latin-1"), content_type="text/csv; charset=latin1")
    assert report["created"] == 1
    product = api.get("/products/saft").data
    assert product["name"] == "Apfelsäft" and product["price"] == 250
    assert product["custom_properties"] == {"description": "Süß"}
    assert api.get(f"/categories/{product['category']}").data["name"] == "Säfte"


def test_bad_rows_are_reported_with_line_and_column_and_the_rest_is_imported(api):
    text = (
        "Item ID,Item name,Category name,Price,Description,Status\n"
        'good,Good one,Drinks,"1,5","two\nlines",\n'
        "bad id!,Bad,Drinks,x,,SOLD\n"
        "ok,Ok product,Drinks,2,,\n"
    )
    report = imported(api, text)
    assert counts(report) == {"rows": 3, "processed": 3, "created": 2, "updated": 0, "unchanged": 0, "invalid": 1}
    # Every problem of the row, one entry each (decisions §12): the cell that cannot be read, then the rules' verdict
    # on the cells that can.
    assert [(e["row"], e["column"]) for e in report["errors"]] == [(4, "Price"), (4, "Item ID"), (4, "Status")]
    assert report["errors"][0]["message"] == "must be a decimal number such as 12.90 or 12,90"
    assert api.get("/products/good").data["custom_properties"] == {"description": "two\nlines"}


def test_a_cell_that_cannot_be_read_hides_no_other_problem_of_its_row(api):
    text = "Item ID;Item name;Category name;Order by;Minimum order count;Image;Vessel size\n"
    text += "ig4;Good name;cat;box;abc;notaurl;x\nfine;Fine one;cat;;;;\n"
    report = imported(api, text)
    assert report["invalid"] == 1 and report["created"] == 1
    columns = [e["column"] for e in report["errors"]]
    assert columns == ["Minimum order count", "Vessel size", "Order by", "Image"], report["errors"]


def test_a_row_that_switches_order_by_under_pricing_that_would_break_is_refused_in_its_column(api):
    """decisions §6, as PATCH /products/:id says it: kg pricing with a fractional `from` keeps the product by kg."""
    api.put("/categories/food", {"name": "Food"})
    assert (
        api.put(
            "/products/cheese", {"status": "ACTIVE", "category": "food", "name": "Cheese", "order_by": "kg"}
        ).status_code
        == 200
    )
    assert api.put("/customers/bar-1", {"name": "Bar"}).status_code == 200
    level = {"pricing": {"strategy": "VOLUME", "price_points": [{"from": 0.5, "price": 1600}]}}
    assert api.put("/products/cheese/customer-pricing/bar-1", level).status_code == 200
    report = imported(api, "Item ID,Item name,Category ID,Order by\ncheese,Cheese,food,vessel\n")
    assert report["invalid"] == 1
    assert [(e["row"], e["column"]) for e in report["errors"]] == [(2, "Order by")]
    assert "customer bar-1" in report["errors"][0]["message"]
    assert api.get("/products/cheese").data["order_by"] == "kg"


def test_each_product_rule_problem_is_one_entry(api):
    text = "Item ID,Item name,Category name,Status,Vessel size,Vessel unit\nbad id!,ab,Drinks,SOLD,0,l\n"
    report = imported(api, text)
    assert report["invalid"] == 1 and report["error_count"] == 4
    assert {e["column"] for e in report["errors"]} == {"Item ID", "Item name", "Status", "Vessel size"}
    assert all(e["row"] == 2 for e in report["errors"])


def test_an_update_keeps_what_the_file_cannot_express_and_replaces_the_rest(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    image = {"url": "https://img.example.com/c.png", "etag": "e1", "last_modified": "2026-01-01T00:00:00Z"}
    api.put("/products/cola", {
        "status": "ACTIVE", "category": "drinks", "name": "Cola", "price": 100, "gtin": "123",
        "delivery_days": {"1": {"lead_days": 2}}, "dates_with_no_delivery": ["2030-01-01"],
        "pricing": {"strategy": "VOLUME", "price_points": [{"from": 1, "price": 100}]},
        "custom_properties": {"brand": "Old"}, "image": image,
    })  # fmt: skip
    report = imported(
        api, "Item ID,Item name,Category ID,Price,Image\ncola,Cola new,drinks,1.10,https://img.example.com/c.png\n"
    )
    assert report["updated"] == 1
    assert api.get("/products/cola").data == {
        "id": "cola", "status": "ACTIVE", "category": "drinks", "name": "Cola new", "price": 110,
        "delivery_days": {"1": {"lead_days": 2}}, "dates_with_no_delivery": ["2030-01-01"],
        "pricing": {"strategy": "VOLUME", "price_points": [{"from": 1, "price": 100}]}, "image": image,
    }  # fmt: skip


def test_a_row_that_clashes_with_kept_pricing_is_invalid(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    api.put(
        "/products/cola",
        {
            "status": "ACTIVE",
            "category": "drinks",
            "name": "Cola",
            "min_order_count": 6,
            "pricing": {"strategy": "VOLUME", "price_points": [{"from": 6, "price": 100}]},
        },
    )
    report = imported(api, "Item ID,Item name,Category ID,Minimum order count\ncola,Cola,drinks,2\n")
    assert report["errors"] == [
        {
            "row": 2,
            "column": "Minimum order count",
            "message": "must equal the smallest positive 'from' of the price points",
        }
    ]
    assert imported(api, "Item ID,Item name,Category ID,Minimum order count\ncola,Cola,drinks,6\n")["unchanged"] == 1


def test_products_missing_from_the_file_are_left_alone(api):
    api.put("/categories/drinks", {"name": "Drinks"})
    api.put("/products/other", {"status": "ACTIVE", "category": "drinks", "name": "Other"})
    imported(api, FILE)
    assert api.get("/products/other").data == {"id": "other", "status": "ACTIVE", "category": "drinks", "name": "Other"}


def _image_status(product_id):
    item = table.client().get_item(TableName=table.name(), Key=table.to_item(keys.product_key("acme", product_id)))
    return table.from_item(item["Item"]).get("image_status")


def test_an_image_url_is_queued_for_download_and_not_again_for_the_same_url(api):
    text = "Item ID,Item name,Category name,Price,Image\ncola,Cola,Drinks,{price},https://img.example.com/c.png\n"
    imported(api, text.format(price=1))
    assert _image_status("cola") == "PENDING"
    table.client().update_item(
        TableName=table.name(),
        Key=table.to_item(keys.product_key("acme", "cola")),
        UpdateExpression="SET image_status = :done REMOVE GSI3PK, GSI3SK",
        ExpressionAttributeValues=table.values(done="DONE"),
    )
    assert imported(api, text.format(price=2))["updated"] == 1
    assert _image_status("cola") == "DONE"
    imported(api, text.format(price=2).replace("c.png", "d.png"))
    assert _image_status("cola") == "PENDING"


def test_category_by_id_must_exist_and_by_name_uses_the_existing_one(api):
    api.put("/categories/b2", {"name": "Beer"})
    api.put("/categories/b1", {"name": "Beer "})
    text = "Item ID,Item name,Category ID,Category name\nlager,Lager,,Beer\nipa,IPA,b2,\nale,Ale,nope,\n"
    report = imported(api, text)
    assert report["errors"] == [{"row": 4, "column": "Category ID", "message": "does not name an existing category"}]
    assert api.get("/products/lager").data["category"] == "b1"
    assert api.get("/products/ipa").data["category"] == "b2"
    assert report["categories_created"] == 0


def test_imports_list_newest_first_and_page(api):
    first = upload(api, FILE).data["id"]
    clock.current().advance(0.002)  # the ids sort by submission time
    second = upload(api, FILE).data["id"]
    page = api.get("/imports/products?limit=1").data
    assert [i["id"] for i in page["imports"]] == [second] and "errors" not in page["imports"][0]
    rest = api.get(f"/imports/products?limit=1&cursor={page['cursor']}").data
    assert [i["id"] for i in rest["imports"]] == [first] and "cursor" not in rest
    assert api.get("/imports/products?limit=0").status_code == 400


def test_another_accounts_import_is_not_found(api):
    import_id = upload(api, FILE).data["id"]
    assert api.get(f"/imports/products/{import_id}", token=OTHER_TOKEN).status_code == 404
    assert api.get("/imports/products", token=OTHER_TOKEN).data == {"imports": []}
    assert_problem(api.get("/imports/products/nope"), 404, "not-found")


@pytest.mark.parametrize(
    "content_type, body, status, message",
    [
        ("application/json", '{"id": 1}', 415, "text/csv"),
        ("text/csv; charset=utf-16", "Item ID\na\n", 415, "charset utf-16 is not supported"),
        (CSV, "Item name\nCola\n", 400, "no Item ID column"),
        (CSV, "", 400, "body"),
        (CSV, "Item ID;Item name\nsaft;S\xe4ft\n".encode("latin-1"), 400, "cannot be decoded as utf-8"),
    ],
)
def test_files_that_cannot_be_read_are_refused_naming_the_reason(api, content_type, body, status, message):
    response = upload(api, body, content_type=content_type)
    assert response.status_code == status, response.data
    assert response.headers["Content-Type"] == "application/problem+json"
    assert message in response.data["detail"] + str(response.data["errors"])
    assert upload(api, "Item ID\na\n").status_code == 202


def test_dry_run_must_be_true_or_false(api):
    response = upload(api, FILE, query="?dry_run=yes")
    assert response.status_code == 400 and response.data["errors"][0]["path"] == "dry_run"
    assert upload(api, FILE, query="?dry_run=TRUE").data["dry_run"] is True


def test_files_up_to_5_mib_are_taken_and_larger_ones_refused(api):
    header = "Item ID;Description\n"
    row = "p;" + "x" * 1000 + "\n"
    big = header + row * ((5 * 1024 * 1024 - len(header)) // len(row))
    big += "p" * (5 * 1024 * 1024 - len(big.encode()))  # exactly 5 MiB
    assert len(big.encode()) == 5 * 1024 * 1024
    assert upload(api, big).status_code == 202
    too_big = upload(api, big + "x")
    assert_problem(too_big, 413, "payload-too-large")
    # Other routes keep the 1 MiB limit.
    assert api.request("PUT", "/categories/x", raw="x" * (1024 * 1024 + 1)).status_code == 413


def test_uploads_need_a_supplier_token(api):
    assert upload(api, FILE, token=None).status_code == 401


def test_the_readme_example(api):
    readme = open("docs/imports.md", encoding="utf-8").read()
    example = readme.split("Save this as `catalogue.csv`:\n\n```csv\n", 1)[1].split("```", 1)[0]
    report = imported(api, example)
    assert counts(report) == {"rows": 3, "processed": 3, "created": 2, "updated": 0, "unchanged": 0, "invalid": 1}
    assert report["categories_created"] == 2
    assert report["errors"] == [
        {"row": 4, "column": "Price", "message": "must be a decimal number such as 12.90 or 12,90"}
    ]
    assert api.get("/products/cola-033").data["custom_properties"] == {
        "labels": ["vegan", "sugar free"],
        "storage_advice": "Keep cool",
    }


def test_the_three_routes_are_documented_with_an_example_file(api):
    paths = api.get("/openapi.json", token=None).data["paths"]
    post = paths["/imports/products"]["post"]
    assert set(post["responses"]) >= {"202", "400", "413", "415"}
    example = post["requestBody"]["content"]["multipart/form-data"]["example"]["file"]
    assert example.startswith("Item ID;Item name;")
    assert {"get", "post"} <= set(paths["/imports/products"]) and "get" in paths["/imports/products/{import_id}"]
    report = imported(api, example)
    assert report["created"] == 2 and report["invalid"] == 0


def test_an_upload_retried_with_the_same_idempotency_key_is_one_import(api):
    first = upload(api, FILE, content_type=CSV)
    headers = {"Content-Type": CSV, "Idempotency-Key": "upload-1"}
    once = api.request("POST", "/imports/products", raw=FILE.encode(), headers=headers)
    again = api.request("POST", "/imports/products", raw=FILE.encode(), headers=headers)
    assert once.status_code == again.status_code == 202
    assert once.data["id"] == again.data["id"] != first.data["id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert len(api.get("/imports/products").data["imports"]) == 2


# --- multipart/form-data (decisions §12) -------------------------------------------------------------------------

BOUNDARY = "----form-7MA4YWxkTrZu0gW"


def form(parts: list[tuple[str, bytes, str | None]], boundary=BOUNDARY) -> bytes:
    """A multipart/form-data body: (name, content, part Content-Type or None) per part."""
    out = b""
    for name, content, content_type in parts:
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{name}.csv"\r\n'.encode()
        if content_type:
            out += f"Content-Type: {content_type}\r\n".encode()
        out += b"\r\n" + content + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


FORM = f"multipart/form-data; boundary={BOUNDARY}"


def test_the_file_may_come_as_the_part_file_of_a_form(api):
    body = form([("note", b"ignored", None), ("file", FILE.encode(), "text/csv")])
    report = imported(api, body, content_type=FORM)
    assert counts(report) == {"rows": 2, "processed": 2, "created": 2, "updated": 0, "unchanged": 0, "invalid": 0}
    assert api.get("/products/cola-033").data["name"] == "Cola 0.33 l"


@pytest.mark.parametrize("part_type", ["text/csv; charset=latin1", "text/csv; charset=ISO-8859-1"])
def test_the_parts_charset_applies(api, part_type):
    text = "Item ID;Item name;Category name;Price\nsaft;S\xe4ft;Getr\xe4nke;1\n"
    imported(api, form([("file", text.encode("latin-1"), part_type)]), content_type=FORM)
    assert api.get("/products/saft").data["name"] == "Säft"


def test_a_part_without_charset_is_utf_8(api):
    text = "Item ID;Item name;Category name;Price\nsaft;Säft 🍺;Drinks;1\n"
    imported(api, form([("file", text.encode(), None)]), content_type=FORM)
    assert api.get("/products/saft").data["name"] == "Säft 🍺"
    latin = "Item ID;Item name\nsaft;S\xe4ft\n".encode("latin-1")
    response = upload(api, form([("file", latin, "text/csv")]), content_type=FORM)
    assert response.status_code == 400 and "cannot be decoded as utf-8" in response.data["detail"]


@pytest.mark.parametrize(
    "content_type, body, status, path, message",
    [
        (FORM, form([("other", FILE.encode(), "text/csv")]), 400, "file", "no part named file"),
        (
            FORM,
            form([("file", b"Item ID\na\n", None), ("file", b"Item ID\nb\n", None)]),
            400,
            "body",
            "more than one part",
        ),
        ("multipart/form-data", form([("file", FILE.encode(), None)]), 400, "Content-Type", "boundary"),
        (FORM, b"not a form at all", 400, "body", "cannot be read"),
        (FORM, form([("file", FILE.encode(), None)])[:-10], 400, "body", "cannot be read"),
        (FORM, b"", 400, "body", "cannot be read"),
        (FORM, form([("file", b"Item ID\na\n", "text/csv; charset=utf-16")]), 415, None, "charset utf-16"),
        ("application/x-www-form-urlencoded", b"file=x", 415, None, "multipart/form-data"),
    ],
)
def test_a_form_that_cannot_be_read_is_refused_naming_the_problem(api, content_type, body, status, path, message):
    response = upload(api, body, content_type=content_type)
    assert response.status_code == status, response.data
    assert message in response.data["detail"] + str(response.data.get("errors")), response.data
    if path:
        assert [e["path"] for e in response.data["errors"]] == [path]


def test_the_5_mib_limit_is_the_files_in_a_form_too(api):
    header = b"Item ID;Description\n"
    file = header + b"p;" + b"x" * (5 * 1024 * 1024 - len(header) - 2)
    assert len(file) == 5 * 1024 * 1024
    assert upload(api, form([("file", file, "text/csv")]), content_type=FORM).status_code == 202
    too_big = upload(api, form([("file", file + b"x", "text/csv")]), content_type=FORM)
    assert_problem(too_big, 413, "payload-too-large")
    assert "5242880" in too_big.data["detail"]


@pytest.mark.parametrize(
    "body",
    [
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\nX-Note: \xff\r\n\r\n'
            f"Item ID\na\r\n--{BOUNDARY}--\r\n"
        ).encode("latin-1"),
        f"--{BOUNDARY}\r\n\r\nItem ID\na\r\n--{BOUNDARY}--\r\n".encode(),
        form([(f"p{n}", b"x", None) for n in range(17)]),
        form([("file", b"Item ID\na\n", "x-" * 3_000)]),
    ],
    ids=["undecodable header", "no disposition", "17 parts", "4 KiB header"],
)
def test_hostile_forms_are_a_400_naming_the_body(api, body):
    response = upload(api, body, content_type=FORM)
    assert response.status_code == 400, response.data
    assert response.data["errors"][0]["path"] == "body" and "cannot be read" in response.data["errors"][0]["message"]
