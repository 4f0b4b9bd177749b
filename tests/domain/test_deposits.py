"""The deposit arithmetic of decisions §15 (domain/deposits.py)."""

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.domain.deposit_statement import counts, receive_moves
from chalicelib.domain.deposits import balances, delivery_deposits, deposit_packaging, item_charges, with_deposits

BEER = {
    "id": "beer",
    "vessel": {"size": 0.5, "unit": "l", "type": "BO", "deposit": "bottle"},
    "bundles": [
        {"type": "CR", "size": 20, "deposit": "crate"},
        {"type": "PX", "size": 40, "pallet_bundle": {"type": "CR", "size": 20}, "deposit": "pallet"},
    ],
}
PACKAGING = deposit_packaging(BEER)
CRATE = {"type": "CR", "size": 20}
PALLET = {"type": "PX", "size": 40, "pallet_bundle": {"type": "CR", "size": 20}}
TYPES = {
    "bottle": {"name": "Bottle", "price": 8},
    "crate": {"name": "Crate", "price": 150},
    "pallet": {"name": "Pallet", "price": 1500},
    "keg": {"name": "Keg", "price": 3000},
}


def test_packaging_of_a_product_without_deposits_is_none():
    assert (
        deposit_packaging({"id": "x", "vessel": {"size": 1, "unit": "l"}, "bundles": [{"type": "CR", "size": 6}]})
        is None
    )


def test_packaging_keeps_vessel_and_bundles_with_deposits():
    assert PACKAGING == {
        "vessel": "bottle",
        "bundles": [{"type": "CR", "size": 20, "deposit": "crate"}, {"type": "PX", "size": 40, "deposit": "pallet"}],
    }


def test_single_vessels_carry_the_vessel_deposit_only():
    assert item_charges(PACKAGING, 7, None, 7) == {"bottle": 7}


def test_a_crate_of_20_bottles():
    assert item_charges(PACKAGING, 1, CRATE, 20) == {"bottle": 20, "crate": 1}


def test_pallets_of_crates_of_bottles():
    assert item_charges(PACKAGING, 2, PALLET, 2 * 40 * 20) == {"bottle": 1600, "crate": 80, "pallet": 2}


def test_counts_of_one_type_add_up():
    packaging = {"vessel": "keg", "bundles": [{"type": "CR", "size": 2, "deposit": "keg"}]}
    assert item_charges(packaging, 3, {"type": "CR", "size": 2}, 6) == {"keg": 9}


def test_a_bundle_without_deposit_charges_nothing_for_itself():
    packaging = {"vessel": "bottle", "bundles": []}
    assert item_charges(packaging, 2, CRATE, 40) == {"bottle": 40}


def test_no_packaging_no_charges():
    assert item_charges(None, 3, CRATE, 60) == {}


@given(st.integers(0, 10_000), st.integers(1, 60), st.integers(1, 30))
def test_pallet_charges_for_any_counts(count, per_pallet, per_crate):
    packaging = {
        "vessel": "bottle",
        "bundles": [
            {"type": "CR", "size": per_crate, "deposit": "crate"},
            {"type": "PX", "size": per_pallet, "deposit": "pallet"},
        ],
    }
    pallet = {"type": "PX", "size": per_pallet, "pallet_bundle": {"type": "CR", "size": per_crate}}
    charges = item_charges(packaging, count, pallet, count * per_pallet * per_crate)
    expected = {"bottle": count * per_pallet * per_crate, "crate": count * per_pallet, "pallet": count}
    assert charges == {k: v for k, v in expected.items() if v}
    assert all(isinstance(v, int) for v in charges.values())


def _delivery(items, responses=(), empties=None, kind="DELIVERY"):
    request = {"items": items}
    if empties is not None:
        request["empties"] = empties
    return {"id": 1, "type": kind, "status": "REQUESTED", "request": request, "responses": list(responses)}


def _item(item_id="beer", count=1, bundle=CRATE, vessels=20):
    return {"id": item_id, "count": count, "bundle": bundle, "vessel_count": vessels}


BASIS = {"packaging": {"beer": PACKAGING}, "types": TYPES}


def test_charged_in_id_order_with_total():
    deposits = delivery_deposits(_delivery([_item(count=2, vessels=40)]), BASIS)
    assert deposits == {
        "charged": [
            {"id": "bottle", "name": "Bottle", "price": 8, "count": 40},
            {"id": "crate", "name": "Crate", "price": 150, "count": 2},
        ],
        "returned": [],
        "total": 40 * 8 + 2 * 150,
    }


