"""The deploy template, generated from the code it deploys so that the two cannot drift.

`chalice package --merge-template .chalice/resources.json` merges resources.json into Chalice's SAM template:
the DynamoDB table (keys and indexes from store.table.table_definition, on-demand, point-in-time recovery, the
stream), the feed queue and the event sources, concurrency and alarms of the functions that move changes
(deploy_stream.py), the environment of every function, and problem+json bodies for the errors API Gateway answers
itself. .chalice/policy-<stage>.json is the policy Chalice attaches to every function's role: the table, its indexes,
its stream, the two queues the functions use and the functions' own log groups, named by CloudFormation reference.

    python -m chalicelib.deploy_template write                            # regenerate both files
    python -m chalicelib.deploy_template check                            # exit 1 when they are stale
    python -m chalicelib.deploy_template package --stage dev --out build/ # chalice package with the merge
"""

import argparse
import fcntl
import importlib.util
import json
import os
import py_compile
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from . import deploy_stream
from .deploy_stream import (
    FEED_DEAD_LETTERS,
    FEED_DEAD_LETTERS_ARN,
    FEED_QUEUE_ARN,
    FEED_QUEUE_URL,
    STREAM_FAILURES,
    STREAM_FAILURES_ARN,
)
from .domain.problems import ProblemType
from .http.bodies import MAX_BODY_BYTES
from .store import table

PROJECT = Path(__file__).resolve().parent.parent
MERGE_TEMPLATE = PROJECT / ".chalice" / "resources.json"
STAGES = ("local", "dev", "prod")
# One least-privilege policy file per stage (config.json names them); each stage is its own stack, so the same
# CloudFormation references name that stage's table.
POLICIES = {stage: PROJECT / ".chalice" / f"policy-{stage}.json" for stage in STAGES}

TABLE = "Table"  # logical id of the table in the template
TABLE_ARN = {"Fn::GetAtt": [TABLE, "Arn"]}
STREAM_ARN = {"Fn::GetAtt": [TABLE, "StreamArn"]}

# Everything the service does to its table, and nothing else (no Scan, no table management).
# BatchWriteItem grants nothing PutItem and DeleteItem do not.
DATA_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
]
STREAM_ACTIONS = ["dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"]
# What the numbering's event source does to the feed queue with the function's role, and the numbering's postponing
# of a failed message (ChangeMessageVisibility). Sending is the forwarder's (SendMessage covers SendMessageBatch).
FEED_QUEUE_ACTIONS = [
    "sqs:ReceiveMessage",
    "sqs:DeleteMessage",
    "sqs:ChangeMessageVisibility",
    "sqs:GetQueueAttributes",
]
LOG_ACTIONS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]
# Functions get CloudFormation names "<stack>-<logical id>-<suffix>", so their log groups share this prefix.
LOG_GROUPS = "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/aws/lambda/${AWS::StackName}-*"

# API Gateway answers some requests before the Lambda runs; these give them the service's problem+json shape.
# (status or None to keep API Gateway's own, problem type, detail or None for API Gateway's message)
GATEWAY_PROBLEMS = {
    "MISSING_AUTHENTICATION_TOKEN": (404, ProblemType.NOT_FOUND, "no route matches this path"),
    "RESOURCE_NOT_FOUND": (404, ProblemType.NOT_FOUND, "no route matches this path"),
    "REQUEST_TOO_LARGE": (413, ProblemType.PAYLOAD_TOO_LARGE, f"at most {MAX_BODY_BYTES} bytes"),
    "UNSUPPORTED_MEDIA_TYPE": (415, ProblemType.UNSUPPORTED_MEDIA_TYPE, "send application/json"),
    "ACCESS_DENIED": (403, ProblemType.FORBIDDEN, None),
    "WAF_FILTERED": (403, ProblemType.FORBIDDEN, None),
    "DEFAULT_4XX": (None, ProblemType.VALIDATION_ERROR, None),
    "DEFAULT_5XX": (None, ProblemType.INTERNAL_ERROR, None),
}


def table_resource() -> dict:
    """The table as CloudFormation declares it: the very keys and indexes `cli create-table` creates."""
    definition = table.table_definition("generated-by-cloudformation")
    properties = {
        key: definition[key] for key in ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "BillingMode")
    }
    # CloudFormation has no StreamEnabled: a StreamSpecification turns the stream on.
    properties["StreamSpecification"] = {"StreamViewType": definition["StreamSpecification"]["StreamViewType"]}
    properties["PointInTimeRecoverySpecification"] = {"PointInTimeRecoveryEnabled": True}
    # Idempotency records (24 hours) and change-feed entries (35 days) carry expires_at (epoch seconds).
    properties["TimeToLiveSpecification"] = {"AttributeName": table.TTL_ATTRIBUTE, "Enabled": True}
    return {
        "Type": "AWS::DynamoDB::Table",
        # Deleting or replacing the stack must never delete the data.
        "DeletionPolicy": "Retain",
        "UpdateReplacePolicy": "Retain",
        "Properties": properties,
    }


