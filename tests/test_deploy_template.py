"""`chalice package` with the merge template: a template cfn-lint accepts, with the table the code creates,
least-privilege roles and the functions' settings. Runs the real packaging into a temporary directory."""

import importlib.util
import json
import os
import subprocess
import sys
import zipfile

import pytest

from chalicelib import deploy_stream, deploy_template
from chalicelib.store import table

TABLE_ARN = {"Fn::GetAtt": ["Table", "Arn"]}
STREAM_ARN = {"Fn::GetAtt": ["Table", "StreamArn"]}
# One worker runs this module under `make test` (--dist loadgroup), so the package is built once, not once per worker.
pytestmark = pytest.mark.xdist_group("chalice-package")
LOG_GROUPS_OF_STACK = (
    "arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/aws/lambda/${AWS::StackName}-"
)


@pytest.fixture(scope="module")
def packaged(tmp_path_factory):
    out = tmp_path_factory.mktemp("package")
    assert deploy_template.main(["package", "--stage", "dev", "--out", str(out)]) == 0
    return out / "sam.json"


@pytest.fixture(scope="module")
def template(packaged):
    return json.loads(packaged.read_text())


def resources(template, kind):
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def test_committed_files_are_what_the_code_generates():
    assert deploy_template.stale_files() == []