def test_nothing_to_show_is_none():
    assert delivery_deposits(_delivery([_item()]), {}) is None
    assert delivery_deposits(_delivery([_item()], empties=[]), BASIS | {"packaging": {}}) is None


ACCEPT = {"type": "ACCEPT"}


def test_announced_empties_are_not_returned_before_an_accept():
    empties = [{"id": "keg", "name": "Keg", "price": 3000, "count": 2}]
    deposits = delivery_deposits(_delivery([_item()], empties=empties), BASIS)
    assert deposits["returned"] == []
    assert deposits["total"] == 20 * 8 + 150


def test_an_update_without_an_accept_returns_nothing_announced():
    empties = [{"id": "keg", "name": "Keg", "price": 3000, "count": 2}]
    deposits = delivery_deposits(_delivery([_item()], [{"type": "UPDATE"}], empties), BASIS)
    assert deposits["returned"] == []


def test_returned_from_request_empties_and_total_may_be_negative():
    empties = [{"id": "keg", "name": "Keg", "price": 3000, "count": 2}]
    deposits = delivery_deposits(_delivery([_item()], [ACCEPT], empties=empties), BASIS)
    assert deposits["returned"] == empties
    assert deposits["total"] == 20 * 8 + 150 - 6000


def test_latest_response_with_empties_replaces_the_announced_ones():
    announced = [{"id": "crate", "name": "Crate", "price": 150, "count": 5}]
    collected = [
        {"id": "crate", "name": "Crate", "price": 150, "count": 3},
        {"id": "keg", "name": "Keg", "price": 3100, "count": 0},
    ]
    responses = [{"type": "ACCEPT", "empties": collected}, {"type": "UPDATE"}]
    deposits = delivery_deposits(_delivery([_item()], responses, announced), BASIS)
    assert deposits["returned"] == [{"id": "crate", "name": "Crate", "price": 150, "count": 3}]  # count 0 left out


def test_empty_empties_in_a_response_say_nothing_comes_back():
    announced = [{"id": "crate", "name": "Crate", "price": 150, "count": 5}]
    deposits = delivery_deposits(_delivery([_item()], [{"type": "ACCEPT", "empties": []}], announced), BASIS)
    assert deposits["returned"] == []


def test_charged_follows_the_latest_response_listing_the_item():
    responses = [
        {"type": "ACCEPT", "items": [{"id": "beer", "count": 3, "vessel_count": 60}]},
        {"type": "UPDATE", "items": [{"id": "other", "count": 1, "vessel_count": 1}]},
    ]
    deposits = delivery_deposits(_delivery([_item()], responses), BASIS)
    assert {e["id"]: e["count"] for e in deposits["charged"]} == {"bottle": 60, "crate": 3}


def test_a_response_changing_the_bundle_changes_the_charges():
    responses = [{"type": "ACCEPT", "items": [{"id": "beer", "count": 1, "bundle": PALLET, "vessel_count": 800}]}]
    deposits = delivery_deposits(_delivery([_item()], responses), BASIS)
    assert {e["id"]: e["count"] for e in deposits["charged"]} == {"bottle": 800, "crate": 40, "pallet": 1}


def test_count_zero_charges_nothing():
    responses = [{"type": "REJECT", "items": [{"id": "beer", "count": 0, "vessel_count": 0}]}]
    assert delivery_deposits(_delivery([_item()], responses), BASIS) is None


def test_a_return_gives_back_nothing_before_its_accept():
    empties = [{"id": "crate", "name": "Crate", "price": 150, "count": 1}]
    deposits = delivery_deposits(_delivery([_item()], empties=empties, kind="RETURN"), BASIS)
    assert deposits is None  # nothing charged, nothing confirmed


def test_a_return_gives_back_what_its_items_carry():
    empties = [{"id": "crate", "name": "Crate", "price": 150, "count": 1}]
    deposits = delivery_deposits(_delivery([_item()], [ACCEPT], empties=empties, kind="RETURN"), BASIS)
    assert deposits["charged"] == []
    assert {e["id"]: e["count"] for e in deposits["returned"]} == {"bottle": 20, "crate": 2}
    assert deposits["total"] == -(20 * 8 + 2 * 150)


def test_a_return_with_only_empties():
    empties = [{"id": "crate", "name": "Crate", "price": 150, "count": 4}]
    deposits = delivery_deposits(_delivery([], [ACCEPT], empties=empties, kind="RETURN"), BASIS)
    assert deposits == {"charged": [], "returned": empties, "total": -600}


