"""The one check of a problem answer (decisions §3): status, media type, every member and its type."""

PROBLEM_KEYS = {"type", "title", "status", "detail", "instance", "errors"}


def assert_problem(response, status: int, type_: str) -> dict:
    """The answer is an application/problem+json of this status and type, whole: answers its body."""
    assert response.status_code == status, response.body
    assert response.headers["Content-Type"] == "application/problem+json"
    assert set(response.data) == PROBLEM_KEYS
    assert response.data["instance"] == response.headers["X-Request-Id"]
    assert response.data["type"] == type_
    assert response.data["status"] == status
    assert isinstance(response.data["title"], str) and response.data["title"]
    assert isinstance(response.data["detail"], str) and response.data["detail"]
    assert isinstance(response.data["errors"], list)
    for error in response.data["errors"]:
        assert set(error) == {"path", "message"}
    return response.data
