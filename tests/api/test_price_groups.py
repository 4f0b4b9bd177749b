"""Price groups of a product: GET and whole-map PUT (decisions §6)."""

import pytest

from tests.api.customer_support import customer_token, dynamodb_calls, make_customer, make_product, volume
from tests.conftest import OTHER_TOKEN, problem_paths
from tests.problems import assert_problem

PATH = "/products/beer/price-groups"


@pytest.fixture
def ready(api):
    make_product(api, "beer", price=250)
    return api


def test_a_product_without_groups_has_an_empty_map(ready):
    response = ready.get(PATH)
    assert response.status_code == 200
    assert response.data == {}


def test_put_returns_the_map_and_get_reads_it_back(ready):
    groups = {"gold": {"price": 200}, "key accounts": {"pricing": volume((1, 220), (10, 180))}, "silver": {}}
    response = ready.put(PATH, groups)
    assert response.status_code == 200
    assert response.data == groups
    assert ready.get(PATH).data == groups


def test_put_replaces_the_whole_map(ready):
    ready.put(PATH, {"gold": {"price": 200}, "silver": {"price": 230}})
    assert ready.put(PATH, {"bronze": {"price": 240}}).data == {"bronze": {"price": 240}}
    assert ready.get(PATH).data == {"bronze": {"price": 240}}
    assert ready.put(PATH, {}).data == {}
    assert ready.get(PATH).data == {}


def test_a_group_level_is_replaced_whole_too(ready):
    ready.put(PATH, {"gold": {"price": 200, "pricing": volume((1, 190))}})
    ready.put(PATH, {"gold": {"price": 180}})
    assert ready.get(PATH).data == {"gold": {"price": 180}}


@pytest.mark.parametrize("path", ["/products/nothing/price-groups", "/products/bad.id/price-groups"])
def test_an_unknown_product_is_404(ready, path):
    assert ready.get(path).status_code == 404
    response = ready.put(path, {"gold": {"price": 1}})
    assert_problem(response, 404, "not-found")


@pytest.mark.parametrize("name", ["g", "Gold_2", "key accounts", "A-B", "x" * 64])
def test_group_names_that_are_accepted(ready, name):
    response = ready.put(PATH, {name: {"price": 1}})
    assert response.status_code == 200
    assert response.data == {name: {"price": 1}}


@pytest.mark.parametrize("name", ["", " gold", "gold ", "gold!", "gold.vip", "x" * 65, "kulta\u00e4"])
def test_group_names_that_are_refused(ready, name):
    response = ready.put(PATH, {name: {"price": 1}, "ok": {"price": 2}})
    assert response.status_code == 400
    assert problem_paths(response) == [name or "body"]  # an empty name has no path of its own
    assert ready.get(PATH).data == {}


@pytest.mark.parametrize(
    "groups, paths",
    [
        ({"gold": {"price": -1}}, ["gold.price"]),
        ({"gold": {"price": 2.5}}, ["gold.price"]),
        ({"gold": {"discount": 1}}, ["gold.discount"]),
        ({"gold": 100}, ["gold"]),
        ({"gold": {"pricing": volume((1, 1), (1, 2))}}, ["gold.pricing.price_points[1].from"]),
        (
            {"gold": {"pricing": volume((1, 1))}, "silver": {"pricing": volume((0.5, 2))}},
            ["silver.pricing.price_points[0].from"],
        ),
        (
            {"gold": {"price": -1}, "silver": {"pricing": volume((1, 1), (1, 2))}},
            ["gold.price", "silver.pricing.price_points[1].from"],
        ),
    ],
)
def test_each_group_is_validated_like_customer_pricing(ready, groups, paths):
    response = ready.put(PATH, groups)
    assert response.status_code == 400
    assert sorted(problem_paths(response)) == sorted(paths)
    assert ready.get(PATH).data == {}


def test_kg_products_allow_only_volume_in_groups(ready):
    make_product(ready, "cheese", order_by="kg")
    incremental = {"strategy": "INCREMENTAL", "price_points": [{"from": 1, "price": 100}]}
    response = ready.put("/products/cheese/price-groups", {"gold": {"pricing": incremental}})
    assert response.status_code == 400
    assert problem_paths(response) == ["gold.pricing.strategy"]
    assert ready.put("/products/cheese/price-groups", {"gold": {"pricing": volume((0.5, 100))}}).status_code == 200


def test_at_most_100_groups(ready):
    assert ready.put(PATH, {f"g{i}": {"price": i} for i in range(100)}).status_code == 200
    response = ready.put(PATH, {f"g{i}": {"price": i} for i in range(101)})
    assert response.status_code == 400
    assert problem_paths(response) == ["body"]


@pytest.mark.parametrize("raw", ["[]", '"gold"', "{"])
def test_put_refuses_bodies_that_are_not_objects(ready, raw):
    response = ready.put(PATH, raw=raw)
    assert response.status_code == 400
    assert problem_paths(response) == ["body"]


def test_groups_of_another_account_read_as_404(ready):
    ready.put(PATH, {"gold": {"price": 1}})
    assert ready.get(PATH, token=OTHER_TOKEN).status_code == 404
    assert ready.put(PATH, {}, token=OTHER_TOKEN).status_code == 404
    assert ready.get(PATH).data == {"gold": {"price": 1}}


def test_get_is_one_dynamodb_request(ready):
    with dynamodb_calls() as calls:
        ready.get(PATH)
    assert calls == ["BatchGetItem"]


def test_customer_tokens_are_forbidden(ready):
    make_customer(ready, "bar-1")
    token = customer_token(ready, "bar-1")
    assert ready.get(PATH, token=token).status_code == 403
    assert ready.put(PATH, {}, token=token).status_code == 403