def _gateway_response(status: int | None, problem_type: ProblemType, detail: str | None) -> dict:
    # API Gateway substitutes $context variables in these templates; messageString arrives already quoted.
    body = f'{{"type":"{problem_type}","title":"{problem_type.title}",'
    if status is not None:
        body += f'"status":{status},'
    body += f'"detail":{json.dumps(detail) if detail else "$context.error.messageString"},'
    body += '"instance":"$context.requestId","errors":[],'
    body += '"gateway_error":"$context.error.responseType","request_id":"$context.requestId"}'
    response = {
        "responseParameters": {
            "gatewayresponse.header.Content-Type": "'application/problem+json'",
            "gatewayresponse.header.X-Request-Id": "context.requestId",
        },
        "responseTemplates": {"application/json": body},
    }
    if status is not None:
        response["statusCode"] = str(status)
    return response


def merge_template() -> dict:
    return {
        "Parameters": {
            "SigningSecret": {
                "Type": "String",
                "NoEcho": True,
                "MinLength": 32,
                "Description": "Root secret that cursor and webhook secrets derive from (openssl rand -base64 48).",
            },
            "CorsAllowOrigins": {
                "Type": "String",
                "Default": "",
                "Description": "Browser origins allowed to call the API, comma-separated, or * (empty: no CORS).",
            },
            "LogLevel": {
                "Type": "String",
                "Default": "INFO",
                "AllowedValues": ["DEBUG", "INFO", "WARNING", "ERROR"],
                "Description": "Level of the JSON logs.",
            },
        },
        "Globals": {
            "Function": {
                "Environment": {
                    "Variables": {
                        "TABLE_NAME": {"Ref": TABLE},
                        "SIGNING_SECRET": {"Ref": "SigningSecret"},
                        "POWERTOOLS_LOG_LEVEL": {"Ref": "LogLevel"},
                        "CORS_ALLOW_ORIGINS": {"Ref": "CorsAllowOrigins"},
                    }
                }
            }
        },
        "Resources": {
            TABLE: table_resource(),
            **deploy_stream.resources(STREAM_ARN),
            "RestAPI": {
                "Properties": {
                    "DefinitionBody": {
                        "x-amazon-apigateway-gateway-responses": {
                            name: _gateway_response(*problem) for name, problem in GATEWAY_PROBLEMS.items()
                        }
                    }
                }
            },
        },
        "Outputs": {
            "TableName": {"Description": "TABLE_NAME for the admin command line", "Value": {"Ref": TABLE}},
            "TableStreamArn": {"Value": STREAM_ARN},
            "StreamFailuresQueue": {"Description": "Stream batches given up on", "Value": {"Ref": STREAM_FAILURES}},
            "FeedQueueUrl": {"Description": "The feed queue (FIFO, a group per account)", "Value": FEED_QUEUE_URL},
            "FeedQueueArn": {"Value": FEED_QUEUE_ARN},
            "FeedDeadLettersUrl": {
                "Description": "Feed messages set aside after failing their numbering",
                "Value": {"Ref": FEED_DEAD_LETTERS},
            },
            "FeedDeadLettersArn": {"Value": FEED_DEAD_LETTERS_ARN},
            # Whose logs an operator reads when the feed's alarms fire (docs/deploy.md).
            "TableFeedName": {"Description": "The stream's forwarder", "Value": {"Ref": deploy_stream.FEED_FUNCTION}},
            "FeedNumberingName": {
                "Description": "The feed's numbering",
                "Value": {"Ref": deploy_stream.NUMBERING_FUNCTION},
            },
        },
    }


