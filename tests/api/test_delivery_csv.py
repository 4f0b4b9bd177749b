"""GET /deliveries/:id/csv?encoding=utf-8|latin1: the order file of decisions §8."""
import json

import pytest

from tests.conftest import OTHER_TOKEN, SUPPLIER_TOKEN

from .deliveries_helpers import ADDRESS, put_customer, place, shop  # noqa: F401

EXPECTED = (
    "Delivery ID,Type,Customer ID,Company,Cost Center,Address,Zip,City,Country,User name,User email,"
    "Scheduled date,Scheduled time,Message,\n"
    '1,DELIVERY,c1,Café Åke,CC-9,"Main Street 1, Bakgården",00100,Helsinki,FI,Olli Orderer,olli@example.com,'
    '2026-05-06,,"Leave it by the door, ""please"" ☺",\n'
    ",,,,,,,,,,,,,,\n"
    "Delivery ID,Item ID,Item name,Vessel size,Vessel unit,Vessel type,Bundle type,Bundle size,"
    "Pallet bundle type,Pallet bundle size,Count,Vessel count,Price,Price per,Message\n"
    "1,beer-crate,Pale Ale,0.33,l,BO,CT,24,,,2,48,150,vessel,\n"
    "1,beer,Pale Ale,0.33,l,BO,PX,10,CT,24,1,240,150,vessel,\n"
    "1,cheese,Cheddar,,,,,,,,1.5,1.5,1200,kg,\n"
)


@pytest.fixture
def delivery(shop):
    put_customer("c1", company="Café Åke", address={**ADDRESS, "address2": "Bakgården"})
    place(
        shop,
        [
            {"id": "beer", "count": 2, "bundle": {"id": "crate"}},
            {"id": "beer", "count": 1, "bundle": {"id": "pallet"}},
            {"id": "cheese", "count": 1.5},
        ],
        scheduled={"date": "2026-05-06"},
        cost_center="CC-9",
        message='Leave it by the door, "please" ☺',
    )
    return shop


def download(api, path, token=SUPPLIER_TOKEN, accept="*/*"):
    headers = {"Authorization": f"token {token}"}
    if accept is not None:
        headers["Accept"] = accept
    return api.client.http.get(path, headers=headers)


def test_utf8_is_the_default_and_starts_with_a_bom(delivery):
    for path in ("/deliveries/1/csv", "/deliveries/1/csv?encoding=utf-8"):
        response = download(delivery, path)
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
        assert response.headers["Content-Disposition"] == 'attachment; filename="delivery-1.csv"'
        assert response.body == b"\xef\xbb\xbf" + EXPECTED.encode("utf-8")


def test_latin1_replaces_what_it_cannot_hold(delivery):
    response = download(delivery, "/deliveries/1/csv?encoding=latin1", accept="text/csv")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/csv; charset=iso-8859-1"
    assert response.body == EXPECTED.replace("☺", "?").encode("latin-1")
    assert "Café Åke".encode("latin-1") in response.body


def test_an_unknown_encoding_is_refused(delivery):
    response = download(delivery, "/deliveries/1/csv?encoding=ebcdic")
    assert response.status_code == 400
    assert [e["path"] for e in json.loads(response.body)["errors"]] == ["encoding"]


def test_the_file_must_be_accepted(delivery):
    for accept in (None, "application/json"):
        response = download(delivery, "/deliveries/1/csv", accept=accept)
        assert response.status_code == 400
        assert [e["path"] for e in json.loads(response.body)["errors"]] == ["Accept"]


def test_unknown_and_foreign_deliveries_are_404(delivery):
    assert download(delivery, "/deliveries/2/csv").status_code == 404
    assert download(delivery, "/deliveries/1/csv", token=OTHER_TOKEN).status_code == 404
