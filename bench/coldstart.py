"""One cold start, measured inside a fresh interpreter: `python bench/coldstart.py app|floor`.

Prints JSON {"ms": time from interpreter start to the first response, "cpu_ms": CPU time of the process, "peak_mb":
peak RSS}. `app` imports
the service and answers GET /products/:id through the Lambda entry point; `floor` only imports boto3 and
chalice and does one GetItem — the least any Lambda of this stack can do.
"""

import json
import os
import resource
import sys
import time

STARTED = float(os.environ["BENCH_STARTED"])  # set by the parent just before spawning us


def floor() -> None:
    import boto3
    import chalice  # noqa: F401

    client = boto3.session.Session().client("dynamodb")
    client.get_item(TableName=os.environ["TABLE_NAME"], Key={"PK": {"S": "A#bench0300"}, "SK": {"S": "PRODUCT#p0001"}})


def app() -> None:
    sys.path.insert(0, os.getcwd())
    from app import app as chalice_app

    # The API Gateway proxy event Lambda would receive; built by hand so no test tooling is imported.
    event = {
        "requestContext": {
            "httpMethod": "GET",
            "resourcePath": "/products/{product_id}",
            "path": "/products/p0001",
            "requestId": "cold",
            "identity": {"sourceIp": "127.0.0.1"},
        },
        "headers": {"authorization": f"token {os.environ['BENCH_TOKEN']}"},
        "multiValueHeaders": {},
        "pathParameters": {"product_id": "p0001"},
        "multiValueQueryStringParameters": None,
        "stageVariables": {},
        "body": None,
        "isBase64Encoded": False,
    }
    response = chalice_app(event, None)
    assert response["statusCode"] == 200, response


if __name__ == "__main__":
    {"app": app, "floor": floor}[sys.argv[1]]()
    elapsed = (time.time() - STARTED) * 1000
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000  # CPU time: what a busy machine's waiting does not inflate
    print(
        json.dumps({"ms": round(elapsed, 1), "cpu_ms": round(cpu_ms, 1), "peak_mb": round(usage.ru_maxrss / 1024, 1)})
    )