def policy() -> dict:
    """The role policy of every function: only this stack's table, its indexes, its stream, the two queues the
    functions use (the feed queue, the stream's on-failure queue) and log groups."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "Table",
                "Effect": "Allow",
                "Action": DATA_ACTIONS,
                "Resource": [TABLE_ARN, {"Fn::Sub": "${%s.Arn}/index/*" % TABLE}],
            },
            {"Sid": "TableStream", "Effect": "Allow", "Action": STREAM_ACTIONS, "Resource": [STREAM_ARN]},
            # The forwarder sends to the feed queue; the stream's triggers send what they give up on with the
            # function's role. Nothing sends to the dead letters but SQS itself.
            {
                "Sid": "QueueSend",
                "Effect": "Allow",
                "Action": ["sqs:SendMessage"],
                "Resource": [FEED_QUEUE_ARN, STREAM_FAILURES_ARN],
            },
            {"Sid": "FeedQueueReceive", "Effect": "Allow", "Action": FEED_QUEUE_ACTIONS, "Resource": [FEED_QUEUE_ARN]},
            {
                "Sid": "TableStreamList",
                "Effect": "Allow",
                "Action": ["dynamodb:ListStreams"],
                "Resource": [{"Fn::Sub": "${%s.Arn}/stream/*" % TABLE}],
            },
            {
                "Sid": "Logs",
                "Effect": "Allow",
                "Action": LOG_ACTIONS,
                "Resource": [{"Fn::Sub": LOG_GROUPS}, {"Fn::Sub": LOG_GROUPS + ":*"}],
            },
        ],
    }


def _render(document: dict) -> str:
    return json.dumps(document, indent=2) + "\n"


GENERATED = {MERGE_TEMPLATE: merge_template, **{path: policy for path in POLICIES.values()}}


def stale_files() -> list[Path]:
    return [path for path, build in GENERATED.items() if not path.exists() or path.read_text() != _render(build())]


def write() -> None:
    for path, build in GENERATED.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(_render(build()))


def package(stage: str, out: Path) -> int:
    """Run `chalice package` with the merge template; the template is region independent."""
    stale = stale_files()
    if stale:
        names = ", ".join(os.path.relpath(p, PROJECT) for p in stale)
        print(f"error: {names} out of date; run python -m chalicelib.deploy_template write", file=sys.stderr)
        return 1
    env = {**os.environ, "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"}
    command = [
        sys.executable,
        "-c",
        "import sys; from chalice.cli import main; sys.exit(main())",
        "package",
        "--stage",
        stage,
        "--merge-template",
        str(MERGE_TEMPLATE),
        str(Path(out).resolve()),
    ]
    cache = PROJECT / ".chalice" / "deployments"  # Chalice's one cache of built packages, shared by every run
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".package.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a run copying a package another run is still writing gets a broken zip
        returncode = subprocess.run(command, cwd=PROJECT, env=env).returncode
    if returncode == 0:
        add_bytecode(Path(out) / "deployment.zip")
    return returncode


def add_bytecode(package: Path) -> int:
    """Put every module of the code package in it as bytecode too; the number of modules.

    Lambda runs the code from /var/task, which is read-only: without bytecode in the package, every cold start
    compiles each module it imports from source (a few milliseconds each), and nothing is ever cached. The
    bytecode is made by this Python, whose version is the runtime Chalice packages for, with unchecked hashes:
    the zip does not keep the sources' modification times to the second, which timestamp-checked bytecode
    compares (https://docs.python.org/3/library/py_compile.html#py_compile.PycInvalidationMode). Bytecode that
    came with the sources (a local __pycache__) is left out: it is checked by time, or stale."""
    added = 0
    rebuilt = package.with_suffix(".rebuilt")
    with (
        tempfile.TemporaryDirectory() as scratch,
        zipfile.ZipFile(package) as original,
        zipfile.ZipFile(rebuilt, "w", zipfile.ZIP_DEFLATED) as archive,
    ):
        source, target = Path(scratch) / "source.py", Path(scratch) / "compiled.pyc"
        for entry in original.infolist():
            if entry.filename.endswith(".pyc"):
                continue
            data = original.read(entry)
            archive.writestr(entry, data)
            if not entry.filename.endswith(".py"):
                continue
            source.write_bytes(data)
            try:
                py_compile.compile(
                    str(source),
                    cfile=str(target),
                    dfile=f"/var/task/{entry.filename}",
                    doraise=True,
                    invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
                )
            except py_compile.PyCompileError:
                continue  # not Python this runtime imports (a dependency's template or test data)
            compiled = zipfile.ZipInfo(importlib.util.cache_from_source(entry.filename), date_time=entry.date_time)
            compiled.external_attr = 0o644 << 16
            compiled.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(compiled, target.read_bytes())
            added += 1
    rebuilt.replace(package)
    return added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chalicelib.deploy_template", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("write", help="regenerate .chalice/resources.json and the .chalice/policy-<stage>.json files")
    commands.add_parser("check", help="exit 1 when the generated files are out of date")
    pack = commands.add_parser("package", help="chalice package with the merge template")
    pack.add_argument("--stage", default="dev")
    pack.add_argument("--out", default="build", type=Path)
    args = parser.parse_args(argv)
    if args.command == "write":
        write()
        return 0
    if args.command == "check":
        stale = stale_files()
        for path in stale:
            print(f"{os.path.relpath(path, PROJECT)} is out of date", file=sys.stderr)
        return 1 if stale else 0
    return package(args.stage, args.out)


if __name__ == "__main__":
    sys.exit(main())
