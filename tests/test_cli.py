"""The admin command line (decisions §1): clear messages and a non-zero exit on failure."""

import datetime as dt
import json

import pytest

from chalicelib import cli
from chalicelib.domain.token_secret import is_secret
from chalicelib.http import auth
from chalicelib.store import accounts, tokens

from .conftest import SUPPLIER_TOKEN


def test_create_account_refuses_to_move_another_accounts_token(accounts_ready, capsys):
    code = cli.main(["create-account", "--id", "third", "--token", SUPPLIER_TOKEN])

    assert code == 1
    assert capsys.readouterr().err == (
        "error: this token already belongs to account acme and is never moved;"
        " choose another secret, or leave --token out to get a new one\n"
    )
    assert tokens.find(SUPPLIER_TOKEN)["account"] == "acme"
    assert accounts.get("third") is None  # refused before anything was written


def test_create_account_registers_the_same_token_again_for_the_same_account(accounts_ready, capsys):
    assert cli.main(["create-account", "--id", "acme", "--token", SUPPLIER_TOKEN]) == 0

    output = capsys.readouterr().out.splitlines()
    assert output[0] == "account acme already exists"
    assert output[-1] == SUPPLIER_TOKEN
    assert tokens.find(SUPPLIER_TOKEN)["account"] == "acme"


def test_create_account_with_a_new_token_for_a_new_account(accounts_ready, capsys):
    assert cli.main(["create-account", "--id", "third", "--token", "third-secret"]) == 0

    assert capsys.readouterr().out.splitlines()[-1] == "third-secret"
    assert tokens.find("third-secret")["account"] == "third"


@pytest.mark.parametrize(
    "secret",
    [
        "has space",
        "x" * 513,
        "",
        " lead",
        "trail ",
        "tab\tinside",
        "line\nbreak",
        "nul\x00",
        "del\x7f",
        "café",
        "no\u00a0break",
        "café-ünïcode",
        "emoji-\U0001f37a",  # headers are read as latin-1: never logs in
    ],
)
def test_create_account_refuses_a_token_that_could_never_log_in(accounts_ready, capsys, secret):
    assert cli.main(["create-account", "--id", "third", "--token", secret]) == 1

    assert capsys.readouterr().err == (
        "error: 1 field(s) are invalid\n  --token: must be 1 to 512 printable ASCII characters with no spaces\n"
    )
    assert accounts.get("third") is None
    assert tokens.find(secret) is None


