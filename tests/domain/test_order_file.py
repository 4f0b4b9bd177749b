"""The order file's formula guard (decisions §8): text cells only; ids and numbers as they are."""

from decimal import Decimal

from chalicelib.domain.order_file import order_file, order_file_text

ITEM = {"id": "beer", "name": "Beer", "count": 2, "vessel_count": 2, "price": 150}


def delivery(**request) -> dict:
    return {"id": 1, "type": "DELIVERY", "request": {"customer_id": "c1", "items": [ITEM], **request}}


def rows(text: str) -> list[str]:
    return text.split("\n")


def test_a_negative_number_is_never_quoted():
    item = {**ITEM, "count": Decimal("-1.5"), "vessel_count": -3, "price": -150, "vessel": {"size": Decimal("-0.5")}}
    line = rows(order_file_text({**delivery(), "request": {"customer_id": "c1", "items": [item]}}))[4]
    assert line == "1,beer,Beer,-0.5,,,,,,,-1.5,-3,-150,vessel,"


def test_a_text_that_looks_like_a_negative_number_is_quoted():
    assert rows(order_file_text(delivery(company="-1", message="+1")))[1] == "1,DELIVERY,c1,'-1,,,,,,,,,,'+1,"


def test_a_text_beginning_elsewhere_is_as_it_was():
    line = rows(order_file_text(delivery(company="a=1+2", message=" =1", cost_center="1-2")))[1]
    assert line == "1,DELIVERY,c1,a=1+2,1-2,,,,,,,,, =1,"


def test_every_start_a_spreadsheet_runs_is_guarded_in_both_encodings():
    for start in ("=", "+", "-", "@", "\t", "\r"):
        for encoding in ("utf-8", "latin1"):
            text = order_file(delivery(message=f"{start}x"), encoding).decode(encoding).lstrip("\ufeff")
            cell = rows(text)[1].split(",")[-2]
            assert cell.strip('"') == f"'{start}x"
