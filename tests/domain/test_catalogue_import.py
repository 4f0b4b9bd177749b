"""Reading CSV files as people write them, and mapping a row to a product body (decisions §12)."""

from decimal import Decimal

import pytest

from chalicelib.domain import catalogue_import as ci
from chalicelib.domain import import_file
from chalicelib.domain.errors import FieldError, ValidationFailed
from chalicelib.domain.product import validate_product


def records(text: str | bytes, charset=None):
    body = text.encode() if isinstance(text, str) else text
    return import_file.parse(body, charset).records


def file_error(text: str | bytes, charset=None) -> str:
    with pytest.raises(ValidationFailed) as failed:
        records(text, charset)
    return failed.value.detail


def mapped(**cells):
    return ci.map_record(import_file.Record(2, {k: v for k, v in cells.items()}))


BASE = {ci.ITEM_ID: "cola", ci.ITEM_NAME: "Cola 1 l"}


def body(**cells):
    row = mapped(**{**BASE, **cells})
    assert row.errors == [], row.errors
    return row.body


# --- encodings -------------------------------------------------------------------------------------------------


def test_utf8_with_and_without_bom():
    text = "Item ID,Item name\nsaft,Säft\n"
    assert records(text)[0].cells[ci.ITEM_NAME] == "Säft"
    assert records(b"\xef\xbb\xbf" + text.encode())[0].cells == {ci.ITEM_ID: "saft", ci.ITEM_NAME: "Säft"}


def test_latin1_is_read_when_the_charset_says_so_and_refused_as_utf8():
    data = "Item ID;Item name\nsaft;Säft\n".encode("latin-1")
    assert records(data, "latin1")[0].cells[ci.ITEM_NAME] == "Säft"
    assert records(data, "ISO-8859-1")[0].cells[ci.ITEM_NAME] == "Säft"
    assert "cannot be decoded as utf-8" in file_error(data)
    assert "line 2" in file_error(data, "utf-8")


def test_an_unknown_charset_is_refused_and_a_known_one_read():
    with pytest.raises(import_file.UnknownCharset):
        records("Item ID\na\n", "utf-16")
    assert records("Item ID\na\n", '"UTF-8"')[0].cells == {ci.ITEM_ID: "a"}


# --- delimiters, quoting, header, blank lines --------------------------------------------------------------------


def test_semicolon_delimiter_is_taken_from_the_header_line():
    parsed = import_file.parse("Item ID;Item name;Price\ncola;Cola, light;1,20\n".encode())
    assert parsed.delimiter == ";"
    assert parsed.records[0].cells == {ci.ITEM_ID: "cola", ci.ITEM_NAME: "Cola, light", ci.PRICE: "1,20"}


def test_comma_delimiter_when_the_header_has_more_commas():
    parsed = import_file.parse(b'Item ID,Item name,Description\ncola,Cola,"a; b"\n')
    assert parsed.delimiter == ","
    assert parsed.records[0].cells[import_file.DESCRIPTIVE_COLUMNS[0]] == "a; b"


def test_quoted_cells_hold_delimiters_quotes_and_newlines_and_rows_name_their_first_line():
    text = 'Item ID,Item name,Description\ncola,"Cola ""Zero""","line one\nline two"\nfanta,Fanta,x\n'
    first, second = records(text)
    assert first.cells[ci.ITEM_NAME] == 'Cola "Zero"'
    assert first.cells["Description"] == "line one\nline two"
    assert (first.line, second.line) == (2, 4)


def test_header_names_ignore_case_and_surrounding_spaces_and_come_in_any_order():
    row = records("  item id ;PRICE; Item Name \ncola;2;Cola\n")[0]
    assert row.cells == {ci.ITEM_ID: "cola", ci.PRICE: "2", ci.ITEM_NAME: "Cola"}


def test_unknown_columns_are_ignored():
    assert records("Item ID,Internal cost,Item name\ncola,0.3,Cola\n")[0].cells == {
        ci.ITEM_ID: "cola",
        ci.ITEM_NAME: "Cola",
    }


def test_a_file_without_item_id_column_is_refused():
    assert "no Item ID column" in file_error("Item name,Price\nCola,2\n")
    assert "no Item ID column" in file_error("id;name\ncola;Cola\n")


def test_a_known_column_twice_is_refused():
    assert "Price appears twice" in file_error("Item ID,Price,price\ncola,1,2\n")


def test_not_csv_empty_nul_or_unclosed_quote():
    assert "empty" in file_error("  \n\n")
    assert "NUL" in file_error(b"Item ID\n\x00\x01\x02")
    assert "no Item ID column" in file_error('{"id": "cola", "name": "Cola"}')
    assert "line 2" in file_error('Item ID,Item name\ncola,"Cola\n')


