import json
from decimal import Decimal

import pytest
from botocore.exceptions import ClientError

from chalicelib.service import catalogue
from chalicelib.store import outcomes, products, table

from .conftest import ACCOUNT, NOW, sample_product, save_product


def mark_used(product_id: str) -> None:
    from chalicelib.store import delivery_writes

    table.client().transact_write_items(TransactItems=[delivery_writes.marking_used(ACCOUNT, product_id).item])


def test_a_saved_product_reads_back_with_its_numbers_exactly_as_written(drinks):
    document = sample_product(vessel={"size": Decimal("1.5"), "unit": "l"}, price=2, min_order_count=Decimal("0.25"))
    revision = save_product(ACCOUNT, document, create_only=True, now=NOW)

    stored = products.get(ACCOUNT, "cola")
    assert stored.revision == revision
    assert stored.used is False
    # As JSON text: 1.5 stays 1.5 and whole numbers stay whole (2, never 2.0).
    assert json.dumps(table.plain(stored.data), sort_keys=True) == (
        '{"bundles": [{"size": 6, "type": "CA"}], "category": "drinks", "id": "cola", "min_order_count": 0.25, '
        '"name": "Cola", "price": 2, "status": "ACTIVE", "vessel": {"size": 1.5, "unit": "l"}}'
    )


def test_a_product_of_one_account_is_absent_for_another(drinks):
    save_product(ACCOUNT, sample_product(), create_only=True, now=NOW)

    assert products.get("other", "cola") is None
    assert products.get(ACCOUNT, "fanta") is None


def test_create_only_refuses_an_existing_id_and_keeps_the_stored_product(drinks):
    first = save_product(ACCOUNT, sample_product(), create_only=True, now=NOW)

    assert save_product(ACCOUNT, sample_product(name="Other cola"), create_only=True, now=NOW) == outcomes.Taken()

    stored = products.get(ACCOUNT, "cola")
    assert (stored.data["name"], stored.revision) == ("Cola", first)


def test_replace_with_the_current_revision_succeeds_and_with_a_stale_one_fails(drinks):
    first = save_product(ACCOUNT, sample_product(), create_only=True, now=NOW)
    second = save_product(ACCOUNT, sample_product(name="Cola Zero"), expected_revision=first, now=NOW)
    assert second != first

    assert (
        save_product(ACCOUNT, sample_product(name="Lost update"), expected_revision=first, now=NOW) == outcomes.Stale()
    )

    stored = products.get(ACCOUNT, "cola", consistent=True)
    assert (stored.data["name"], stored.revision) == ("Cola Zero", second)


def test_replace_without_a_revision_overwrites(drinks):
    save_product(ACCOUNT, sample_product(), create_only=True, now=NOW)
    save_product(ACCOUNT, sample_product(name="Cola Light"), now=NOW)

    assert products.get(ACCOUNT, "cola").data["name"] == "Cola Light"


@pytest.mark.parametrize("create_only", [True, False])
def test_a_missing_category_is_refused_and_writes_nothing(engine, create_only):
    assert (
        save_product(ACCOUNT, sample_product(category="nope"), create_only=create_only, now=NOW)
        == outcomes.NoCategory()
    )

    assert products.get(ACCOUNT, "cola") is None


def test_the_used_flag_survives_a_save_and_blocks_delete(drinks):
    revision = save_product(ACCOUNT, sample_product(), create_only=True, now=NOW)
    mark_used("cola")
    save_product(ACCOUNT, sample_product(name="Cola Light"), expected_revision=revision, now=NOW)

    stored = products.get(ACCOUNT, "cola")
    assert (stored.used, stored.data["name"]) == (True, "Cola Light")
    assert catalogue.remove_product(ACCOUNT, "cola") == outcomes.InUse()
    assert products.get(ACCOUNT, "cola") is not None


def test_marking_an_absent_product_used_cancels_the_transaction(engine):
    with pytest.raises(ClientError) as failure:
        mark_used("ghost")

    assert table.cancellation_codes(failure.value) == ["ConditionalCheckFailed"]


def test_delete_removes_the_product_and_then_reports_it_absent(drinks):
    save_product(ACCOUNT, sample_product(), create_only=True, now=NOW)

    assert catalogue.remove_product(ACCOUNT, "cola") is None

    assert products.get(ACCOUNT, "cola", consistent=True) is None
    assert catalogue.remove_product(ACCOUNT, "cola") == outcomes.Gone()


def test_delete_of_a_product_that_never_existed_is_not_found(engine):
    assert catalogue.remove_product(ACCOUNT, "never") == outcomes.Gone()


def test_delete_with_a_stale_revision_fails_and_with_the_current_one_succeeds(drinks):
    first = save_product(ACCOUNT, sample_product(), create_only=True, now=NOW)
    second = save_product(ACCOUNT, sample_product(name="Cola Zero"), expected_revision=first, now=NOW)

    assert catalogue.remove_product(ACCOUNT, "cola", expected_revision=first) == outcomes.Stale()
    assert catalogue.remove_product(ACCOUNT, "cola", expected_revision=second) is None

    assert products.get(ACCOUNT, "cola", consistent=True) is None


def test_a_category_is_in_use_once_a_product_names_it(drinks):
    assert products.any_in_category(ACCOUNT, drinks) is False

    save_product(ACCOUNT, sample_product(), create_only=True, now=NOW)

    assert products.any_in_category(ACCOUNT, drinks) is True
    assert products.any_in_category("other", drinks) is False
