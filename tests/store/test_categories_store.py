from chalicelib.store import categories, outcomes

from .conftest import ACCOUNT, NOW


def test_put_returns_the_category_and_get_reads_it_back(engine):
    assert categories.put(ACCOUNT, "drinks", "Drinks", NOW) == {"id": "drinks", "name": "Drinks"}

    assert categories.get(ACCOUNT, "drinks") == {"id": "drinks", "name": "Drinks"}


def test_put_replaces_the_name(engine):
    categories.put(ACCOUNT, "drinks", "Drinks", NOW)
    categories.put(ACCOUNT, "drinks", "Beverages", NOW)

    assert categories.get(ACCOUNT, "drinks") == {"id": "drinks", "name": "Beverages"}


def test_a_category_of_one_account_is_absent_for_another(engine):
    categories.put(ACCOUNT, "drinks", "Drinks", NOW)

    assert categories.get("other", "drinks") is None
    assert categories.get(ACCOUNT, "food") is None


def test_the_list_is_by_id_ascending_and_holds_only_the_accounts_categories(engine):
    for category_id in ("wine", "beer", "juice"):
        categories.put(ACCOUNT, category_id, category_id.title(), NOW)
    categories.put("other", "apples", "Apples", NOW)

    page = categories.list_page(ACCOUNT, 50, None)

    assert page.items == [
        {"id": "beer", "name": "Beer"},
        {"id": "juice", "name": "Juice"},
        {"id": "wine", "name": "Wine"},
    ]
    assert page.cursor is None


def test_delete_removes_the_category_and_then_reports_it_absent(engine):
    categories.put(ACCOUNT, "drinks", "Drinks", NOW)

    assert categories.delete(ACCOUNT, "drinks", NOW) is None

    assert categories.get(ACCOUNT, "drinks") is None
    assert categories.delete(ACCOUNT, "drinks", NOW) == outcomes.Gone()


def test_delete_does_not_reach_another_accounts_category(engine):
    categories.put("other", "drinks", "Drinks", NOW)

    assert categories.delete(ACCOUNT, "drinks", NOW) == outcomes.Gone()
    assert categories.get("other", "drinks") == {"id": "drinks", "name": "Drinks"}
