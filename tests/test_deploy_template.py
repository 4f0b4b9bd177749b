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
FEED_QUEUE_ARN = {"Fn::GetAtt": ["FeedQueue", "Arn"]}
FEED_QUEUE_URL = {"Ref": "FeedQueue"}
STREAM_FAILURES_ARN = {"Fn::GetAtt": ["StreamFailures", "Arn"]}


def event_sources(template, kind: str) -> dict:
    """The event source of type `kind` (DynamoDB, SQS) of each function that has one, by function."""
    found = {}
    for name, function in resources(template, "AWS::Serverless::Function").items():
        for event in function["Properties"].get("Events", {}).values():
            if event["Type"] == kind:
                assert name not in found, name
                found[name] = event["Properties"]
    return found


def stream_sources(template) -> dict:
    return event_sources(template, "DynamoDB")


def test_the_stream_and_the_feed_queue_drive_three_functions_within_the_configured_timeout(template):
    from chalicelib.jobs import budget

    functions = resources(template, "AWS::Serverless::Function")
    sources = stream_sources(template)
    assert sources.keys() == {"TableFeed", "TableStream"}  # the forwarder; events, images and imports
    assert event_sources(template, "SQS").keys() == {"FeedNumbering"}
    handlers = {name: functions[name]["Properties"]["Handler"] for name in ("TableFeed", "FeedNumbering")}
    assert handlers == {
        "TableFeed": "chalicelib.jobs.triggers.forward_changes",
        "FeedNumbering": "chalicelib.jobs.triggers.number_changes",
    }
    for name, source in sources.items():
        assert source["Stream"] == STREAM_ARN, name
        assert source["FunctionResponseTypes"] == ["ReportBatchItemFailures"], name
        assert source["DestinationConfig"] == ON_FAILURE, name
    for name in ("TableFeed", "FeedNumbering", "TableStream", "BackgroundSchedule"):
        assert functions[name]["Properties"]["Timeout"] == budget.LAMBDA_TIMEOUT_SECONDS, name


def test_the_forwarder_never_gives_a_record_up_while_the_stream_holds_it(template):
    """From the stream's start, ten batches of a shard at once (split by partition key: one item's records stay in
    order), no retry or age limit and no bisection (only the queue refusing fails a record, handed over again from
    it), no tumbling window (its final invoke may come without records), the on-failure queue kept."""
    source = stream_sources(template)["TableFeed"]
    assert source == {
        "Stream": STREAM_ARN,
        "BatchSize": 1000,
        "StartingPosition": "TRIM_HORIZON",
        "MaximumBatchingWindowInSeconds": 0,
        "ParallelizationFactor": 10,
        "MaximumRetryAttempts": -1,
        "MaximumRecordAgeInSeconds": -1,
        "BisectBatchOnFunctionError": False,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "DestinationConfig": ON_FAILURE,
    }


def test_the_forwarder_and_the_numbering_know_the_feed_queue_and_no_other_function_does(template):
    """The forwarder sends to FEED_QUEUE_URL; the numbering postpones a failed message there."""
    shared = template["Globals"]["Function"]["Environment"]["Variables"]
    assert "FEED_QUEUE_URL" not in shared
    for name, function in resources(template, "AWS::Serverless::Function").items():
        variables = function["Properties"].get("Environment", {}).get("Variables", {})
        expected = FEED_QUEUE_URL if name in ("TableFeed", "FeedNumbering") else None
        assert variables.get("FEED_QUEUE_URL") == expected, name
    outputs = template["Outputs"]
    assert (outputs["FeedQueueUrl"]["Value"], outputs["FeedQueueArn"]["Value"]) == (FEED_QUEUE_URL, FEED_QUEUE_ARN)
    dead_letters = ({"Ref": "FeedDeadLetters"}, {"Fn::GetAtt": ["FeedDeadLetters", "Arn"]})
    assert (outputs["FeedDeadLettersUrl"]["Value"], outputs["FeedDeadLettersArn"]["Value"]) == dead_letters
    functions = (outputs["TableFeedName"]["Value"], outputs["FeedNumberingName"]["Value"])
    assert functions == ({"Ref": "TableFeed"}, {"Ref": "FeedNumbering"})


