"""Through the Lambda entry point, as API Gateway calls it (decisions §3): path parameters arrive decoded there,
which chalice local and the test client do not do, so these inputs reach the app only in AWS."""

import json
import uuid

import pytest

from tests.conftest import SUPPLIER_TOKEN

from .deliveries_helpers import CUSTOMER_TOKEN, USER, place, put_settings, shop  # noqa: F401


class Context:
    """The parts of the Lambda context the app reads."""

    function_name = "supplier-ordering"
    memory_limit_in_mb = 512
    aws_request_id = "lambda-request"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 30_000


def invoke(
    method: str, resource: str, path_parameters: dict, token: str = SUPPLIER_TOKEN, body=None
) -> tuple[int, dict]:
    """An API Gateway REST proxy event for `resource` with decoded path parameters; (status, JSON body)."""
    from app import app

    path = resource
    for name, value in path_parameters.items():
        path = path.replace("{" + name + "}", value)
    headers = {"Authorization": f"token {token}", "Content-Type": "application/json", "Host": "api.example.com"}
    event = {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {name: [value] for name, value in headers.items()},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": path_parameters or None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": method,
            "path": f"/api{path}",
            "stage": "api",
            "requestId": str(uuid.uuid4()),
            "identity": {"sourceIp": "192.0.2.1"},
        },
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
    }
    response = app(event, Context())
    return response["statusCode"], json.loads(response["body"]) if response.get("body") else None


# Unicode digits: str.isdigit() is True for all, int() takes the last four as 1.
NOT_ASCII_IDS = ["²", "¹", "①", "١", "１", "𝟏", "1²", "٣٤"]


@pytest.mark.parametrize("delivery_id", NOT_ASCII_IDS)
def test_a_delivery_id_in_other_digits_is_404_never_500_nor_delivery_1(shop, delivery_id):
    assert place(shop, [{"id": "beer", "count": 1}])["id"] == 1

    status, body = invoke("GET", "/deliveries/{delivery_id}", {"delivery_id": delivery_id})
    assert (status, body["type"], body["detail"]) == (404, "not-found", f"delivery {delivery_id} does not exist")

    status, body = invoke(
        "POST", "/deliveries/{delivery_id}/responses", {"delivery_id": delivery_id}, body={"type": "ACCEPT"}
    )
    assert (status, body["type"]) == (404, "not-found")

    resource = "/customer/deliveries/{delivery_id}/cancel"
    status, body = invoke("POST", resource, {"delivery_id": delivery_id}, token=CUSTOMER_TOKEN, body={})
    assert (status, body["type"]) == (404, "not-found")
    assert shop.get("/deliveries/1").data["status"] == "REQUESTED"


def test_ascii_digits_read_the_delivery(shop):
    place(shop, [{"id": "beer", "count": 1}])
    status, body = invoke("GET", "/deliveries/{delivery_id}", {"delivery_id": "1"})
    assert (status, body["id"]) == (200, 1)


@pytest.mark.parametrize("product_id", ["bé", "①", "１", "a b", "x" * 129])
def test_a_product_id_outside_the_id_rule_is_404(shop, product_id):
    status, body = invoke("GET", "/products/{product_id}", {"product_id": product_id})
    assert (status, body["type"]) == (404, "not-found")


@pytest.mark.parametrize("date", ["0001-01-01", "1899-12-31", "3000-01-01", "9999-12-31"])
def test_a_scheduled_date_outside_the_bounded_range_is_400(shop, date):
    put_settings(delivery_days={str(d): {"lead_days": 1} for d in range(7)})
    order = {"items": [{"id": "beer", "count": 1}], "user": USER, "scheduled": {"date": date}}
    status, body = invoke("POST", "/customer/deliveries", {}, token=CUSTOMER_TOKEN, body=order)
    assert status == 400
    assert body["errors"] == [{"path": "scheduled.date", "message": "must be between 1900-01-01 and 2999-12-31"}]


def test_the_first_and_last_dates_of_the_range_are_checked_like_any_other(shop):
    put_settings(delivery_days={str(d): {"lead_days": 1} for d in range(7)})

    def order(date):
        body = {"items": [{"id": "beer", "count": 1}], "user": USER, "scheduled": {"date": date}}
        return invoke("POST", "/customer/deliveries", {}, token=CUSTOMER_TOKEN, body=body)

    status, body = order("1900-01-01")  # in the past
    assert (status, body["errors"]) == (
        400,
        [{"path": "scheduled.date", "message": "is not a delivery date for every product ordered"}],
    )
    status, body = order("2999-12-31")
    assert (status, body["deliveries"][0]["request"]["scheduled"]) == (200, {"date": "2999-12-31"})


def test_a_custom_properties_array_over_its_limit_is_400(shop):
    product = {
        "status": "ACTIVE",
        "category": "drinks",
        "name": "Notes",
        "custom_properties": {"notes": ["x" * 2000] * 250},
    }
    status, body = invoke("PUT", "/products/{product_id}", {"product_id": "x"}, body=product)
    assert status == 400
    assert body["errors"] == [
        {
            "path": "custom_properties.notes",
            "message": "must be a string (at most 2,000 characters), a number, a boolean "
            "or an array of at most 100 such strings",
        }
    ]
