"""The curl session of docs/standing-orders.md, run through the API with a fake clock: a Tuesday-and-Friday
standing order, its next occurrences, a skipped holiday week and the placed delivery."""

import datetime as dt
import json

from tests.conftest import clock_at

from .customer_support import customer_token, make_customer, make_product
from .standing_support import run_placer

MONDAY = dt.datetime(2026, 12, 14, 8, 0, tzinfo=dt.timezone.utc)  # 10:00 in Helsinki
ADDRESS = {"address1": "Aleksanterinkatu 1", "zip": "00100", "city": "Helsinki", "country": "FI"}
BODY = {
    "name": "Weekly kegs",
    "items": [{"id": "lager-keg", "count": 2}],
    "weekdays": [2, 5],
    "starts_on": "2026-12-15",
    "user": {"name": "Aino", "email": "aino@example.com"},
}


def show(title, response):
    print(f"# {title}: {response.status_code}\n{json.dumps(response.json_body, ensure_ascii=False)}")


def test_the_documented_session(api, monkeypatch):
    clock_at(monkeypatch, MONDAY)
    api.patch(
        "/account/settings/deliveries",
        {
            "timezone": "Europe/Helsinki",
            "delivery_days": {"2": {"lead_days": 1, "cutoff": "14:00"}, "5": {"lead_days": 1, "cutoff": "14:00"}},
        },
    )
    make_product(api, "lager-keg", name="Lager 20 l keg", price=8900)
    make_customer(api, "bar-aurora", company="Bar Aurora", address=ADDRESS)
    bar = customer_token(api, "bar-aurora")

    written = api.put("/customer/standing-orders/weekly-kegs", BODY, token=bar)
    show("PUT", written)
    assert written.status_code == 200
    listed = api.get("/customer/standing-orders/weekly-kegs/occurrences?to=2027-01-08", token=bar)
    show("occurrences", listed)
    assert [(o["date"], o["status"], o["place_at"]) for o in listed.json_body["occurrences"][:2]] == [
        ("2026-12-15", "PLANNED", "2026-12-12T14:00:00+02:00"),
        ("2026-12-18", "PLANNED", "2026-12-15T14:00:00+02:00"),
    ]
    for day in ("2026-12-29", "2027-01-01"):
        skipped = api.put(f"/customer/standing-orders/weekly-kegs/occurrences/{day}", {"skip": True}, token=bar)
        show(f"skip {day}", skipped)
        assert skipped.json_body["status"] == "SKIPPED"

    run_placer()  # what `make run` does within seconds: 2026-12-15's placing moment has passed
    after = api.get("/customer/standing-orders/weekly-kegs/occurrences?to=2027-01-08", token=bar)
    show("occurrences after placing", after)
    assert [o["status"] for o in after.json_body["occurrences"]] == [
        "PLACED",
        "PLANNED",
        "PLANNED",
        "PLANNED",
        "SKIPPED",
        "SKIPPED",
        "PLANNED",
        "PLANNED",
    ]
    delivery = api.get("/customer/deliveries/1", token=bar)
    show("delivery", delivery)
    assert delivery.json_body["request"]["scheduled"] == {"date": "2026-12-15"}
    assert delivery.json_body["standing_order"] == {"id": "weekly-kegs", "date": "2026-12-15"}
