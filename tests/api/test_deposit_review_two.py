"""The second review of deposits (issue 36): its reproductions, each failing before its fix."""

from chalicelib.service import deposits as deposit_uses
from tests.api.deliveries_helpers import CUSTOMER, shop  # noqa: F401
from tests.api.test_deposit_deliveries import drinks  # noqa: F401
from tests.problems import assert_problem
from tests.unit_of_work import fake_commits


def crate_balance(api) -> int:
    return {b["id"]: b["balance"] for b in api.get(f"/customers/{CUSTOMER}/deposits").data["deposits"]}["crate"]


def test_a_keyed_adjustment_whose_process_dies_after_its_write_is_not_applied_again(drinks, monkeypatch):
    """The answer is recorded in the write that adjusts (§11): the retry replays it (5, not 10)."""

    def commit_then_die(uow, real):
        real(uow)
        raise RuntimeError("the process died after its write")

    fake_commits(monkeypatch, commit_then_die)  # the first commit only
    body = {"id": "crate", "count": 5, "message": "opening balance"}
    headers = {"Idempotency-Key": "adjust-1"}
    assert drinks.post(f"/customers/{CUSTOMER}/deposits", body, headers=headers).status_code == 500
    retried = drinks.post(f"/customers/{CUSTOMER}/deposits", body, headers=headers)
    assert retried.status_code == 200, retried.data
    assert retried.headers.get("Idempotent-Replayed") == "true"
    assert {b["id"]: b["balance"] for b in retried.data["deposits"]}["crate"] == 5
    assert crate_balance(drinks) == 5
    assert len(drinks.get(f"/customers/{CUSTOMER}/deposits/movements").data["movements"]) == 1


def test_a_keyed_adjustment_answers_and_replays_the_balances_it_wrote(drinks):
    headers = {"Idempotency-Key": "adjust-2"}
    body = {"id": "crate", "count": 3, "message": "correction"}
    first = drinks.post(f"/customers/{CUSTOMER}/deposits", body, headers=headers)
    assert first.status_code == 200 and crate_balance(drinks) == 3
    drinks.post(f"/customers/{CUSTOMER}/deposits", {"id": "crate", "count": 1, "message": "another"})
    again = drinks.post(f"/customers/{CUSTOMER}/deposits", body, headers=headers)
    assert again.data == first.data and again.headers.get("Idempotent-Replayed") == "true"
    assert crate_balance(drinks) == 4


def test_a_type_an_open_delivery_charges_cannot_be_deleted_once_no_product_names_it(drinks):
    """The review's reproduction: no product names the pallet any more, an open delivery still charges it."""
    from tests.api.deliveries_helpers import CUSTOMER_TOKEN, place, respond
    from tests.api.test_deposit_deliveries import PALLET

    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": PALLET}])
    assert (
        drinks.patch("/products/lager", {"bundles": [{"type": "CR", "size": 20, "deposit": "crate"}]}).status_code
        == 200
    )
    refused = drinks.delete("/deposits/pallet")
    assert_problem(refused, 400, "conflict")
    assert respond(drinks, delivery["id"], {"type": "ACCEPT"}).status_code == 200
    assert drinks.delete("/deposits/pallet").status_code == 400  # ACCEPTED is not final either
    drinks.post(f"/customer/deliveries/{delivery['id']}/receive", {}, token=CUSTOMER_TOKEN)
    assert drinks.delete("/deposits/pallet").status_code == 400  # now the balance holds it
    assert (
        drinks.post(f"/customers/{CUSTOMER}/deposits", {"id": "pallet", "count": -1, "message": "back"}).status_code
        == 200
    )
    assert drinks.delete("/deposits/pallet").status_code == 204


def test_a_type_only_announced_as_empties_cannot_be_deleted_until_the_delivery_is_final(drinks):
    from tests.api.deliveries_helpers import CUSTOMER_TOKEN, place

    delivery = place(drinks, [{"id": "water", "count": 1}], empties=[{"id": "keg", "count": 2}])
    refused = drinks.delete("/deposits/keg")
    assert_problem(refused, 400, "conflict")
    assert drinks.post(f"/customer/deliveries/{delivery['id']}/cancel", {}, token=CUSTOMER_TOKEN).status_code == 200
    assert drinks.delete("/deposits/keg").status_code == 204


def test_an_order_whose_read_of_the_deposit_types_is_stale_reads_again(drinks, monkeypatch):
    """The review's reproduction: products and deposit types come from one eventually consistent read; a stale
    types item that lacks a type a product names was a KeyError (a 500). The order reads again, consistently."""
    from chalicelib.store import batch, keys, order_context
    from tests.api.deliveries_helpers import ACCOUNT, place
    from tests.api.test_deposit_deliveries import CRATE

    real = batch.get_items
    stale_reads = []

    def stale(wanted, consistent=False, **kwargs):
        found = real(wanted, consistent=consistent, **kwargs)
        if not consistent:  # the types item as it was before the types existed
            stale_reads.append(found.pop(table_key(keys.deposit_types_key(ACCOUNT)), None))
        return found

    def table_key(key):
        return key["PK"], key["SK"]

    monkeypatch.setattr(order_context.batch, "get_items", stale)
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": CRATE}])
    assert stale_reads and stale_reads[0] is not None  # the first read was made stale
    assert delivery["request"]["deposits"] == [
        {"id": "bottle", "name": "Bottle", "price": 8, "count": 20},
        {"id": "crate", "name": "Crate", "price": 150, "count": 1},
    ]