def test_blank_lines_and_lines_of_delimiters_are_skipped_and_lines_still_counted():
    rows = records("\nItem ID;Item name\n\ncola;Cola\n;;\n   \nfanta;Fanta\n")
    assert [(r.line, r.cells[ci.ITEM_ID]) for r in rows] == [(4, "cola"), (7, "fanta")]


def test_empty_cells_are_absent():
    assert records("Item ID,Item name,Price\ncola,,\n")[0].cells == {ci.ITEM_ID: "cola"}


def test_crlf_line_ends():
    assert [r.line for r in records("Item ID,Item name\r\na,A\r\nb,B\r\n")] == [2, 3]


def test_more_cells_than_header_is_a_row_problem_but_trailing_empty_cells_are_not():
    bad, good = records("Item ID,Price\ncola,1,20\nfanta,1,,\n")
    assert bad.problem == "the row has 3 cells but the header has 2; quote cells that hold the delimiter"
    assert good.problem is None and good.cells == {ci.ITEM_ID: "fanta", ci.PRICE: "1"}


def test_an_item_id_seen_before_is_a_row_problem_naming_the_first_line():
    first, again = records("Item ID,Item name\ncola,Cola\ncola,Cola again\n")
    assert first.problem is None
    assert again.problem == "Item ID cola already appears on line 2; list each product once"


def test_row_limit():
    header = "Item ID\n"
    assert len(records(header + "a\n" * import_file.MAX_ROWS)) == import_file.MAX_ROWS
    assert f"more than {import_file.MAX_ROWS} rows" in file_error(header + "a\n" * (import_file.MAX_ROWS + 1))


def test_a_row_whose_known_columns_hold_more_than_the_limit_is_a_row_problem():
    limit = import_file.MAX_ROW_CHARS
    long, short, at_limit = records(f"Item ID,Description\na,{'x' * limit}\nb,{'x' * 100}\nc,{'x' * (limit - 1)}\n")
    assert long.problem == f"the row's known columns hold more than {limit} characters"
    assert short.problem is None and at_limit.problem is None


def test_a_long_cell_in_a_column_the_import_ignores_leaves_the_row_valid():
    """decisions §12: other columns are ignored, and no cell however long keeps a valid row out."""
    (noted,) = records(f"Item ID;Item name;Notes\nig1;Ignored long;{'z' * 40_000}\n")
    assert noted.problem is None and noted.cells == {"Item ID": "ig1", "Item name": "Ignored long"}


# --- numbers and prices ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value", [("12.90", "12.90"), ("12,90", "12.90"), ("2", "2"), (".5", "0.5"), ("-1", "-1"), ("0,330", "0.330")]
)
def test_decimal_points_and_commas(text, value):
    assert ci.decimal(text) == Decimal(value)


@pytest.mark.parametrize("text", ["1.234,56", "1,234.56", "12 90", "€12", "1e3", "abc", ""])
def test_not_decimals(text):
    assert ci.decimal(text) is None


@pytest.mark.parametrize("text, cents", [("2,505", 251), ("2.504", 250), ("12,90", 1290), ("0", 0), ("3", 300)])
def test_price_is_cents_rounded_half_up(text, cents):
    assert body(Price=text)["price"] == cents


@pytest.mark.parametrize("digits", [27, 28, 30, 400])
def test_a_price_of_any_length_is_mapped_and_its_bound_named_in_the_price_column(digits):
    """A CI run found a 28-digit price raising out of the mapping (the row's import answered 500)."""
    row = mapped(**BASE, Price="9" * digits + ",5")
    assert row.body["price"] == int("9" * digits) * 100 + 50
    with pytest.raises(ValidationFailed) as failed:
        validate_product({**row.body, "category": "drinks"})
    assert [e.column for e in import_file.row_errors(2, failed.value)] == ["Price"]


def test_a_price_that_is_no_number_names_the_column():
    row = mapped(**BASE, Price="12 EUR")
    assert row.body is None
    assert [(e.column, e.message) for e in row.errors] == [("Price", "must be a decimal number such as 12.90 or 12,90")]


# --- mapping -----------------------------------------------------------------------------------------------------


def test_status_defaults_to_active_and_is_read_in_any_case():
    assert body()["status"] == "ACTIVE"
    assert body(Status="out_of_stock")["status"] == "OUT_OF_STOCK"


