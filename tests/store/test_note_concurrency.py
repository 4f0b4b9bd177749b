"""A delivery note racing a response, an amendment, a cancel or a receive on DynamoDB Local (decisions §18, §16):
exactly one commits first, and the other is checked again against what it left, never against what it read.
Concurrent writers from threads (each outcome any interleaving may give is checked), and each order forced once, so
both sides of every race are shown. On that engine only: moto serialises every request, so it cannot race."""

import pytest

from chalicelib.domain.errors import InvalidTransition, PreconditionFailed, ValidationFailed
from chalicelib.service import amendments, catalogue, deliveries, delivery_notes, delivery_reads, ordering, write_units
from chalicelib.service import deposits as deposit_service
from chalicelib.store import deliveries as delivery_store
from chalicelib.store import keys, table
from tests.store.test_amendment_concurrency import fire

ACCOUNT, CUSTOMER = "acme", "c1"
USER = {"name": "Olli", "email": "olli@example.com"}
DATE = {"date": "2030-01-02"}  # no delivery rules: far ahead of any cutoff, so amendments are allowed
ROUNDS = 4

pytestmark = pytest.mark.parametrize("engine", ["dynamodb-local"], indirect=True)


@pytest.fixture
def delivery_id(engine) -> int:
    """10 bottles of lager ordered by c1 for a date: each bottle charges a bottle deposit."""
    catalogue.put_category(ACCOUNT, "drinks", {"name": "Drinks"})
    deposit_service.put_deposit(ACCOUNT, "bottle", {"name": "Bottle", "price": 8})
    lager = {"status": "ACTIVE", "category": "drinks", "name": "Lager", "price": 95}
    catalogue.put_product(ACCOUNT, "lager", {**lager, "vessel": {"size": 1, "unit": "l", "deposit": "bottle"}}, None)
    catalogue.put_product(ACCOUNT, "cider", {**lager, "name": "Cider"}, None)
    address = {"address1": "Main Street 1", "zip": "00100", "city": "Helsinki", "country": "FI"}
    table.client().put_item(
        TableName=table.name(),
        Item=table.to_item(
            {**keys.customer_key(ACCOUNT, CUSTOMER), "data": {"id": CUSTOMER, "name": "Bar", "address": address}}
        ),
    )
    return place()


def place(count: int = 10) -> int:
    body = {"items": [{"id": "lager", "count": count}, {"id": "cider", "count": 1}], "user": USER, "scheduled": DATE}
    (delivery,) = ordering.place_order(ACCOUNT, CUSTOMER, body)
    return delivery["id"]


def _note(delivery_id: int, body: dict | None = None, if_match: str | None = None):
    return lambda: delivery_notes.deliver(
        ACCOUNT, str(delivery_id), {"number": "LS-1", **(body or {})}, if_match=if_match
    )


def _respond(delivery_id: int, count: int):
    body = {"type": "ACCEPT", "reference": "R", "items": [{"id": "lager", "count": count}]}
    return lambda: deliveries.respond(ACCOUNT, str(delivery_id), body)


def _amend(delivery_id: int, items: list[dict]):
    return lambda: amendments.amend(ACCOUNT, CUSTOMER, str(delivery_id), {"items": items, "user": USER})


def _customer(action, delivery_id: int):
    return lambda: action(ACCOUNT, CUSTOMER, str(delivery_id), {})


def _stored(delivery_id: int):
    return delivery_store.get(ACCOUNT, delivery_id, consistent=True)


def _moved_once_or_never(delivered: bool, bottles: int) -> None:
    """The balances moved by the one write that delivered, or not at all; the statement says the same."""
    held = deposit_service.customer_balances(ACCOUNT, CUSTOMER)["deposits"][0]["balance"]
    moves = deposit_service.movements(ACCOUNT, CUSTOMER, None, 100, None, "supplier").items
    assert held == sum(m["count"] for m in moves) == (bottles if delivered else 0)


def _balance_before() -> int:
    return deposit_service.customer_balances(ACCOUNT, CUSTOMER)["deposits"][0]["balance"]


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_note_and_a_response_at_once_apply_in_one_order(delivery_id, round_):
    note, response = fire([_note(delivery_id), _respond(delivery_id, 8)])
    assert not isinstance(note, Exception), note
    stored = _stored(delivery_id)
    line = stored.delivery["delivery_note"]["items"][0]
    if isinstance(response, InvalidTransition):  # the note first: the response found it DELIVERED
        assert stored.delivery["responses"] == [] and (line["confirmed"], line["count"]) == (10, 10)
    else:  # the response first: the note was checked again against it, and confirms what it said
        assert not isinstance(response, Exception), response
        assert [r["reference"] for r in stored.delivery["responses"]] == ["R"]
        assert (line["confirmed"], line["count"]) == (8, 8)
    assert stored.delivery["status"] == "DELIVERED" and stored.version == 1 + len(stored.delivery["responses"])
    _moved_once_or_never(True, line["count"])


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_note_and_an_amendment_at_once_apply_in_one_order(delivery_id, round_):
    note, amended = fire(
        [_note(delivery_id), _amend(delivery_id, [{"id": "lager", "count": 12}, {"id": "cider", "count": 1}])]
    )
    assert not isinstance(note, Exception), note
    stored = _stored(delivery_id)
    line = stored.delivery["delivery_note"]["items"][0]
    if isinstance(amended, InvalidTransition):
        assert "amendments" not in stored.delivery and (line["ordered"], line["count"]) == (10, 10)
    else:
        assert not isinstance(amended, Exception), amended
        assert len(stored.delivery["amendments"]) == 1 and (line["ordered"], line["count"]) == (12, 12)
    _moved_once_or_never(True, line["count"])