JUICE = {
    "status": "ACTIVE",
    "category": "drinks",
    "name": "Juice",
    "price": 100,
    "vessel": {"size": 1, "unit": "l", "type": "BO", "deposit": "bottle"},
    "bundles": [{"type": "CT", "size": 2.5, "unit": "kg"}, {"type": "CR", "size": 6, "deposit": "crate"}],
}


def test_a_bundle_making_a_fraction_of_a_vessel_is_refused_when_deposits_are_charged(drinks):
    """The review's reproduction: 3 bundles of 2.5 made 7.5 bottles, and the bottle deposit was cut to 7."""
    from tests.api.deliveries_helpers import order, place, put_product, respond
    from tests.conftest import problem_paths

    put_product(drinks, "juice", JUICE)
    refused = order(drinks, [{"id": "juice", "count": 3, "bundle": {"type": "CT", "size": 2.5}}])
    assert refused.status_code == 400, refused.data
    assert problem_paths(refused) == ["items[0].bundle"]
    placed = order(drinks, [{"id": "juice", "count": 2, "bundle": {"type": "CT", "size": 2.5}}])  # 5 bottles
    assert placed.status_code == 200, placed.data
    item = placed.data["deliveries"][0]["request"]["items"][0]
    assert item["vessel_count"] == 5 and item["deposits"] == [{"id": "bottle", "count": 5}]
    delivery = place(drinks, [{"id": "juice", "count": 1, "bundle": {"type": "CR", "size": 6}}])
    answer = {
        "type": "ACCEPT",
        "items": [{"id": "juice", "count": 3, "bundle": {"type": "CT", "size": 2.5, "unit": "kg"}}],
    }
    refused = respond(drinks, delivery["id"], answer)
    assert refused.status_code == 400 and problem_paths(refused) == ["items[0].bundle"]
    answer["items"][0]["count"] = 4  # 10 bottles
    accepted = respond(drinks, delivery["id"], answer)
    assert accepted.status_code == 200, accepted.data
    assert accepted.data["deposits"]["charged"] == [{"id": "bottle", "name": "Bottle", "price": 8, "count": 10}]


def test_a_fraction_of_a_vessel_is_still_fine_without_deposits(drinks):
    from tests.api.deliveries_helpers import order, put_product

    plain = {
        **JUICE,
        "vessel": {"size": 1, "unit": "l", "type": "BO"},
        "bundles": [{"type": "CT", "size": 2.5, "unit": "kg"}],
    }
    put_product(drinks, "plain-juice", plain)
    placed = order(drinks, [{"id": "plain-juice", "count": 3, "bundle": {"type": "CT", "size": 2.5}}])
    assert placed.status_code == 200, placed.data
    assert placed.data["deliveries"][0]["request"]["items"][0]["vessel_count"] == 7.5


def _long_named_types(api, n, char="€"):
    for i in range(n):
        deposit_id = f"{i:02d}" + "t" * 62  # 64 characters
        assert api.put(f"/deposits/{deposit_id}", {"name": char * 64, "price": 100_000}).status_code == 200
    return [f"{i:02d}" + "t" * 62 for i in range(n)]


def test_empties_are_bounded_in_bytes_and_three_lists_at_the_bound_fit_an_open_delivery(drinks):
    """The review's reproduction: with 64-character non-ASCII names a delivery with full empties lists could not
    take one more response. The lists are bounded in bytes (limits.EMPTIES_BYTES), so an order's empties and two
    responses' empties at that bound fit, REJECT, cancel and receive still possible."""
    from chalicelib.domain.limits import EMPTIES_BYTES
    from chalicelib.domain.rendering import size_in_bytes
    from tests.api.deliveries_helpers import CUSTOMER_TOKEN, order, respond
    from tests.conftest import problem_paths

    ids = _long_named_types(drinks, 50)
    every = [{"id": d, "count": 100_000} for d in ids]
    refused = order(drinks, [{"id": "water", "count": 1}], empties=every)
    assert refused.status_code == 400 and problem_paths(refused) == ["empties"]
    assert f"at most {EMPTIES_BYTES:,}" in refused.data["errors"][0]["message"]
    entry = {"id": ids[0], "name": "€" * 64, "price": 100_000, "count": 100_000}
    fitting = (EMPTIES_BYTES - 2) // (size_in_bytes(entry) + 1)  # as many as the bound holds
    empties = every[:fitting]
    placed = order(drinks, [{"id": "water", "count": 1}], empties=empties)
    assert placed.status_code == 200, placed.data
    delivery_id = placed.data["deliveries"][0]["id"]
    assert size_in_bytes(placed.data["deliveries"][0]["request"]["empties"]) <= EMPTIES_BYTES
    for kind in ("ACCEPT", "UPDATE"):
        answered = respond(drinks, delivery_id, {"type": kind, "empties": empties})
        assert answered.status_code == 200, answered.data
    one_more = respond(drinks, delivery_id, {"type": "UPDATE", "empties": every[: fitting + 1]})
    assert one_more.status_code == 400 and problem_paths(one_more) == ["empties"]
    received = drinks.post(f"/customer/deliveries/{delivery_id}/receive", {"message": "x" * 2000}, token=CUSTOMER_TOKEN)
    assert received.status_code == 200, received.data


