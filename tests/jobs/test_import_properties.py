"""Property tests of the catalogue import (issue 16): generated CSV files (long, repeated, control and 4-byte
characters, duplicate ids, every column, cells up to the row limit) through parse and import on moto. The import
never fails as a whole, its report stays under 1 MiB, and every product it writes can be read, listed, PATCHed
and ordered."""

import csv
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.domain import catalogue_import as ci
from chalicelib.domain import import_file
from chalicelib.domain.limits import IMPORT_QUOTED_CHARS, IMPORT_REPORT_BYTES
from tests.api.deliveries_helpers import CUSTOMER_TOKEN, USER, shop  # noqa: F401 - the fixture
from tests.jobs.test_import_hardening import run

IDS = st.sampled_from(["cola", "fanta", "beer-1", "wine_2", "x" * 128, "bad id", "Ä", "w" * 129])
WILD = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=200)
HUGE = st.builds(
    lambda char, n: char * n, st.sampled_from(["\x01", "😀", "é", "x", '"']), st.sampled_from([101, 5_000, 16_000])
)
VALUES = {
    ci.ITEM_ID: st.one_of(IDS, WILD, HUGE),
    ci.ITEM_NAME: st.one_of(st.sampled_from(["Cola", "Beer 0.5 l", ""]), WILD, HUGE),
    ci.CATEGORY_NAME: st.one_of(st.sampled_from(["Drinks", "Beer", " Drinks ", "Säfte", "日本酒", ""]), WILD),
    ci.CATEGORY_ID: st.one_of(st.sampled_from(["drinks", "beer", "nope", ""]), WILD),
    ci.PRICE: st.one_of(st.sampled_from(["1,20", "2.505", "0", "-1", "1.000,00", "12"]), WILD),
    ci.STATUS: st.sampled_from(["ACTIVE", "active", "INACTIVE", "OUT_OF_STOCK", "", "gone"]),
    ci.ORDER_BY: st.sampled_from(["", "vessel", "bundle", "kg", "nope"]),
    ci.MIN_ORDER: st.sampled_from(["", "1", "0,5", "x"]),
    ci.VESSEL_SIZE: st.sampled_from(["", "0,33", "1", "abc"]),
    ci.VESSEL_UNIT: st.sampled_from(["", "l", "cl", "kg", "xx"]),
    ci.VESSEL_TYPE: st.sampled_from(["", "BO", "CA", "zz"]),
    ci.BUNDLE_SIZE: st.sampled_from(["", "24", "0", "x"]),
    ci.BUNDLE_TYPE: st.sampled_from(["", "CT", "PX", "zz"]),
    ci.GTIN: st.sampled_from(["", "4006381333931", "123"]),
}
pytestmark = pytest.mark.usefixtures("fake_clock")

OTHER_COLUMNS = [c for c in import_file.COLUMNS if c not in VALUES and c != ci.IMAGE]


@st.composite
def files(draw):
    extra = draw(st.lists(st.sampled_from(OTHER_COLUMNS), unique=True, max_size=6))
    columns = [ci.ITEM_ID, *draw(st.lists(st.sampled_from(list(VALUES)[1:]), unique=True)), *extra]
    cell = {c: VALUES.get(c, st.one_of(WILD, HUGE, st.sampled_from(["a, b", ""]))) for c in columns}
    rows = draw(st.lists(st.fixed_dictionaries({c: cell[c] for c in columns}), min_size=1, max_size=25))
    out = io.StringIO()
    writer = csv.writer(out, delimiter=draw(st.sampled_from([";", ","])), lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([row[c] for c in columns])
    return out.getvalue(), [v for row in rows for v in row.values()]


def _run_until_done():
    for _ in range(30):
        if not run()["due"]:
            return
    raise AssertionError("the import did not finish")


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(generated=files())
def test_any_file_imports_every_valid_row_within_bounds_and_its_products_work(shop, generated):  # noqa: F811
    api = shop
    text, cells = generated
    response = api.request("POST", "/imports/products", raw=text.encode(), headers={"Content-Type": "text/csv"})
    if response.status_code == 400:  # a file the reader refuses as a whole says why, naming the body
        assert response.data["errors"][0]["path"] == "body", response.data
        return
    assert response.status_code == 202, response.data
    _run_until_done()
    answer = api.get(f"/imports/products/{response.data['id']}")
    report = answer.data
    assert report["status"] == "DONE", report.get("reason")
    assert len(answer.body) < IMPORT_REPORT_BYTES
    assert report["processed"] == report["rows"]
    assert sum(report[k] for k in ("created", "updated", "unchanged", "invalid")) == report["rows"]
    assert len(report["errors"]) == min(report["error_count"], 1_000)
    long_cells = {c.strip() for c in cells if len(c.strip()) > IMPORT_QUOTED_CHARS}
    for error in report["errors"]:
        assert not any(cell in error["message"] for cell in long_cells), error["message"][:300]
    listed = api.get("/products?limit=100").data["products"]
    assert report["created"] <= len(listed)
    for product in listed[:4]:
        found = api.get(f"/products/{product['id']}")
        assert found.status_code == 200 and found.data == product
        assert api.get(f"/categories/{product['category']}").status_code == 200
        patched = api.patch(f"/products/{product['id']}", {"name": "Patched"})
        assert patched.status_code == 200, patched.data
        if product["status"] == "ACTIVE":
            count = max(product.get("min_order_count", 1), 1)
            ordered = api.post(
                "/customer/deliveries", body={"items": [{"id": product["id"], "count": count}], "user": USER},
                token=CUSTOMER_TOKEN,
            )  # fmt: skip
            assert ordered.status_code == 200, (product, ordered.data)