def test_an_empty_order_by_leaves_it_unset():
    assert "order_by" not in body()
    assert body(**{"Order by": "KG"})["order_by"] == "kg"


def test_vessel_from_its_three_columns():
    assert body(**{"Vessel size": "0,33", "Vessel unit": "L", "Vessel type": "bo"})["vessel"] == {
        "size": Decimal("0.33"),
        "unit": "l",
        "type": "BO",
    }
    assert "vessel" not in body()


def test_bundle_from_size_and_type_and_each_needs_the_other():
    assert body(**{"Bundle size": "24", "Bundle type": "ct"})["bundles"] == [{"type": "CT", "size": 24}]
    only_size = mapped(**BASE, **{"Bundle size": "24"})
    assert [(e.column, e.message) for e in only_size.errors] == [
        ("Bundle type", "is required when Bundle size is given")
    ]
    only_type = mapped(**BASE, **{"Bundle type": "CT"})
    assert [e.column for e in only_type.errors] == ["Bundle size"]


def test_descriptive_columns_go_to_custom_properties_in_snake_case_and_lists_split_on_commas():
    properties = body(
        **{
            "Storage advice": "cool",
            "Wine-making": "barrel",
            "Labels": "vegan, organic ,",
            "Allergens": "nuts",
            "Dietary labels": "halal,kosher",
            "Bundle GTIN": "0123",
            "Description": "Fine",
        }
    )["custom_properties"]
    assert properties == {
        "labels": ["vegan", "organic"],
        "allergens": ["nuts"],
        "dietary_labels": ["halal", "kosher"],
        "storage_advice": "cool",
        "wine_making": "barrel",
        "description": "Fine",
        "bundle_gtin": "0123",
    }
    assert "custom_properties" not in body()


def test_gtin_image_price_per_and_minimum():
    mapped_body = body(
        GTIN="4006381333931", Image="https://x.example/a.png", **{"Price per": "L", "Minimum order count": "6"}
    )
    assert mapped_body["gtin"] == "4006381333931"
    assert mapped_body["image"] == {"url": "https://x.example/a.png"}
    assert mapped_body["price_per"] == "l"
    assert mapped_body["min_order_count"] == 6


def test_the_product_rules_speak_in_the_files_columns():
    row = mapped(
        **BASE, **{"Vessel size": "0", "Vessel unit": "l", "Bundle size": "1,5", "Bundle type": "CT"}, Status="SOLD"
    )
    with pytest.raises(ValidationFailed) as failed:
        validate_product({**row.body, "category": "drinks"})
    columns = {e.column for e in import_file.row_errors(2, failed.value)}
    assert columns == {"Vessel size", "Bundle size", "Status"}
    valid = {**body(**{"Vessel size": "1", "Vessel unit": "l"}), "category": "drinks"}
    assert validate_product(valid)["vessel"] == {"size": 1, "unit": "l"}


def test_kept_fields_that_clash_with_the_row_are_reported_without_a_column():
    failed = ValidationFailed([FieldError("pricing.price_points[0].from", "must be whole")])
    assert import_file.row_errors(5, failed)[0].as_dict() == {
        "row": 5,
        "column": None,
        "message": "pricing.price_points[0].from (kept from the stored product) must be whole",
    }
    assert import_file.column_of("custom_properties.storage_advice") == "Storage advice"
    assert import_file.column_of("bundles[0].pallet_bundle") == "Bundle type"


# --- categories --------------------------------------------------------------------------------------------------


def _settled(plan, category_id, name, line=2):
    cells = {k: v for k, v in {"Item ID": "p", "Category ID": category_id, "Category name": name}.items() if v}
    return plan.settle(import_file.Record(line, cells))


def test_category_by_id_else_by_exact_trimmed_name_smallest_id_first_else_created():
    plan = ci.CategoryPlan.of({"b-beer": "Beer", "a-beer": " Beer ", "wine": "Wine"})
    assert _settled(plan, "wine", "Beer").target == ci.CategoryTarget("wine", "wine", "Beer")
    assert _settled(plan, "nope", "Beer").target.existing == "a-beer"
    assert _settled(plan, None, "  Beer").target.existing == "a-beer"
    new = _settled(plan, None, "beer")  # case-sensitive: a new category
    assert (new.target.existing, new.target.create_name, new.first_use) == (None, "beer", True)
    assert new.target.create_id.startswith("beer-")  # "beer" is what `Beer` would be made again as
    assert _settled(plan, None, "beer", line=3).first_use is False  # counted once, at the first row needing it
    missing = _settled(plan, "nope", None)
    assert missing.category_error == import_file.RowError(2, "Category ID", "does not name an existing category")
    assert missing.mapped().body is None and missing.mapped().errors == [missing.category_error]