def test_the_feed_queue_is_a_high_throughput_fifo_queue_whose_failures_go_to_fifo_dead_letters(template):
    from chalicelib.adapters import feed_queue

    queues = resources(template, "AWS::SQS::Queue")
    assert queues.keys() == {"StreamFailures", "FeedQueue", "FeedDeadLetters"}
    numbering_timeout = template["Resources"]["FeedNumbering"]["Properties"]["Timeout"]
    queue = queues["FeedQueue"]["Properties"]
    assert queue == {
        "FifoQueue": True,
        "ContentBasedDeduplication": False,  # the forwarder's ids: the records a message holds
        "DeduplicationScope": "messageGroup",
        "FifoThroughputLimit": "perMessageGroupId",
        "VisibilityTimeout": 180,
        "MessageRetentionPeriod": 14 * 86400,
        "SqsManagedSseEnabled": True,
        "RedrivePolicy": {
            "deadLetterTargetArn": {"Fn::GetAtt": ["FeedDeadLetters", "Arn"]},
            "maxReceiveCount": feed_queue.MAX_RECEIVES,
        },
    }
    assert queue["VisibilityTimeout"] >= 6 * numbering_timeout
    assert queues["FeedDeadLetters"]["Properties"] == {
        "FifoQueue": True,  # a FIFO queue's dead letters are a FIFO queue
        "MessageRetentionPeriod": 14 * 86400,
        "SqsManagedSseEnabled": True,
    }


def test_make_run_redrives_its_feed_queue_as_the_deploy_template_does(template):
    """One constant for both: make run's queue (localdev/queue.py) gives a message up after as many hand-overs."""
    from moto import mock_aws

    from chalicelib.localdev import queue as local_queue

    deployed = template["Resources"]["FeedQueue"]["Properties"]["RedrivePolicy"]["maxReceiveCount"]
    with mock_aws():
        import boto3

        sqs = boto3.client("sqs", region_name="us-east-1")
        url = local_queue.create_queues(sqs, "feed.fifo")
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert json.loads(attributes["RedrivePolicy"])["maxReceiveCount"] == deployed == 400
    assert (attributes["FifoQueue"], attributes["ContentBasedDeduplication"]) == ("true", "false")


def test_the_numbering_takes_up_to_ten_messages_from_the_feed_queue_with_its_concurrency_reserved(template):
    """Chalice's placeholder queue ARN (config.FEED_QUEUE_PLACEHOLDER) is replaced by the stack's queue; the event
    source starts at most as many numberings as the function has reserved, so none is throttled (and counted as a
    hand-over towards the dead letters)."""
    from chalicelib import config

    source = event_sources(template, "SQS")["FeedNumbering"]
    assert source == {
        "Queue": FEED_QUEUE_ARN,
        "BatchSize": 10,
        "MaximumBatchingWindowInSeconds": 0,
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
        "ScalingConfig": {"MaximumConcurrency": deploy_stream.NUMBERING_CONCURRENCY},
    }
    numbering = template["Resources"]["FeedNumbering"]["Properties"]
    assert numbering["ReservedConcurrentExecutions"] == deploy_stream.NUMBERING_CONCURRENCY == 10
    # Only the numbering reserves concurrency: the API's functions share the rest.
    reserved = [
        name
        for name, function in resources(template, "AWS::Serverless::Function").items()
        if "ReservedConcurrentExecutions" in function["Properties"]
    ]
    assert reserved == ["FeedNumbering"]
    text = json.dumps(template)
    assert config.FEED_QUEUE_PLACEHOLDER not in text and config.TABLE_STREAM_PLACEHOLDER not in text
    assert "000000000000" not in text


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


def alarm_of(template, name) -> tuple:
    """What an alarm watches and when it fires: (namespace, metric, dimensions, statistic, period, periods,
    threshold, comparison, missing data)."""
    p = template["Resources"][name]["Properties"]
    return (
        p["Namespace"],
        p["MetricName"],
        p["Dimensions"],
        p["Statistic"],
        p["Period"],
        p["EvaluationPeriods"],
        p["Threshold"],
        p["ComparisonOperator"],
        p["TreatMissingData"],
    )


def queue_name(queue: str) -> list[dict]:
    return [{"Name": "QueueName", "Value": {"Fn::GetAtt": [queue, "QueueName"]}}]


def function_name(function: str) -> list[dict]:
    return [{"Name": "FunctionName", "Value": {"Ref": function}}]