def test_an_order_whose_empties_type_is_being_deleted_when_it_commits_is_refused(drinks, monkeypatch):
    """A DELETE marks the type between the order's read and its write: the order's transaction is conditional on
    the types of its empties being usable, so no open delivery ever names a type being deleted."""
    from chalicelib.service import write_units as deliveries
    from tests.api.deliveries_helpers import ACCOUNT, order
    from tests.conftest import problem_paths

    real = deliveries.commit

    def deleted_meanwhile(*args, **kwargs):
        deposit_uses.retire(ACCOUNT, "keg")
        return real(*args, **kwargs)

    monkeypatch.setattr(deliveries, "commit", deleted_meanwhile)
    refused = order(
        drinks, [{"id": "water", "count": 1}], empties=[{"id": "crate", "count": 1}, {"id": "keg", "count": 2}]
    )
    assert refused.status_code == 400, refused.data
    assert problem_paths(refused) == ["empties[1].id"]
    assert drinks.get("/deliveries").data["deliveries"] == []
    monkeypatch.setattr(deliveries, "commit", real)
    deposit_uses.retire(ACCOUNT, "keg", retiring=False)
    assert order(drinks, [{"id": "water", "count": 1}], empties=[{"id": "keg", "count": 2}]).status_code == 200


def test_a_response_whose_new_empties_type_is_being_deleted_when_it_commits_is_refused(drinks, monkeypatch):
    from chalicelib.service import write_units as deliveries
    from tests.api.deliveries_helpers import ACCOUNT, place, respond
    from tests.conftest import problem_paths

    delivery = place(drinks, [{"id": "water", "count": 1}])
    real = deliveries.commit

    def deleted_meanwhile(*args, **kwargs):
        deposit_uses.retire(ACCOUNT, "keg")
        return real(*args, **kwargs)

    monkeypatch.setattr(deliveries, "commit", deleted_meanwhile)
    refused = respond(drinks, delivery["id"], {"type": "ACCEPT", "empties": [{"id": "keg", "count": 1}]})
    assert refused.status_code == 400 and problem_paths(refused) == ["empties[0].id"], refused.data
    assert drinks.get(f"/deliveries/{delivery['id']}").data["status"] == "REQUESTED"
    monkeypatch.setattr(deliveries, "commit", real)
    deposit_uses.retire(ACCOUNT, "keg", retiring=False)
    assert (
        respond(drinks, delivery["id"], {"type": "ACCEPT", "empties": [{"id": "keg", "count": 1}]}).status_code == 200
    )


def test_an_order_whose_product_stops_naming_a_type_that_is_then_deleted_before_it_commits_is_planned_again(
    drinks, monkeypatch
):
    """§15's delete guard under the interleaving the review left open: the order reads a product naming `crate`;
    before it commits, the product stops naming it and DELETE /deposits/crate completes (no open delivery, product
    or balance names it). The order's write is pinned to the product's revision as read, so it is refused and the
    order is planned again from the product as it is now: no delivery ever charges the deleted type."""
    from chalicelib.service import write_units as deliveries
    from tests.api.deliveries_helpers import place, put_product
    from tests.api.test_deposit_deliveries import LAGER

    original, interleaved = deliveries.commit, []

    def catalogue_changed_meanwhile(*args, **kwargs):
        if not interleaved:
            bundles = [{"type": "CR", "size": 20}, LAGER["bundles"][1]]  # the crate bundle without its deposit
            put_product(drinks, "lager", {**LAGER, "bundles": bundles})
            interleaved.append(drinks.delete("/deposits/crate").status_code)
        return original(*args, **kwargs)

    monkeypatch.setattr(deliveries, "commit", catalogue_changed_meanwhile)
    delivery = place(drinks, [{"id": "lager", "count": 1, "bundle": {"type": "CR", "size": 20}}])
    assert interleaved == [204]
    assert drinks.get("/deposits/crate").status_code == 404
    assert delivery["request"]["deposits"] == [{"id": "bottle", "name": "Bottle", "price": 8, "count": 20}]
    assert [e["id"] for e in delivery["deposits"]["charged"]] == ["bottle"]
