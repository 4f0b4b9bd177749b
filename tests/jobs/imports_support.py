"""Helpers of the import job tests: a catalogue file uploaded as the API takes it."""

CSV = {"Content-Type": "text/csv"}


def upload(api, text: str, token=...) -> str:
    """Upload a CSV catalogue; answers the import's id (202 asserted)."""
    response = api.request("POST", "/imports/products", raw=text.encode(), headers=CSV, token=token)
    assert response.status_code == 202, response.data
    return response.data["id"]
