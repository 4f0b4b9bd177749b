import pytest

from chalicelib.store import outcomes, table, tokens

from .conftest import ACCOUNT


def stored_text() -> str:
    """Everything the table holds, as text (a scan is fine for a test table)."""
    items = table.client().scan(TableName=table.name(), ConsistentRead=True)["Items"]
    return repr([table.from_item(item) for item in items])


def test_a_new_token_is_random_and_finds_its_supplier(engine):
    token_id, secret = tokens.create(ACCOUNT, "supplier")
    other_id, other_secret = tokens.create(ACCOUNT, "supplier")

    assert secret.startswith("sos_") and len(secret) >= 4 + 22  # at least 128 random bits
    assert (other_id, other_secret) != (token_id, secret)
    assert tokens.find(secret) == {"account": ACCOUNT, "role": "supplier", "token_id": token_id}


def test_a_customer_token_finds_its_customer(engine):
    token_id, secret = tokens.create(ACCOUNT, "customer", customer_id="c1")

    assert tokens.find(secret) == {"account": ACCOUNT, "role": "customer", "token_id": token_id, "customer_id": "c1"}


def test_the_secret_is_never_stored(engine):
    _, secret = tokens.create(ACCOUNT, "supplier")

    assert tokens.hash_token(secret) in stored_text()
    assert secret not in stored_text()


def test_a_given_secret_is_registered_and_registering_it_again_changes_nothing(engine):
    first = tokens.create(ACCOUNT, "supplier", secret="dev-supplier-token")
    again = tokens.create(ACCOUNT, "supplier", secret="dev-supplier-token")

    assert first == again
    assert tokens.find("dev-supplier-token")["token_id"] == first[0]


def test_an_unknown_secret_finds_nothing(engine):
    tokens.create(ACCOUNT, "supplier")

    assert tokens.find("sos_not-a-token") is None


def test_a_revoked_token_finds_nothing_and_cannot_be_revoked_again(engine):
    token_id, secret = tokens.create(ACCOUNT, "supplier")
    _, kept = tokens.create(ACCOUNT, "supplier")

    tokens.revoke(ACCOUNT, token_id)

    assert tokens.find(secret) is None
    assert tokens.find(kept) is not None
    assert tokens.revoke(ACCOUNT, token_id) == outcomes.Gone()


def test_revoking_through_another_account_or_customer_is_not_found_and_keeps_the_token(engine):
    token_id, secret = tokens.create(ACCOUNT, "customer", customer_id="c1")

    assert tokens.revoke("other", token_id) == outcomes.Gone()
    assert tokens.revoke(ACCOUNT, token_id, customer_id="c2") == outcomes.Gone()

    assert tokens.find(secret) is not None
    assert tokens.revoke(ACCOUNT, token_id, customer_id="c1") is None
    assert tokens.find(secret) is None


@pytest.mark.parametrize(
    "holder",
    [{"account": "other"}, {"account": ACCOUNT, "role": "customer", "customer_id": "c1"}],
    ids=["another account", "a customer of the account"],
)
def test_a_secret_that_stands_for_another_principal_is_never_moved(engine, holder):
    role = holder.get("role", "supplier")
    token_id, _ = tokens.create(holder["account"], role, holder.get("customer_id"), secret="shared-secret")

    assert tokens.create(ACCOUNT, "supplier", secret="shared-secret") == outcomes.Taken(holder["account"])

    found = tokens.find("shared-secret")
    assert (found["account"], found["role"], found["token_id"]) == (holder["account"], role, token_id)
