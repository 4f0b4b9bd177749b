"""The summary form of a delivery, apart from the pydantic models of domain/delivery.py so that reading a list of
deliveries imports no pydantic."""


def without_items(delivery: dict) -> dict:
    """The summary form lists show (and the summary item stores): the request without items."""
    if "request" not in delivery:
        return delivery
    request = {k: v for k, v in delivery["request"].items() if k != "items"}
    # `deposits` (decisions §15) is counted on single reads from what the summary keeps: never in the summary;
    # `amendments` (§16) and the `delivery_note` (§18) are kept with the items, `claims` (§18) in an item of their own.
    return {**{k: v for k, v in delivery.items() if k not in SINGLE_READS_ONLY}, "request": request}


SINGLE_READS_ONLY = ("deposits", "amendments", "delivery_note", "claims")
