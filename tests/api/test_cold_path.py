"""A cold GET /products/:id imports no pydantic (the lazy route modules exist for this; bench/ measures it)."""
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    os.environ.update(AWS_DEFAULT_REGION="us-east-1", AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x",
                      TABLE_NAME="cold", SIGNING_SECRET="s")
    from moto import mock_aws
    with mock_aws():
        from chalicelib.store import keys, table, tokens
        table.create_table()
        tokens.create("acme", "supplier", None, secret="cold-token")
        item = {**keys.product_key("acme", "cola"), "data": {"id": "cola", "status": "ACTIVE", "category": "c",
                "name": "Cola"}, "rev": "r1"}
        table.client().put_item(TableName="cold", Item=table.to_item(item))
        before = "pydantic" in sys.modules
        from app import app
        event = {"requestContext": {"httpMethod": "GET", "resourcePath": "/products/{product_id}",
                 "path": "/products/cola", "requestId": "cold-1", "identity": {"sourceIp": "127.0.0.1"}},
                 "headers": {"authorization": "token cold-token"}, "multiValueHeaders": {},
                 "pathParameters": {"product_id": "cola"}, "multiValueQueryStringParameters": None,
                 "stageVariables": {}, "body": None, "isBase64Encoded": False}
        response = app(event, None)
        print(json.dumps({"before": before, "after": "pydantic" in sys.modules, "status": response["statusCode"],
                          "body": response["body"], "request_id": response["headers"].get("X-Request-Id")}))
    """
)


def test_a_cold_get_product_imports_no_pydantic():
    import json

    result = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["before"] is False, "the setup itself imported pydantic; the test proves nothing"
    assert outcome["status"] == 200, outcome
    assert json.loads(outcome["body"])["id"] == "cola"
    assert outcome["request_id"] == "cold-1"  # API Gateway's request id
    assert outcome["after"] is False, "GET /products/:id imported pydantic on a cold start"
