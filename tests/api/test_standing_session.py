"""The curl session of docs/standing-orders.md, its calls made through the API with a fake clock (on a Monday in
Helsinki): each answer checked in full. tests/test_docs_sessions.py runs the session itself on `make run`."""

import datetime as dt
import json

from tests.conftest import clock_at

from .customer_support import customer_token, make_customer, make_product
from .standing_support import run_placer

MONDAY = dt.datetime(2026, 12, 14, 8, 0, tzinfo=dt.timezone.utc)  # 10:00 in Helsinki
ADDRESS = {"address1": "Aleksanterinkatu 1", "zip": "00100", "city": "Helsinki", "country": "FI"}
EVERY_DAY = {str(n): {"lead_days": 1, "cutoff": "14:00"} for n in range(7)}


def day(n: int) -> str:
    return (dt.date(2026, 12, 14) + dt.timedelta(days=n)).isoformat()


def weekday(n: int) -> int:
    return (dt.date(2026, 12, 14) + dt.timedelta(days=n)).isoweekday() % 7


def show(title, response):
    print(f"# {title}: {response.status_code}\n{json.dumps(response.json_body, ensure_ascii=False)}")


def test_the_documented_session(api, monkeypatch):
    clock_at(monkeypatch, MONDAY)
    settings = {"timezone": "Europe/Helsinki", "delivery_days": EVERY_DAY, "dates_with_no_delivery": [day(9)]}
    assert api.patch("/account/settings/deliveries", settings).status_code == 200
    make_product(api, "lager-keg", name="Lager 20 l keg", price=8900)
    make_product(api, "cider-keg", name="Cider 20 l keg", price=9900, status="OUT_OF_STOCK")
    make_customer(api, "bar-aurora", company="Bar Aurora", address=ADDRESS)
    bar = customer_token(api, "bar-aurora")
    body = {
        "name": "Weekly kegs",
        "items": [{"id": "lager-keg", "count": 2}, {"id": "cider-keg", "count": 1}],
        "weekdays": [weekday(2), weekday(5)],
        "starts_on": day(2),
        "user": {"name": "Aino", "email": "aino@example.com"},
    }
    written = api.put("/customer/standing-orders/weekly-kegs", body, token=bar)
    show("PUT", written)
    assert written.status_code == 200
    assert written.json_body["weekdays"] == [3, 6]  # Wednesday 16 and Saturday 19 December

    skipped = api.put(f"/customer/standing-orders/weekly-kegs/occurrences/{day(12)}", {"skip": True}, token=bar)
    show("skip", skipped)
    assert skipped.json_body == {"date": day(12), "status": "SKIPPED", "place_at": f"{day(9)}T14:00:00+02:00"}
    run_placer()  # what `make run` does within seconds: the first date's placing moment has passed
    listed = api.get(f"/customer/standing-orders/weekly-kegs/occurrences?to={day(16)}", token=bar)
    show("occurrences", listed)
    assert listed.json_body == {
        "occurrences": [
            {
                "date": day(2),
                "status": "PLACED",
                "place_at": f"{day(-1)}T14:00:00+02:00",
                "delivery_ids": [1],
                "left_out": [{"id": "cider-keg", "reason": "OUT_OF_STOCK"}],
            },
            {"date": day(5), "status": "PLANNED", "place_at": f"{day(2)}T14:00:00+02:00"},
            {
                "date": day(9),
                "status": "UNDELIVERABLE",
                "place_at": f"{day(7)}T23:59:00+02:00",
                "errors": [{"path": "scheduled", "message": "is a date on which the supplier delivers none of it"}],
            },
            {"date": day(12), "status": "SKIPPED", "place_at": f"{day(9)}T14:00:00+02:00"},
            {"date": day(16), "status": "PLANNED", "place_at": f"{day(13)}T14:00:00+02:00"},
        ]
    }
    delivery = api.get("/customer/deliveries/1", token=bar)
    show("delivery", delivery)
    assert delivery.json_body["request"]["scheduled"] == {"date": day(2)}
    assert delivery.json_body["request"]["items"] == [
        {
            "id": "lager-keg",
            "name": "Lager 20 l keg",
            "vessel": None,
            "count": 2,
            "bundle": None,
            "vessel_count": 2,
            "price": 8900,
        }
    ]
    assert list(delivery.json_body)[-1] == "standing_order"
    assert delivery.json_body["standing_order"] == {"id": "weekly-kegs", "date": day(2)}

    paused = api.patch("/customers/bar-aurora/standing-orders/weekly-kegs", {"paused": True})
    assert paused.json_body["paused"] is True
    status = api.get(f"/customers/bar-aurora/standing-orders/weekly-kegs/occurrences?from={day(5)}&to={day(5)}")
    assert status.json_body["occurrences"][0]["status"] == "PAUSED"
    assert (
        api.patch("/customers/bar-aurora/standing-orders/weekly-kegs", {"paused": False}).json_body["paused"] is False
    )
