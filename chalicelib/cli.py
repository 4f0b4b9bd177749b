"""Admin command line (decisions §1).

    python -m chalicelib.cli create-table
    python -m chalicelib.cli create-account --id ID [--name NAME] [--token SECRET]
    python -m chalicelib.cli create-token --account ID
    python -m chalicelib.cli revoke-token --account ID --token-id ID
    python -m chalicelib.cli migrate-integration --account ID [--status PENDING|IMPORTED]
    python -m chalicelib.cli migrate-deposits --account ID
    python -m chalicelib.cli replay-feed [--since ISO-TIME] [--account ID]
    python -m chalicelib.cli mark-feed-numbered

create-account and create-token print the new token as their last line. replay-feed and mark-feed-numbered read the
table's stream from its start and print a line per account (docs/deploy.md "Replaying the feed", "Upgrading").
"""

import argparse
import sys

from botocore.exceptions import BotoCoreError, ClientError

from .domain.errors import ServiceError
from .domain.integration_status import IMPORTED, PENDING
from .domain.timestamps import parse_iso
from .service import accounts, feed_replay, migrations
from .store import table


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m chalicelib.cli", description="Supplier Ordering Service admin")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("create-table", help="create the DynamoDB table if it does not exist")
    account = commands.add_parser("create-account", help="create an account and print a supplier token")
    account.add_argument("--id", required=True)
    account.add_argument("--name")
    account.add_argument("--token", help="register this secret as the supplier token (development)")
    token = commands.add_parser("create-token", help="create a supplier token for an account")
    token.add_argument("--account", required=True)
    revoke = commands.add_parser("revoke-token", help="revoke a token by its id")
    revoke.add_argument("--account", required=True)
    revoke.add_argument("--token-id", required=True)
    migrate = commands.add_parser(
        "migrate-integration", help="give deliveries stored before integration states theirs, listed and counted (once)"
    )
    migrate.add_argument("--account", required=True)
    migrate.add_argument("--status", choices=[str(PENDING), str(IMPORTED)], default=str(PENDING))
    deposits = commands.add_parser(
        "migrate-deposits", help="give deposit types stored before they had an item of their own that item (once)"
    )
    deposits.add_argument("--account", required=True)
    replay = commands.add_parser(
        "replay-feed", help="number every change the table's stream holds that the feed is missing (nothing twice)"
    )
    replay.add_argument("--since", type=_time, help="only changes written at or after this time (ISO 8601, with zone)")
    replay.add_argument("--account", help="only this account's changes")
    commands.add_parser(
        "mark-feed-numbered",
        help="count every change the table's stream holds as numbered, without numbering it (upgrading from the "
        "release before the feed queue, once its numbering has drained)",
    )
    return parser


def _time(text: str):
    try:
        moment = parse_iso(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time with its zone, e.g. 2026-05-04T09:30:00Z")
    return moment


def _tallies(tallies: dict[str, feed_replay.Tally], now: str) -> int:
    """One line per account and one for them all; 1 when an account's changes were left unnumbered."""
    total = feed_replay.Tally()
    for account, tally in sorted(tallies.items()):
        line = f"{account}: {tally.read} records read, {tally.now} {now}, {tally.before} numbered before"
        print(line + (f", {tally.left} left ({tally.error})" if tally.error else ""))
        for name in ("read", "now", "before", "left"):
            setattr(total, name, getattr(total, name) + getattr(tally, name))
    print(f"{len(tallies)} accounts: {total.read} records read, {total.now} {now}, {total.before} numbered before")
    if not total.left:
        return 0
    print(f"error: {total.left} changes left unnumbered; fix the cause and run replay-feed again", file=sys.stderr)
    return 1


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.command == "create-table":
        created = table.create_table()
        print(f"table {table.name()} {'created' if created else 'already exists'}")
    elif args.command == "create-account":
        result = accounts.create_account(args.id, args.name, args.token)
        print(f"account {args.id} {'created' if result['created'] else 'already exists'}")
        print(f"supplier token id {result['token_id']}")
        print(result["token"])
    elif args.command == "create-token":
        token_id, secret = accounts.create_supplier_token(args.account)
        print(f"supplier token id {token_id}")
        print(secret)
    elif args.command == "revoke-token":
        accounts.revoke_token(args.account, args.token_id)
        print(f"token {args.token_id} revoked")
    elif args.command == "migrate-integration":
        migrated = migrations.migrate_integration(args.account, args.status)
        print(f"{migrated} deliveries of {args.account} given the integration state {args.status}")
    elif args.command == "migrate-deposits":
        migrated = migrations.migrate_deposits(args.account)
        print(f"{migrated} deposit types of {args.account} given their own item")
    elif args.command == "replay-feed":
        return _tallies(feed_replay.replay(args.since, args.account), "numbered now")
    elif args.command == "mark-feed-numbered":
        return _tallies(feed_replay.mark_numbered(), "marked numbered now")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except ServiceError as error:
        # The service names fields as the API does; here they are the options that carried them.
        print(f"error: {error.detail}" + "".join(f"\n  --{e.path}: {e.message}" for e in error.errors), file=sys.stderr)
    except (ClientError, BotoCoreError) as error:
        print(f"error: DynamoDB call failed: {error}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