def test_cfn_lint_accepts_the_packaged_template(packaged):
    lint = "import sys; from cfnlint.runner import main; sys.exit(main())"
    result = subprocess.run([sys.executable, "-c", lint, str(packaged)], capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_table_has_the_keys_and_indexes_the_code_creates(template):
    created = table.table_definition("any")
    declared = template["Resources"]["Table"]
    assert declared["Type"] == "AWS::DynamoDB::Table"
    properties = declared["Properties"]
    for key in ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes"):
        assert properties[key] == created[key]
    assert properties["BillingMode"] == "PAY_PER_REQUEST"
    assert properties["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert properties["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    # A change is a record whose new image's mark its old image has not (store/feed_marks.changes_of).
    assert properties["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert "TableName" not in properties  # one table per stack, named by CloudFormation
    assert (declared["DeletionPolicy"], declared["UpdateReplacePolicy"]) == ("Retain", "Retain")


def test_every_function_has_enough_memory_and_the_environment(template):
    functions = resources(template, "AWS::Serverless::Function")
    assert "APIHandler" in functions
    shared = template["Globals"]["Function"]["Environment"]["Variables"]
    for name, function in functions.items():
        properties = function["Properties"]
        assert properties["MemorySize"] >= 512, name
        # SAM merges Globals into each function; a function's own value would win.
        variables = {**shared, **properties.get("Environment", {}).get("Variables", {})}
        assert variables["TABLE_NAME"] == {"Ref": "Table"}, name
        assert variables["SIGNING_SECRET"] == {"Ref": "SigningSecret"}, name
    secret = template["Parameters"]["SigningSecret"]
    assert secret["NoEcho"] is True and "Default" not in secret


def test_every_function_runs_on_arm64_with_the_memory_for_a_short_cold_start(template):
    """bench/README.md "Deployed cold start": Graviton's price performance, and CPU grows with memory."""
    for name, function in resources(template, "AWS::Serverless::Function").items():
        properties = function["Properties"]
        assert properties["Architectures"] == ["arm64"], name
        assert properties["MemorySize"] == 1024, name


ON_FAILURE = {"OnFailure": {"Type": "SQS", "Destination": {"Fn::GetAtt": ["StreamFailures", "Arn"]}}}


def stream_sources(template) -> dict:
    """The stream event source of each function that has one, by function."""
    found = {}
    for name, function in resources(template, "AWS::Serverless::Function").items():
        for event in function["Properties"].get("Events", {}).values():
            if event["Type"] == "DynamoDB":
                assert name not in found, name
                found[name] = event["Properties"]
    return found


def test_two_functions_read_the_table_stream_within_the_configured_timeout(template):
    from chalicelib.jobs import budget

    functions = resources(template, "AWS::Serverless::Function")
    sources = stream_sources(template)
    assert sources.keys() == {"TableFeed", "TableStream"}  # the numbering; events, images and imports
    for name, source in sources.items():
        assert source["Stream"] == STREAM_ARN, name
        assert source["FunctionResponseTypes"] == ["ReportBatchItemFailures"], name
        assert source["DestinationConfig"] == ON_FAILURE, name
    for name in ("TableFeed", "TableStream", "BackgroundSchedule"):
        assert functions[name]["Properties"]["Timeout"] == budget.LAMBDA_TIMEOUT_SECONDS, name


def test_the_numbering_takes_a_shard_in_order_and_retries_its_failed_accounts_for_six_hours(template):
    """One batch of a shard at a time (the head keeps a position per shard), each batch with its shardId (only the
    tumbling window gives it), no retry limit but the record's age, no bisection: a failure is an account's, its
    records handed over again whole."""
    source = stream_sources(template)["TableFeed"]
    assert source == {
        "Stream": STREAM_ARN,
        "BatchSize": 1000,
        "StartingPosition": "TRIM_HORIZON",
        "MaximumBatchingWindowInSeconds": 0,
        "ParallelizationFactor": 1,
        "TumblingWindowInSeconds": 900,
        "MaximumRetryAttempts": -1,
        "MaximumRecordAgeInSeconds": 21600,
        "BisectBatchOnFunctionError": False,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "DestinationConfig": ON_FAILURE,
    }


def test_a_batch_handed_over_again_as_late_as_the_numbering_source_allows_is_numbered_once(ddb):
    """The numbering's source hands a record over again until it is FEED_RECORD_AGE_SECONDS old: the head still
    knows the shard's position then, though the account's changes in another shard have moved its clock on."""
    import datetime as dt

    from chalicelib.domain.feed import Change, ChangeType
    from chalicelib.store import feed, feed_marks, feed_numbering

    age = deploy_stream.FEED_RECORD_AGE_SECONDS
    assert age == 21600
    start = dt.datetime(2026, 5, 4, 9, 30, tzinfo=dt.timezone.utc)

    def record(sequence_number: str, at: dt.datetime, product_id: str):
        said = [feed_marks.said(Change(ChangeType.PRODUCT_UPDATED, product_id), at)]
        return feed_numbering.Marked(sequence_number, int(at.timestamp()), said)

    first = record("100", start, "a")
    assert feed_numbering.number("acme", "shard-a", [first]).count == 1
    latest = start + dt.timedelta(seconds=age)
    assert feed_numbering.number("acme", "shard-b", [record("100", latest, "b")]).count == 1
    again = feed_numbering.number("acme", "shard-a", [first])
    assert (again.count, again.done) == (0, True)
    read = feed.read("acme", 0, 10, latest)
    assert [(entry["sequence"], entry["id"]) for entry in read.entries] == [(1, "a"), (2, "b")]


def test_a_failing_stream_batch_is_retried_a_few_times_bisected_then_sent_to_a_queue(template):
    """Issue 34: without a retry limit a poison batch held its shard for 24 hours. Up to 10 batches of a shard at
    once, by partition key."""
    source = stream_sources(template)["TableStream"]
    assert source == {
        "Stream": STREAM_ARN,
        "BatchSize": 100,
        "StartingPosition": "LATEST",
        "MaximumBatchingWindowInSeconds": 0,
        "ParallelizationFactor": 10,
        "MaximumRetryAttempts": 5,
        "MaximumRecordAgeInSeconds": 3600,  # bisected halves are not retries: bounded by age too
        "BisectBatchOnFunctionError": True,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "DestinationConfig": ON_FAILURE,
    }
    # The safety net: the schedule sends the events and takes the images and imports a given-up batch held.
    assert "BackgroundSchedule" in resources(template, "AWS::Serverless::Function")


def test_a_batch_given_up_on_and_a_stream_function_falling_behind_raise_alarms(template):
    assert resources(template, "AWS::SQS::Queue").keys() == {"StreamFailures"}
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    assert alarms.keys() == {"StreamFailuresAlarm", "FeedIteratorAgeAlarm", "StreamIteratorAgeAlarm"}
    failures = alarms["StreamFailuresAlarm"]["Properties"]
    assert failures["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": ["StreamFailures", "QueueName"]}}]
    assert (failures["Threshold"], failures["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    # A function falling behind (before a batch is given up on) is seen too: its records over a minute old.
    for alarm, function in (("FeedIteratorAgeAlarm", "TableFeed"), ("StreamIteratorAgeAlarm", "TableStream")):
        behind = alarms[alarm]["Properties"]
        assert (behind["Namespace"], behind["MetricName"]) == ("AWS/Lambda", "IteratorAge"), alarm
        assert behind["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": function}}], alarm
        assert (behind["Threshold"], behind["ComparisonOperator"]) == (60_000, "GreaterThanThreshold"), alarm


def statements(template, role_name=None):
    roles = resources(template, "AWS::IAM::Role")
    assert roles
    for name, role in roles.items():
        if role_name not in (None, name):
            continue
        assert "ManagedPolicyArns" not in role["Properties"]
        for policy in role["Properties"]["Policies"]:
            yield from policy["PolicyDocument"]["Statement"]


def test_both_stream_functions_may_read_the_stream_and_send_to_the_failures_queue(template):
    functions = resources(template, "AWS::Serverless::Function")
    for name in ("TableFeed", "TableStream"):
        role = functions[name]["Properties"]["Role"]["Fn::GetAtt"][0]
        granted = {
            (action, json.dumps(r)) for s in statements(template, role) for action in s["Action"] for r in s["Resource"]
        }
        for action in ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"):
            assert (action, json.dumps(STREAM_ARN)) in granted, (name, action)
        assert ("dynamodb:ListStreams", json.dumps({"Fn::Sub": "${Table.Arn}/stream/*"})) in granted, name
        assert ("sqs:SendMessage", json.dumps({"Fn::GetAtt": ["StreamFailures", "Arn"]})) in granted, name


def is_table_resource(resource) -> bool:
    if resource in (TABLE_ARN, STREAM_ARN):
        return True
    return isinstance(resource, dict) and resource.get("Fn::Sub", "").startswith("${Table.Arn}/")


def test_roles_reach_only_the_table_its_indexes_and_stream(template):
    seen_actions = set()
    for statement in statements(template):
        assert statement["Effect"] == "Allow"
        actions = statement["Action"]
        seen_actions |= set(actions)
        assert not any("*" in action for action in actions)
        if all(action.startswith("dynamodb:") for action in actions):
            assert all(is_table_resource(r) for r in statement["Resource"]), statement
        elif actions == ["sqs:SendMessage"]:  # the stream's on-failure queue, nothing else
            assert statement["Resource"] == [{"Fn::GetAtt": ["StreamFailures", "Arn"]}]
        else:
            # Writing its own logs: only log groups of this stack's functions.
            assert all(action.startswith("logs:") for action in actions), statement
            for resource in statement["Resource"]:
                assert resource["Fn::Sub"].startswith(LOG_GROUPS_OF_STACK)
    assert {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:ConditionCheckItem", "dynamodb:GetRecords"} <= seen_actions
    assert not {"dynamodb:Scan", "dynamodb:DeleteTable", "dynamodb:CreateTable"} & seen_actions


def test_api_gateway_own_errors_are_problem_json(template):
    definition = template["Resources"]["RestAPI"]["Properties"]["DefinitionBody"]
    responses = definition["x-amazon-apigateway-gateway-responses"]
    assert {"MISSING_AUTHENTICATION_TOKEN", "DEFAULT_4XX", "DEFAULT_5XX"} <= set(responses)
    assert responses["MISSING_AUTHENTICATION_TOKEN"]["statusCode"] == "404"
    for name, response in responses.items():
        assert response["responseParameters"]["gatewayresponse.header.Content-Type"] == "'application/problem+json'"
        rendered = (
            response["responseTemplates"]["application/json"]
            .replace("$context.error.messageString", '"Too Many Requests"')
            .replace("$context.error.responseType", "THROTTLED")
            .replace("$context.requestId", "r-1")
        )
        body = json.loads(rendered)
        assert {"type", "title", "detail", "errors"} <= set(body), name
        if "statusCode" in response:
            assert body["status"] == int(response["statusCode"])
    not_found = responses["MISSING_AUTHENTICATION_TOKEN"]["responseTemplates"]["application/json"]
    body = json.loads(not_found.replace("$context.requestId", "r"))
    assert (body["type"], body["status"], body["detail"]) == ("not-found", 404, "no route matches this path")


def test_package_refuses_stale_generated_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(deploy_template, "GENERATED", {tmp_path / "policy.json": deploy_template.policy})
    assert deploy_template.main(["package", "--out", str(tmp_path / "out")]) == 1
    assert "out of date" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


COMPILED_FROM_SOURCE = """
import importlib._bootstrap_external as external, json, sys
compiled = []
original = external.SourceLoader.source_to_code
def counting(self, data, path, *, _optimize=-1):
    compiled.append(path)
    return original(self, data, path, _optimize=_optimize)
external.SourceLoader.source_to_code = counting
sys.path.insert(0, sys.argv[1])
import app
print(json.dumps([path for path in compiled if path.startswith(sys.argv[1])]))
"""


def test_the_code_package_holds_bytecode_so_a_cold_start_compiles_nothing_of_it(packaged, tmp_path):
    """/var/task is read-only: without bytecode in the package each cold start compiles every module it imports."""
    archive = zipfile.ZipFile(packaged.parent / "deployment.zip")
    names = set(archive.namelist())
    ours = [n for n in names if n.endswith(".py") and (n == "app.py" or n.startswith("chalicelib/"))]
    assert len(ours) > 50
    for name in ours:
        cached = importlib.util.cache_from_source(name)
        assert cached in names, name
        flags = int.from_bytes(archive.read(cached)[4:8], "little")
        assert flags == 0b01, (name, flags)  # hash-based, not checked against the source: zip times are not kept
    archive.extractall(tmp_path)
    env = {
        **os.environ,
        "PYTHONDONTWRITEBYTECODE": "1",
        "TABLE_NAME": "t",
        "SIGNING_SECRET": "s",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    result = subprocess.run(
        [sys.executable, "-c", COMPILED_FROM_SOURCE, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_the_one_minute_schedule_places_standing_orders(template):
    """Decisions §17: a placing moment is acted on within a minute in AWS. The schedule runs every phase of
    jobs/handlers.py, standing orders among them."""
    from chalicelib.jobs import budget, handlers, standing_order_turns

    events = resources(template, "AWS::Serverless::Function")["BackgroundSchedule"]["Properties"]["Events"]
    schedules = [event["Properties"]["Schedule"] for event in events.values() if event["Type"] == "Schedule"]
    assert schedules == ["rate(1 minute)"]
    assert standing_order_turns.PHASE in handlers.PHASES
    assert standing_order_turns.PHASE.window(budget.LAMBDA_TIMEOUT_SECONDS) > 0