def test_the_feed_falling_behind_a_message_set_aside_and_a_batch_given_up_on_raise_alarms(template):
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    assert alarms.keys() == {
        "FeedQueueAgeAlarm",
        "FeedDeadLettersAlarm",
        "FeedIteratorAgeAlarm",
        "StreamFailuresAlarm",
        "StreamIteratorAgeAlarm",
    }
    when = ("Maximum", 60, 1)
    above = ("GreaterThanThreshold", "notBreaching")
    # The numbering behind, or an account's messages failing (their pauses let the oldest message age).
    assert alarm_of(template, "FeedQueueAgeAlarm") == (
        "AWS/SQS", "ApproximateAgeOfOldestMessage", queue_name("FeedQueue"), *when, 60, *above
    )  # fmt: skip
    # Any message set aside after MAX_RECEIVES hand-overs: changes not in the feed until it is moved back.
    assert alarm_of(template, "FeedDeadLettersAlarm") == (
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", queue_name("FeedDeadLetters"), *when, 0, *above
    )  # fmt: skip
    # The forwarder behind (the queue refusing, the function failing): its records over a minute old.
    assert alarm_of(template, "FeedIteratorAgeAlarm") == (
        "AWS/Lambda", "IteratorAge", function_name("TableFeed"), *when, 60_000, *above
    )  # fmt: skip
    assert "forwarder" in alarms["FeedIteratorAgeAlarm"]["Properties"]["AlarmDescription"]
    # TableStream's, as before: batches given up on, and its records over a minute old for five minutes.
    assert alarm_of(template, "StreamFailuresAlarm") == (
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", queue_name("StreamFailures"), *when, 0, *above
    )  # fmt: skip
    assert alarm_of(template, "StreamIteratorAgeAlarm") == (
        "AWS/Lambda", "IteratorAge", function_name("TableStream"), "Maximum", 60, 5, 60_000, *above
    )  # fmt: skip
    for name, alarm in alarms.items():
        assert "docs/deploy.md" in alarm["Properties"]["AlarmDescription"], name


def statements(template, role_name=None):
    roles = resources(template, "AWS::IAM::Role")
    assert roles
    for name, role in roles.items():
        if role_name not in (None, name):
            continue
        assert "ManagedPolicyArns" not in role["Properties"]
        for policy in role["Properties"]["Policies"]:
            yield from policy["PolicyDocument"]["Statement"]


def granted(template, function: str) -> set[tuple[str, str]]:
    """(action, resource) pairs the function's role allows."""
    role = resources(template, "AWS::Serverless::Function")[function]["Properties"]["Role"]["Fn::GetAtt"][0]
    return {
        (action, json.dumps(r)) for s in statements(template, role) for action in s["Action"] for r in s["Resource"]
    }


def test_the_stream_functions_may_read_the_stream_and_send_to_the_failures_queue(template):
    for name in ("TableFeed", "TableStream"):
        allowed = granted(template, name)
        for action in ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"):
            assert (action, json.dumps(STREAM_ARN)) in allowed, (name, action)
        assert ("dynamodb:ListStreams", json.dumps({"Fn::Sub": "${Table.Arn}/stream/*"})) in allowed, name
        assert ("sqs:SendMessage", json.dumps(STREAM_FAILURES_ARN)) in allowed, name


def test_the_forwarder_may_send_to_the_feed_queue_and_the_numbering_take_from_it(template):
    assert ("sqs:SendMessage", json.dumps(FEED_QUEUE_ARN)) in granted(template, "TableFeed")
    allowed = granted(template, "FeedNumbering")
    for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"):
        assert (action, json.dumps(FEED_QUEUE_ARN)) in allowed, action


def test_roles_reach_only_the_table_its_indexes_its_stream_and_two_queues(template):
    """Chalice attaches the stage's one policy to every function: it names nothing more than they need together."""
    seen_actions = set()
    queue_grants = set()
    for statement in statements(template):
        assert statement["Effect"] == "Allow"
        actions = statement["Action"]
        seen_actions |= set(actions)
        assert not any("*" in action for action in actions)
        if all(action.startswith("dynamodb:") for action in actions):
            assert all(is_table_resource(r) for r in statement["Resource"]), statement
        elif all(action.startswith("sqs:") for action in actions):
            queue_grants |= {(a, json.dumps(r)) for a in actions for r in statement["Resource"]}
        else:
            # Writing its own logs: only log groups of this stack's functions.
            assert all(action.startswith("logs:") for action in actions), statement
            for resource in statement["Resource"]:
                assert resource["Fn::Sub"].startswith(LOG_GROUPS_OF_STACK)
    feed, failures = json.dumps(FEED_QUEUE_ARN), json.dumps(STREAM_FAILURES_ARN)
    # The feed queue: sent to, taken from; the on-failure queue: sent to; the dead letters: only SQS itself.
    assert queue_grants == {
        ("sqs:SendMessage", feed),
        ("sqs:ReceiveMessage", feed),
        ("sqs:DeleteMessage", feed),
        ("sqs:ChangeMessageVisibility", feed),
        ("sqs:GetQueueAttributes", feed),
        ("sqs:SendMessage", failures),
    }
    assert {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:ConditionCheckItem", "dynamodb:GetRecords"} <= seen_actions
    assert not {"dynamodb:Scan", "dynamodb:DeleteTable", "dynamodb:CreateTable"} & seen_actions


def is_table_resource(resource) -> bool:
    if resource in (TABLE_ARN, STREAM_ARN):
        return True
    return isinstance(resource, dict) and resource.get("Fn::Sub", "").startswith("${Table.Arn}/")


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
