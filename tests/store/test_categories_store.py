"""Categories: the repository's reads and the operations a service writes in its unit of work (the use cases'
rules, one name again writes nothing, are in service/catalogue.py and tests/api/test_categories.py)."""

import pytest

from chalicelib.domain.feed import Change, ChangeType
from chalicelib.service import catalogue
from chalicelib.store import categories, outcomes

from .conftest import ACCOUNT, committed


def test_put_returns_the_category_and_get_reads_it_back(engine):
    assert catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"}) == {"id": "drinks", "name": "Drinks"}

    assert categories.get(ACCOUNT, "drinks") == {"id": "drinks", "name": "Drinks"}


def test_put_replaces_the_name(engine):
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"})
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Beverages"})

    assert categories.get(ACCOUNT, "drinks") == {"id": "drinks", "name": "Beverages"}


def test_creating_what_exists_is_taken_and_renaming_what_went_is_stale(engine):
    assert committed(ACCOUNT, categories.creating(ACCOUNT, "drinks", "Drinks")) is None
    assert committed(ACCOUNT, categories.creating(ACCOUNT, "drinks", "Again")) == outcomes.Taken()
    assert committed(ACCOUNT, categories.renaming(ACCOUNT, "food", "Food")) == outcomes.Stale()
    assert categories.read_for_write(ACCOUNT, "drinks") == {"id": "drinks", "name": "Drinks"}
    assert categories.read_for_write(ACCOUNT, "food") is None


def test_a_category_of_one_account_is_absent_for_another(engine):
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"})

    assert categories.get("other", "drinks") is None
    assert categories.get(ACCOUNT, "food") is None


def test_the_list_is_by_id_ascending_and_holds_only_the_accounts_categories(engine):
    for category_id in ("wine", "beer", "juice"):
        catalogue.put_category(ACCOUNT, category_id, {"name": category_id.title()})
    catalogue.put_category("other", "apples", {"name": "Apples"})

    page = categories.list_page(ACCOUNT, 50, None)

    assert page.items == [
        {"id": "beer", "name": "Beer"},
        {"id": "juice", "name": "Juice"},
        {"id": "wine", "name": "Wine"},
    ]
    assert page.cursor is None


def _delete(account: str, category_id: str):
    return committed(
        account, categories.deleting(account, category_id), changes=[Change(ChangeType.CATEGORY_DELETED, category_id)]
    )


def test_delete_removes_the_category_and_then_reports_it_absent(engine):
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"})

    assert _delete(ACCOUNT, "drinks") is None

    assert categories.get(ACCOUNT, "drinks") is None
    assert _delete(ACCOUNT, "drinks") == outcomes.Gone()


def test_delete_does_not_reach_another_accounts_category(engine):
    catalogue.put_category("other", "drinks", {"name": "Drinks"})

    assert _delete(ACCOUNT, "drinks") == outcomes.Gone()
    assert categories.get("other", "drinks") == {"id": "drinks", "name": "Drinks"}


@pytest.mark.parametrize("counted", [True, False], ids=["counted", "made-before-the-count"])
def test_creates_racing_at_the_bound_never_pass_1000(engine, counted):
    """Eight creates at once with room for two (decisions §4): two succeed, six are refused naming id; an account
    without its count yet gets one that counts what is there."""
    import threading

    from chalicelib.domain.errors import ValidationFailed
    from chalicelib.domain.limits import CATEGORIES

    if engine == "moto":
        pytest.skip("moto's transactions are not thread-safe; DynamoDB Local's are")
    from tests.api.test_category_bound import seed

    seed(CATEGORIES - 2, counted, ACCOUNT)
    results, barrier = [], threading.Barrier(8)

    def create(n):
        barrier.wait()
        try:
            results.append(catalogue.put_category(ACCOUNT, f"race{n}", {"name": f"Race {n}"}))
        except ValidationFailed as refused:
            results.append([e.path for e in refused.errors])
        except Exception as error:  # noqa: BLE001 - Busy after lasting contention is an answer too
            results.append(type(error).__name__)

    threads = [threading.Thread(target=create, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    created = [r for r in results if isinstance(r, dict)]
    assert len(created) == 2
    assert [r for r in results if not isinstance(r, dict)] == [["id"]] * 6
    listed = categories.list_page(ACCOUNT, CATEGORIES + 5, None).items
    assert len(listed) == CATEGORIES
    assert categories.held(ACCOUNT) == CATEGORIES
