"""The admin command line (decisions §1): clear messages and a non-zero exit on failure."""
from chalicelib import cli
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
