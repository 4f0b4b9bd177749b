import pytest

from chalicelib.service import catalogue
from chalicelib.store import categories, products
from chalicelib.store.cursor import BadCursor

from .conftest import ACCOUNT, NOW, sample_product, save_product


def add_products(account: str, ids) -> None:
    for product_id in ids:
        save_product(account, sample_product(product_id), create_only=True, now=NOW)


def all_pages(account: str, limit: int) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        page = products.list_page(account, limit, cursor)
        pages.append([stored.data["id"] for stored in page.items])
        if page.cursor is None:
            return pages
        cursor = page.cursor


def cursor_refusal(account: str, cursor: str) -> BadCursor.Reason:
    with pytest.raises(BadCursor) as failure:
        products.list_page(account, 3, cursor)
    return failure.value.reason


def test_seven_products_by_three_are_pages_of_three_three_and_one(drinks):
    add_products(ACCOUNT, ["p5", "p1", "p7", "p3", "p2", "p6", "p4"])

    assert all_pages(ACCOUNT, 3) == [["p1", "p2", "p3"], ["p4", "p5", "p6"], ["p7"]]


def test_exactly_one_full_page_has_no_cursor(drinks):
    add_products(ACCOUNT, ["p1", "p2", "p3"])

    page = products.list_page(ACCOUNT, 3, None)

    assert [stored.data["id"] for stored in page.items] == ["p1", "p2", "p3"]
    assert page.cursor is None


def test_an_empty_list_is_one_empty_page_without_cursor(engine):
    page = products.list_page(ACCOUNT, 3, None)

    assert (page.items, page.cursor) == ([], None)


def test_products_added_while_paging_are_never_returned_twice(drinks):
    add_products(ACCOUNT, ["p2", "p4", "p6", "p8"])
    first = products.list_page(ACCOUNT, 2, None)
    add_products(ACCOUNT, ["p1", "p3", "p9"])  # before and after the page already read

    seen = [stored.data["id"] for stored in first.items]
    cursor = first.cursor
    while cursor:
        page = products.list_page(ACCOUNT, 2, cursor)
        seen += [stored.data["id"] for stored in page.items]
        cursor = page.cursor

    assert seen == ["p2", "p4", "p6", "p8", "p9"]


def test_a_tampered_cursor_is_refused(drinks):
    add_products(ACCOUNT, ["p1", "p2", "p3", "p4"])
    cursor = products.list_page(ACCOUNT, 3, None).cursor
    body, signature = cursor.split(".")
    middle = len(body) // 2  # every bit of a middle character counts (the last may hold padding bits)
    flipped = body[:middle] + ("A" if body[middle] != "A" else "B") + body[middle + 1 :]

    assert cursor_refusal(ACCOUNT, f"{flipped}.{signature}") is BadCursor.Reason.FORGED
    assert cursor_refusal(ACCOUNT, body) is BadCursor.Reason.FORGED
    assert cursor_refusal(ACCOUNT, "not a cursor at all") is BadCursor.Reason.FORGED


def test_a_cursor_of_another_account_is_refused(drinks):
    add_products(ACCOUNT, ["p1", "p2", "p3", "p4"])
    catalogue.put_category("other", "drinks", {"name": "Drinks"})
    add_products("other", ["p1", "p2", "p3", "p4"])
    cursor = products.list_page(ACCOUNT, 3, None).cursor

    assert cursor_refusal("other", cursor) is BadCursor.Reason.FOREIGN


def test_a_cursor_of_another_list_is_refused(engine):
    for category_id in ("a", "b", "c", "d"):
        catalogue.put_category(ACCOUNT, category_id, {"name": category_id})
    cursor = categories.list_page(ACCOUNT, 3, None).cursor

    assert cursor_refusal(ACCOUNT, cursor) is BadCursor.Reason.FOREIGN