def test_balance_moves_charged_up_returned_down():
    empties = [{"id": "crate", "name": "Crate", "price": 150, "count": 1}]
    moves = receive_moves(delivery_deposits(_delivery([_item()], [ACCEPT], empties=empties), BASIS))
    assert moves == {"bottle": {"name": "Bottle", "price": 8, "count": 20}}  # one crate out, one back
    assert counts(moves) == {"bottle": 20}
    assert receive_moves(None) == {}


def test_with_deposits_sits_before_integration():
    delivery = {**_delivery([_item()]), "received": None, "integration": {"status": "PENDING"}}
    assert list(with_deposits(delivery, BASIS)) == [
        "id",
        "type",
        "status",
        "request",
        "responses",
        "received",
        "deposits",
        "integration",
    ]
    assert "deposits" not in with_deposits(delivery, {})


def test_balances_list_every_type_with_zero():
    assert balances(TYPES, {"crate": 3, "keg": -1}) == {
        "deposits": [
            {"id": "bottle", "name": "Bottle", "price": 8, "balance": 0},
            {"id": "crate", "name": "Crate", "price": 150, "balance": 3},
            {"id": "keg", "name": "Keg", "price": 3000, "balance": -1},
            {"id": "pallet", "name": "Pallet", "price": 1500, "balance": 0},
        ],
        "total": 450 - 3000,
    }


@given(st.lists(st.tuples(st.sampled_from(["bottle", "crate", "keg"]), st.integers(0, 1000)), max_size=10))
def test_total_is_charged_minus_returned(counts):
    empties = [
        {"id": d, "name": TYPES[d]["name"], "price": TYPES[d]["price"], "count": n} for d, n in dict(counts).items()
    ]
    deposits = delivery_deposits(_delivery([_item()], [ACCEPT], empties=empties), BASIS)
    returned = sum(e["count"] * e["price"] for e in empties)
    assert deposits["total"] == 20 * 8 + 150 - returned
    assert all(e["count"] > 0 for e in deposits["returned"])


def test_one_type_has_one_price_within_a_delivery():
    """A pallet the response's items charge is valued as the order read it, and so are the empties that collect
    it: a one-for-one swap nets zero, whatever price the response's empties were given."""
    responses = [{
        "type": "ACCEPT",
        "items": [{"id": "beer", "count": 1, "bundle": PALLET, "vessel_count": 800}],
        "empties": [{"id": "pallet", "name": "Pallet new", "price": 2000, "count": 1}],
    }]  # fmt: skip
    deposits = delivery_deposits(_delivery([_item()], responses), BASIS)
    pallet = {"id": "pallet", "name": "Pallet", "price": 1500, "count": 1}
    assert pallet in deposits["charged"] and deposits["returned"] == [pallet]
    assert deposits["total"] == 800 * 8 + 40 * 150


def test_a_response_bundle_given_by_type_and_size_is_the_ordered_bundle_when_it_matches():
    """Two bundles of one type and size: the plastic crate (ordered, id `plastic`) and the wooden one listed first.
    A response naming the bundle by type and size keeps the ordered one's deposit, not the first one's."""
    packaging = {"vessel": "bottle", "bundles": [
        {"type": "CR", "size": 20, "id": "wood", "deposit": "keg"},
        {"type": "CR", "size": 20, "id": "plastic", "deposit": "crate"},
    ]}  # fmt: skip
    ordered = {"type": "CR", "size": 20, "id": "plastic"}
    responses = [
        {
            "type": "ACCEPT",
            "items": [{"id": "beer", "count": 2, "bundle": {"type": "CR", "size": 20}, "vessel_count": 40}],
        }
    ]
    delivery = _delivery([_item(bundle=ordered)], responses)
    deposits = delivery_deposits(delivery, {"packaging": {"beer": packaging}, "types": TYPES})
    assert {e["id"]: e["count"] for e in deposits["charged"]} == {"bottle": 40, "crate": 2}
    other = [
        {
            "type": "ACCEPT",
            "items": [
                {"id": "beer", "count": 1, "bundle": {"type": "CR", "size": 20, "id": "wood"}, "vessel_count": 20}
            ],
        }
    ]
    deposits = delivery_deposits(
        _delivery([_item(bundle=ordered)], other), {"packaging": {"beer": packaging}, "types": TYPES}
    )
    assert {e["id"]: e["count"] for e in deposits["charged"]} == {"bottle": 20, "keg": 1}  # named by id: that one
