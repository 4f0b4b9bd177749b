"""What a cold start loads: each GET route, in a fresh interpreter, loads only what it needs (issue 20).

A heavy module (pydantic, zoneinfo, Powertools, the jobs, the OpenAPI document, import parsing, webhook signing)
costs milliseconds on every cold start of every Lambda that loads it. HEAVY says, for each, which of the routes
below may load it on a cold first request; bench/ measures what the cold start costs (bench/README.md).
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# route -> (path with query, resource path, path parameters)
ROUTES = {
    "GET /products/:id": ("/products/cola", "/products/{product_id}", {"product_id": "cola"}),
    "GET /products": ("/products", "/products", {}),
    "GET /deliveries": ("/deliveries", "/deliveries", {}),
    "GET /deliveries?status=": ("/deliveries?status=ACCEPTED", "/deliveries", {}),
    "GET /deliveries?integration=": ("/deliveries?integration=PENDING", "/deliveries", {}),
    "GET /deliveries/:id": ("/deliveries/1", "/deliveries/{delivery_id}", {"delivery_id": "1"}),
    "GET /categories": ("/categories", "/categories", {}),
    "GET /customers/:id": ("/customers/c1", "/customers/{customer_id}", {"customer_id": "c1"}),
    "GET /account/settings/deliveries": ("/account/settings/deliveries", "/account/settings/deliveries", {}),
    "GET /account/integration": ("/account/integration", "/account/integration", {}),
    "GET /openapi.json": ("/openapi.json", "/openapi.json", {}),
    "GET /changes": ("/changes", "/changes", {}),
}
# heavy module -> the routes above that may load it on a cold start
HEAVY = {
    "pydantic": {"GET /openapi.json"},
    "zoneinfo": {"GET /openapi.json"},
    "aws_lambda_powertools": set(),
    "chalicelib.jobs.event_lanes": set(),
    "chalicelib.jobs.images": set(),
    "chalicelib.jobs.import_turns": set(),
    # The AWS triggers are registered by jobs/triggers.py; what they run loads on their first call.
    "chalicelib.jobs.handlers": set(),
    "chalicelib.jobs.budget": set(),
    # The feed's head and its reading: GET /changes only (a write marks its items: store/feed_marks.py).
    "chalicelib.store.feed": {"GET /changes"},
    # The numbering is the stream's (jobs/handlers.number_changes): no read numbers anything, GET /changes included.
    "chalicelib.store.feed_sequencer": set(),
    "chalicelib.service.feed_numbering": set(),
    "chalicelib.http.openapi": {"GET /openapi.json"},
    "chalicelib.domain.catalogue_import": {"GET /openapi.json"},
    "chalicelib.domain.webhook": {"GET /openapi.json"},
    "chalicelib.service.deliveries": set(),  # the changes of deliveries; reads are service/delivery_reads.py
    "chalicelib.service.idempotency": set(),  # POSTs only
    # What the store answers when it did not do what was asked (store/outcomes.py): reads of products, deliveries
    # and tokens do not load it; the feed's reads and the stores that import the unit of work at the top do.
    "chalicelib.store.outcomes": {
        "GET /changes",
        "GET /categories",
        "GET /customers/:id",
        "GET /account/settings/deliveries",
    },
    # A route module is loaded by its own routes only (http/route_table.py), and by the document describing them all.
    "chalicelib.http.deliveries": {
        "GET /deliveries",
        "GET /deliveries?status=",
        "GET /deliveries?integration=",
        "GET /deliveries/:id",
        "GET /account/integration",
        "GET /openapi.json",
    },
    "chalicelib.http.products": {"GET /products/:id", "GET /products", "GET /openapi.json"},
    "chalicelib.http.imports": {"GET /openapi.json"},
    "chalicelib.http.events": {"GET /openapi.json"},
    "chalicelib.http.webhooks": {"GET /openapi.json"},
}

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    os.environ.update(AWS_DEFAULT_REGION="us-east-1", AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x",
                      TABLE_NAME="cold", SIGNING_SECRET="s", POWERTOOLS_LOG_LEVEL="WARNING")
    path, resource, parameters = json.loads(sys.argv[1])
    from moto import mock_aws
    with mock_aws():
        from chalicelib.store import keys, table, tokens
        table.create_table()
        tokens.create("acme", "supplier", None, secret="cold-token")
        item = {**keys.product_key("acme", "cola"), "data": {"id": "cola", "status": "ACTIVE", "category": "c",
                "name": "Cola"}, "rev": "r1"}  # as items were stored before store/rendered.py: read all the same
        table.client().put_item(TableName="cold", Item=table.to_item(item))
        before = set(sys.modules)
        from app import app
        route, _, query = path.partition("?")
        pairs = [part.split("=") for part in query.split("&") if part]
        event = {"requestContext": {"httpMethod": "GET", "resourcePath": resource, "path": route,
                 "requestId": "cold-1", "identity": {"sourceIp": "127.0.0.1"}},
                 "headers": {"authorization": "token cold-token"}, "multiValueHeaders": {},
                 "pathParameters": parameters or None,
                 "multiValueQueryStringParameters": {k: [v] for k, v in pairs} or None,
                 "queryStringParameters": dict(pairs) or None,
                 "stageVariables": {}, "body": None, "isBase64Encoded": False}
        response = app(event, None)
        print(json.dumps({"before": sorted(set(HEAVY) & before), "loaded": sorted(set(sys.modules) - before),
                          "status": response["statusCode"], "body": response["body"],
                          "request_id": response["headers"].get("X-Request-Id")}))
    """
)


@pytest.fixture(scope="module")
def cold_starts() -> dict:
    """Each route's cold start, in its own interpreter."""
    outcomes = {}
    for route, request in ROUTES.items():
        script = f"HEAVY = {sorted(HEAVY)!r}\n" + SCRIPT
        result = subprocess.run(
            [sys.executable, "-c", script, json.dumps(request)], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stderr[-3000:]
        outcomes[route] = json.loads(result.stdout.strip().splitlines()[-1])
    return outcomes


def test_every_cold_start_answers_and_its_setup_loaded_nothing_heavy(cold_starts):
    for route, outcome in cold_starts.items():
        assert outcome["before"] == [], f"{route}: the setup itself loaded {outcome['before']}; the test proves nothing"
        assert outcome["status"] in (200, 404), (route, outcome["status"], outcome["body"][:300])
        assert outcome["request_id"] == "cold-1"  # API Gateway's request id
    product = cold_starts["GET /products/:id"]
    assert product["status"] == 200 and json.loads(product["body"])["id"] == "cola"


@pytest.mark.parametrize("module", sorted(HEAVY))
def test_a_heavy_module_is_loaded_only_by_the_routes_that_need_it(cold_starts, module):
    loading = {route for route, outcome in cold_starts.items() if module in outcome["loaded"]}
    assert loading <= HEAVY[module], f"{module} is loaded on the cold path of {sorted(loading - HEAVY[module])}"
    if HEAVY[module]:  # the routes that need it do load it: the check itself sees modules load
        assert loading == HEAVY[module], (module, loading)