def test_a_category_found_is_recreated_with_the_id_and_name_decisions_12_give_it():
    plan = ci.CategoryPlan.of({"beer": "Beer", "x-2": "Wine", "wine": "Lager"})
    # By id: keeps its id, named by the row's name, else by the id.
    assert _settled(plan, "beer", None).target == ci.CategoryTarget("beer", "beer", "beer")
    assert _settled(plan, "beer", " Ales ").target == ci.CategoryTarget("beer", "beer", "Ales")
    # By name: the name-derived id (its own id when that is the one; never another category's).
    assert _settled(plan, None, "Beer").target == ci.CategoryTarget("beer", "beer", "Beer")
    wine = _settled(plan, None, "Wine").target
    assert wine.existing == "x-2" and wine.create_id.startswith("wine-") and wine.create_name == "Wine"


def test_derived_category_ids_are_valid_and_unique():
    assert ci.derived_category_id("Säfte & Limonaden", set()) == "safte-limonaden"
    assert ci.derived_category_id("日本酒", set()) == "category"
    other = ci.derived_category_id("Soft Drinks", {"soft-drinks"})
    assert other.startswith("soft-drinks-") and other != "soft-drinks"


class _NotToWalk(dict):
    """The targets already planned: looking one up is fine, walking them all (per row: quadratic) is not."""

    def values(self):
        raise AssertionError("a new name walked every target planned before it")

    items = keys = __iter__ = values


def test_a_new_category_name_is_planned_without_walking_the_names_before_it(monkeypatch):
    """Planning is linear in the rows (issue 24.7): each new name costs one id derivation against a set kept up
    to date, never a walk of every name planned before it."""
    plan = ci.CategoryPlan.of({"beer": "Beer"})
    _settled(plan, None, "Wine")
    plan.targets = _NotToWalk(plan.targets)
    derived = []
    real = ci.derived_category_id
    monkeypatch.setattr(ci, "derived_category_id", lambda *a, **kw: derived.append(a[0]) or real(*a, **kw))
    for n in range(200):
        _settled(plan, None, f"Name {n}", line=n + 3)
        _settled(plan, None, f"Name {n}", line=n + 3)  # a name seen before is looked up
    assert derived == [f"Name {n}" for n in range(200)]
    again = _settled(plan, None, "Wine")
    assert again.target.create_id == "wine" and again.first_use is False
    assert len({t.create_id for t in dict.values(plan.targets)}) == 201  # every derived id is unique


def test_a_name_no_category_may_have_is_refused():
    plan = ci.CategoryPlan.of({})
    refused = _settled(plan, None, "x" * 65)
    assert refused.category_error == import_file.RowError(
        2, "Category name", "must be 1 to 64 characters without newlines or tabs"
    )
    assert _settled(plan, None, "x" * 64).target is not None


# --- bounds of error messages (decisions §12) ---------------------------------------------------------------------


def test_a_message_quotes_at_most_100_characters_of_a_cell():
    assert import_file.quoted("x" * 100) == "x" * 100
    assert import_file.quoted("x" * 101) == "x" * 100 + "… (101 characters)"
    long_id = "\x01" * 32_000
    parsed = import_file.parse(f"Item ID;Item name\n{long_id};a\n{long_id};b\n".encode())
    problem = parsed.records[1].problem
    assert problem.count("\x01") == 100 and "32,000 characters" in problem and "line 2" in problem


def test_an_error_entry_renders_within_its_byte_budget_whatever_its_message():
    from chalicelib.domain.limits import IMPORT_ERROR_BYTES
    from chalicelib.domain.rendering import size_in_bytes

    fits = import_file.RowError(2, "Item ID", "m" * 500)
    assert fits.message == "m" * 500  # within the budget: kept as it is
    for char in ("\x01", "😀", "é", "x"):
        error = import_file.RowError(20_000, "Nutritional values", char * 5_000)
        assert size_in_bytes(error.as_dict()) <= IMPORT_ERROR_BYTES
        assert error.message.startswith(char * 50) and error.message.endswith("…")


def test_a_rule_message_that_repeats_a_long_cell_quotes_only_its_start():
    from chalicelib.domain.errors import FieldError, ValidationFailed

    cell = "y" * 5_000
    failed = ValidationFailed([FieldError("name", f"{cell} is not allowed")])
    [error] = import_file.row_errors(7, failed, {"name": cell})
    assert error.message == import_file.quoted(cell) + " is not allowed" and error.column == "Item name"