@pytest.mark.parametrize("secret", ["x" * 512, "a", "dev-token_with.punctuation~!#$%&'*+/=?^`|"])
def test_a_token_the_cli_registers_logs_in(api, capsys, secret):
    assert cli.main(["create-account", "--id", "third", "--token", secret]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == secret
    # The same rule on both sides: what the CLI registers, authentication takes.
    assert is_secret(secret)
    assert auth.authenticate(f"token {secret}", "supplier").account == "third"


@pytest.mark.parametrize("secret", ["has space", "x" * 513, "tab\tinside", "café", "no\u00a0break"])
def test_authentication_refuses_what_the_cli_refuses(api, secret):
    response = api.get("/products", token=secret)
    assert response.status_code == 401
    assert not is_secret(secret)


def test_make_run_refuses_a_supplier_token_that_could_never_log_in(monkeypatch, capsys):
    from chalicelib.localdev import run

    monkeypatch.setenv("SUPPLIER_TOKEN", "has space")
    assert run.serve() == 2
    assert capsys.readouterr().err == (
        "error: SUPPLIER_TOKEN must be 1 to 512 printable ASCII characters with no spaces,"
        " or no request could log in with it\n"
    )


def _legacy_delivery(delivery_id: int) -> None:
    """A delivery as the service stored it before integration states (decisions §14): none stored."""
    from chalicelib.store import deliveries

    delivery = {
        "id": delivery_id,
        "type": "DELIVERY",
        "status": "CANCELLED",
        "customer": {"id": "c1"},
        "responses": [],
        "request": {"timestamp": f"2026-01-0{delivery_id}T08:00:00.000Z", "customer_id": "c1", "items": []},
        "cancelled": {"timestamp": f"2026-02-0{delivery_id}T08:00:00.000Z", "user": None, "message": None},
    }
    now = dt.datetime(2026, 2, 1, 8, 0, tzinfo=dt.timezone.utc)
    from chalicelib.domain.feed import ChangeType, delivery_change
    from tests import delivery_units

    changes = [delivery_change(ChangeType.DELIVERY_REQUESTED, delivery)]
    assert delivery_units.place("acme", [delivery], [], None, None, changes=changes, now=now) is None
    assert deliveries.get("acme", delivery_id).integration is None


def test_migrate_integration_gives_old_deliveries_their_state_once(accounts_ready, capsys):
    from chalicelib.service import deliveries

    _legacy_delivery(1)
    _legacy_delivery(2)
    assert cli.main(["migrate-integration", "--account", "acme"]) == 0
    assert capsys.readouterr().out == "2 deliveries of acme given the integration state PENDING\n"
    assert cli.main(["migrate-integration", "--account", "acme"]) == 0
    assert capsys.readouterr().out == "0 deliveries of acme given the integration state PENDING\n"
    # Oldest first by the customer's last change; counted once.
    assert deliveries.integration_overview("acme") == {
        "pending": 2,
        "failed": 0,
        "oldest_pending": {"id": 1, "since": "2026-02-01T08:00:00.000Z"},
    }
    assert deliveries.get_delivery("acme", "2")["integration"] == {"status": "PENDING"}


def test_migrate_integration_as_imported(accounts_ready, capsys):
    from chalicelib.service import deliveries

    _legacy_delivery(1)
    assert cli.main(["migrate-integration", "--account", "acme", "--status", "IMPORTED"]) == 0
    assert capsys.readouterr().out == "1 deliveries of acme given the integration state IMPORTED\n"
    assert deliveries.integration_overview("acme") == {"pending": 0, "failed": 0, "oldest_pending": None}
    listed = [json.loads(text) for text in deliveries.list_deliveries("acme", 10, None, None, "IMPORTED").items]
    assert [(d["id"], d["integration"]) for d in listed] == [(1, {"status": "IMPORTED"})]  # JSON texts of the worklist
    assert deliveries.integration_overview("other") == {"pending": 0, "failed": 0, "oldest_pending": None}


def test_migrate_deposits_gives_old_deposit_types_their_own_item_once(accounts_ready, capsys):
    from chalicelib.store import keys, table

    legacy = {"crate": {"name": "Crate", "price": 150, "refs": 0}}
    table.client().put_item(
        TableName=table.name(), Item=table.to_item({**keys.deposit_types_key("acme"), "types": legacy, "count": 1})
    )
    assert cli.main(["migrate-deposits", "--account", "acme"]) == 0
    assert capsys.readouterr().out == "1 deposit types of acme given their own item\n"
    assert cli.main(["migrate-deposits", "--account", "acme"]) == 0
    assert capsys.readouterr().out == "0 deposit types of acme given their own item\n"


def test_create_account_gives_the_account_the_deployments_timezone(accounts_ready, monkeypatch, capsys):
    """decisions §7: the zone is stored with the account, so a later TIMEZONE never moves it."""
    from chalicelib.service import settings

    monkeypatch.setenv("TIMEZONE", "America/New_York")
    assert cli.main(["create-account", "--id", "nyc"]) == 0
    monkeypatch.setenv("TIMEZONE", "Europe/Berlin")
    assert cli.main(["create-account", "--id", "nyc"]) == 0
    assert settings.get_delivery_settings("nyc")["timezone"] == "America/New_York"


def test_create_account_refuses_a_timezone_that_is_no_iana_name(accounts_ready, monkeypatch, capsys):
    monkeypatch.setenv("TIMEZONE", "Europe/Nowhere")
    assert cli.main(["create-account", "--id", "nowhere"]) == 1
    assert capsys.readouterr().err == (
        "error: TIMEZONE 'Europe/Nowhere' must be an IANA time zone name, such as Europe/Helsinki or UTC\n"
    )
    assert accounts.get("nowhere") is None
    monkeypatch.setenv("TIMEZONE", "Europe/Helsinki")
    assert cli.main(["create-account", "--id", "nowhere"]) == 0
