"""Concurrent writes of one product on DynamoDB Local (decisions §8, §11): without If-Match contention is
retried like every other write (a 409 only after 5 s of it); 412 is only for a stale If-Match."""

import threading

import pytest

from chalicelib.domain.errors import PreconditionFailed
from chalicelib.service import catalogue

ACCOUNT = "acme"
WRITERS, WRITES = 10, 5  # fifty racing writes: enough to meet every interleaving the retries handle

pytestmark = pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)


def product(writer: int, write: int) -> dict:
    return {"status": "ACTIVE", "category": "drinks", "name": f"Ale {writer}-{write}", "price": 100 + write}


@pytest.fixture
def beer(engine):
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"})
    return catalogue.put_product(ACCOUNT, "beer", product(0, 0), None)


def all_at_once(write) -> list:
    """Each writer calls `write(writer, n)` WRITES times, all writers starting together; the errors raised."""
    errors, start = [], threading.Barrier(WRITERS)

    def writer(number):
        start.wait()
        for n in range(WRITES):
            try:
                write(number, n)
            except Exception as error:  # noqa: BLE001 - the test counts them
                errors.append(error)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    return errors


def test_ten_writers_putting_one_product_without_if_match_all_succeed(beer):
    errors = all_at_once(lambda writer, n: catalogue.put_product(ACCOUNT, "beer", product(writer, n), None))
    assert errors == []
    assert catalogue.get_product(ACCOUNT, "beer").data["name"].startswith("Ale ")


def test_ten_writers_patching_one_product_without_if_match_lose_no_patch(beer):
    errors = all_at_once(
        lambda writer, n: catalogue.patch_product(ACCOUNT, "beer", {"name": f"Ale {writer}-{n}"}, None)
    )
    assert errors == []


def test_a_stale_if_match_is_412_at_once(beer):
    catalogue.put_product(ACCOUNT, "beer", product(1, 1), None)
    with pytest.raises(PreconditionFailed):
        catalogue.put_product(ACCOUNT, "beer", product(2, 2), beer.revision)
    with pytest.raises(PreconditionFailed):
        catalogue.patch_product(ACCOUNT, "beer", {"name": "Late"}, beer.revision)
    with pytest.raises(PreconditionFailed):
        catalogue.delete_product(ACCOUNT, "beer", beer.revision)
    assert catalogue.get_product(ACCOUNT, "beer").data["name"] == "Ale 1-1"