@pytest.mark.parametrize("action", ["cancel", "receive"])
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_note_and_a_cancel_or_a_receive_at_once_exactly_one_wins(delivery_id, action, round_):
    note, customer = fire([_note(delivery_id), _customer(getattr(deliveries, action), delivery_id)])
    winners = [r for r in (note, customer) if not isinstance(r, Exception)]
    losers = [r for r in (note, customer) if isinstance(r, Exception)]
    assert len(winners) == 1 and len(losers) == 1 and isinstance(losers[0], InvalidTransition), (note, customer)
    stored = _stored(delivery_id)
    noted = not isinstance(note, Exception)
    assert ("delivery_note" in stored.delivery) == noted and ("cancelled" in stored.delivery) == (
        action == "cancel" and not noted
    )
    assert stored.delivery["status"] == ("DELIVERED" if noted or action == "receive" else "CANCELLED")
    assert stored.version == 1
    # A receive without the supplier's ACCEPT charges what was ordered and credits nothing; a note what it says.
    _moved_once_or_never(stored.delivery["status"] == "DELIVERED", 10)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_note_with_if_match_never_delivers_a_version_it_has_not_read(delivery_id, round_):
    tag = delivery_reads.revision(_stored(delivery_id))
    note, response = fire([_note(delivery_id, if_match=tag), _respond(delivery_id, 8)])
    stored = _stored(delivery_id)
    if isinstance(note, PreconditionFailed):  # the response came first: nothing of the note was written
        assert "delivery_note" not in stored.delivery and stored.delivery["status"] == "ACCEPTED"
        assert not isinstance(response, Exception) and _balance_before() == 0
    else:
        assert not isinstance(note, Exception), note
        assert isinstance(response, InvalidTransition) and stored.delivery["responses"] == []


# --- each order forced once: the loser is checked again against what the winner left ---


def _winner_first(monkeypatch, winner) -> list:
    """Run `winner` between the note's read and its write (the note loses that race): what the winner returned."""
    write, done = write_units.commit, []

    def racing(*args, **kwargs):
        if not done:
            done.append("racing")  # before the winner runs: its own write passes straight through
            done.append(winner())
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", racing)
    return done


def test_a_note_that_lost_to_a_response_delivers_what_the_response_confirmed(delivery_id, monkeypatch):
    _winner_first(monkeypatch, _respond(delivery_id, 7))
    delivered = _note(delivery_id)()
    line = delivered["delivery_note"]["items"][0]
    assert ([r["reference"] for r in delivered["responses"]], line["confirmed"], line["count"]) == (["R"], 7, 7)
    _moved_once_or_never(True, 7)


def test_a_note_that_lost_to_an_amendment_is_checked_against_the_amended_order(delivery_id, monkeypatch):
    write = write_units.commit
    _winner_first(monkeypatch, _amend(delivery_id, [{"id": "lager", "count": 12}]))  # cider removed
    with pytest.raises(ValidationFailed) as refused:
        _note(delivery_id, {"items": [{"id": "cider", "count": 1}]})()
    assert [e.path for e in refused.value.errors] == ["items[0].id"]
    monkeypatch.setattr(write_units, "commit", write)
    stored = _stored(delivery_id)
    assert stored.delivery["status"] == "REQUESTED" and len(stored.delivery["amendments"]) == 1
    delivered = _note(delivery_id)()
    assert [(line["id"], line["ordered"]) for line in delivered["delivery_note"]["items"]] == [("lager", 12)]


@pytest.mark.parametrize("action, status", [("cancel", "CANCELLED"), ("receive", "DELIVERED")])
def test_a_note_that_lost_to_a_cancel_or_a_receive_is_refused(delivery_id, monkeypatch, action, status):
    _winner_first(monkeypatch, _customer(getattr(deliveries, action), delivery_id))
    with pytest.raises(InvalidTransition):
        _note(delivery_id)()
    stored = _stored(delivery_id)
    assert stored.delivery["status"] == status and "delivery_note" not in stored.delivery and stored.version == 1


@pytest.mark.parametrize(
    "loser, refused",
    [
        (lambda d: _respond(d, 8), InvalidTransition),
        (lambda d: _amend(d, [{"id": "lager", "count": 12}]), InvalidTransition),
        (lambda d: _customer(deliveries.cancel, d), InvalidTransition),
        (lambda d: _customer(deliveries.receive, d), InvalidTransition),
    ],
    ids=["response", "amendment", "cancel", "receive"],
)
def test_whatever_lost_to_a_note_finds_the_delivery_delivered(delivery_id, monkeypatch, loser, refused):
    write, done = write_units.commit, []

    def racing(*args, **kwargs):  # the note commits between the loser's read and its write
        if not done:
            done.append("racing")
            done.append(_note(delivery_id)())
        return write(*args, **kwargs)

    monkeypatch.setattr(write_units, "commit", racing)
    with pytest.raises(refused):
        loser(delivery_id)()
    stored = _stored(delivery_id)
    assert stored.delivery["status"] == "DELIVERED" and stored.delivery["delivery_note"]["number"] == "LS-1"
    assert stored.version == 1
    _moved_once_or_never(True, 10)
