"""Runs a doc's curl session as it is written, with bash and curl against the service over HTTP, after what
docs/api.md's session made: the category `drinks`, the customer `bar-1` and its token."""

import json
import os
import re
import subprocess
from pathlib import Path

from tests.conftest import SUPPLIER_TOKEN

from .customer_support import customer_token, make_category, make_customer
from .http_server import serving

DOCS = Path(__file__).resolve().parents[2] / "docs"


def session(doc: str) -> str:
    return re.search(r"## A session.*?```sh\n(.*?)```", (DOCS / doc).read_text(), re.S).group(1)


def answers_of(api, doc: str) -> list:
    """Each JSON answer the session printed, in order."""
    make_category(api)
    make_customer(  # as docs/api.md's session makes it
        api,
        "bar-1",
        company="Bar One Oy",
        contact={"name": "Anna", "email": "anna@example.com"},
        address={"address1": "Main St 1", "zip": "00100", "city": "Helsinki", "country": "FI"},
    )
    env = {
        **os.environ,
        "AUTH": f"Authorization: token {SUPPLIER_TOKEN}",
        "JSON": "Content-Type: application/json",
        "CUSTOMER_TOKEN": customer_token(api, "bar-1"),
    }
    with serving() as url:
        ran = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", session(doc)],
            env={**env, "BASE": url},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert ran.returncode == 0, ran.stderr
    return [json.loads(line) for line in ran.stdout.splitlines() if line.strip()]
