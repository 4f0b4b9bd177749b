"""The deposit arithmetic of decisions §15, pure and without pydantic (a cold GET of a delivery runs it).

Counts are whole numbers (products ordered by kg carry no deposit), so everything here is an int.

Words used:
- packaging: the deposits of a product's packaging as the order saw it, `{"vessel": id?, "bundles": [{"type",
  "size", "id"?, "deposit"?}]}` (deposit_packaging makes it from a product document);
- counts: `{deposit id: count}`;
- an entry: `{"id", "name", "price", "count"}`, as `request.deposits`, `request.empties` and a response's
  `empties` show it;
- basis: what a delivery keeps beside its document to count its deposits on every read, `{"packaging": {item
  id: packaging}, "types": {deposit id: {"name", "price"}}}` (types as the order, or a later response, saw them).
"""

from decimal import Decimal

PALLET = "PX"
RESPONSES_FROM = "responses_from"  # in the basis: responses before the latest amendment no longer count (§16)


def _whole(number) -> int:
    return int(Decimal(str(number)))


def deposit_packaging(product: dict) -> dict | None:
    """The deposits of a product's packaging; None when it names none."""
    vessel = (product.get("vessel") or {}).get("deposit")
    bundles = [
        {"type": b["type"], "size": b["size"], **({"id": b["id"]} if b.get("id") else {}), "deposit": b["deposit"]}
        for b in product.get("bundles") or ()
        if b.get("deposit")
    ]
    if vessel is None and not bundles:
        return None
    return {**({"vessel": vessel} if vessel else {}), "bundles": bundles}


def _bundle_deposit(packaging: dict, bundle: dict) -> str | None:
    """The deposit of the product's bundle that an item's bundle (type and size, id when given) is."""
    for known in packaging.get("bundles", ()):
        if known["type"] != bundle.get("type") or Decimal(str(known["size"])) != Decimal(str(bundle.get("size"))):
            continue
        if bundle.get("id") is not None and known.get("id") is not None and known["id"] != bundle["id"]:
            continue
        return known["deposit"]
    return None


def add(counts: dict, deposit: str | None, count: int) -> None:
    if deposit is not None and count:
        counts[deposit] = counts.get(deposit, 0) + count


def item_charges(packaging: dict | None, count, bundle: dict | None, vessel_count) -> dict[str, int]:
    """What one item is charged: vessel deposit x vessel_count; the bundle's deposit x count; for a pallet also
    the deposit of the bundle on it x count x the pallet's size."""
    charges: dict[str, int] = {}
    if not packaging:
        return charges
    add(charges, packaging.get("vessel"), _whole(vessel_count))
    if bundle is not None:
        count = _whole(count)
        add(charges, _bundle_deposit(packaging, bundle), count)
        stacked = bundle.get("pallet_bundle")
        if bundle.get("type") == PALLET and stacked:
            add(charges, _bundle_deposit(packaging, stacked), count * _whole(bundle["size"]))
    return charges


def as_list(counts: dict[str, int]) -> list[dict]:
    """`[{"id", "count"}]` in id order, entries of count 0 left out (an item's `deposits`)."""
    return [{"id": d, "count": counts[d]} for d in sorted(counts) if counts[d]]


def entries(counts: dict[str, int], types: dict[str, dict], keep_zero: bool = False) -> list[dict]:
    """Entries with the name and price of `types`, in id order."""
    return [
        {"id": d, "name": types[d]["name"], "price": types[d]["price"], "count": counts[d]}
        for d in sorted(counts)
        if keep_zero or counts[d]
    ]


def total_of(charged: list[dict], returned: list[dict]) -> int:
    return sum(e["count"] * e["price"] for e in charged) - sum(e["count"] * e["price"] for e in returned)


def counts_of(entry_list: list[dict] | None) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in entry_list or ():
        add(counts, entry["id"], int(entry["count"]))
    return counts


def _same_bundle(said: dict | None, ordered: dict | None) -> dict | None:
    """A response's bundle given by type and size is the bundle the item was ordered in when that matches
    (decisions §15): it takes the ordered bundle's id, so the ordered bundle's deposit wins over the first of
    the product's bundles of that type and size."""
    if not said or not ordered or said.get("id") is not None or ordered.get("id") is None:
        return said
    if said.get("type") != ordered.get("type") or Decimal(str(said.get("size"))) != Decimal(str(ordered.get("size"))):
        return said
    return {**said, "id": ordered["id"]}


def substitutes_of(responses) -> list[dict]:
    """The substitutes the responses state (decisions §18): the latest response that carries `substitutions`."""
    for response in reversed(responses or ()):
        if "substitutions" in response:
            return response["substitutions"]
    return []


def lines_now(delivery: dict) -> list[tuple[str, object, dict | None, object]]:
    """Each request item as it now stands: (id, count, bundle, vessel_count) as the latest response listing it
    states them, otherwise as requested."""
    latest: dict[str, dict] = {}
    for response in delivery.get("responses") or ():
        for item in response.get("items") or ():
            latest[item["id"]] = item
    result = []
    for item in delivery["request"].get("items") or ():
        said = latest.get(item["id"], {})
        count = said.get("count", item["count"])
        bundle = _same_bundle(said["bundle"], item.get("bundle")) if "bundle" in said else item.get("bundle")
        result.append((item["id"], count, bundle, said.get("vessel_count", item.get("vessel_count", count))))
    return result


def _items_now(delivery: dict) -> list[tuple[str, object, dict | None, object]]:
    """What the delivery charges for, each (id, count, bundle, vessel_count): its lines and their substitutes as
    the responses state them; once a delivery note exists, as it says they were delivered (decisions §18)."""
    note = delivery.get("delivery_note")
    if note is not None:
        lines = [(line["id"], line["count"], line["bundle"], line["vessel_count"]) for line in note["items"]]
        substitutes = note["substitutions"]
    else:
        lines, substitutes = lines_now(delivery), substitutes_of(delivery.get("responses"))
    return lines + [(s["id"], s["count"], s["bundle"], s["vessel_count"]) for s in substitutes]


def _charges(delivery: dict, packaging: dict) -> dict[str, int]:
    charged: dict[str, int] = {}
    for item_id, count, bundle, vessels in _items_now(delivery):
        for deposit, n in item_charges(packaging.get(item_id), count, bundle, vessels).items():
            add(charged, deposit, n)
    return charged


def accepted(delivery: dict) -> bool:
    """Whether the supplier has answered the delivery with an ACCEPT (a later response does not undo it)."""
    return any(response.get("type") == "ACCEPT" for response in delivery.get("responses") or ())


def returned_empties(delivery: dict) -> list[dict]:
    """What the supplier has confirmed comes back (decisions §15): the delivery note's empties (decisions §18); else
    the latest response that carries `empties`; once an ACCEPT exists and none does, what the customer announced;
    before any ACCEPT, nothing (a customer's announcement alone never credits its balance)."""
    if delivery.get("delivery_note") is not None:
        return delivery["delivery_note"]["empties"]
    for response in reversed(delivery.get("responses") or ()):
        if "empties" in response:
            return response["empties"]
    return (delivery["request"].get("empties") or []) if accepted(delivery) else []


def known_types(delivery: dict, basis: dict | None) -> dict[str, dict]:
    """The one name and price of each deposit type within the delivery (decisions §15), as the delivery first
    named it: the order's deposits and empties, then each response in turn, the types its items and substitutes
    charge first (valued as the order, or the response, read the products' packaging), then its empties; last the
    delivery note's (decisions §18). A delivery's prices never change later, and one type never has two."""
    types = {d: {"name": t["name"], "price": int(t["price"])} for d, t in ((basis or {}).get("types") or {}).items()}
    packaging = (basis or {}).get("packaging") or {}
    known: dict[str, dict] = {}

    def name(entry_list) -> None:
        for entry in entry_list or ():
            known.setdefault(entry["id"], {"name": entry["name"], "price": int(entry["price"])})

    name(delivery["request"].get("deposits"))
    name(delivery["request"].get("empties"))
    responses = delivery.get("responses") or []
    answered = {**delivery, "delivery_note": None}
    for k, response in enumerate(responses):
        if response.get("items") or response.get("substitutions"):
            charged = _charges({**answered, "responses": responses[: k + 1]}, packaging)
            name([{"id": d, **types[d]} for d in sorted(charged) if d in types])
        name(response.get("empties"))
    note = delivery.get("delivery_note")
    if note is not None:
        name([{"id": d, **types[d]} for d in sorted(_charges(delivery, packaging)) if d in types])
        name(note.get("empties"))
    return known


def delivery_deposits(delivery: dict, basis: dict | None) -> dict | None:
    """The delivery's `deposits` object, `{"charged", "returned", "total"}`; None when both lists are empty."""
    charged = _charges(delivery, (basis or {}).get("packaging") or {})
    returned = counts_of(returned_empties(delivery))
    if delivery.get("type") == "RETURN":  # a return's items give back what they carry, once the supplier accepts
        if accepted(delivery) or delivery.get("delivery_note") is not None:  # a note implies acceptance (§18)
            for deposit, n in charged.items():
                add(returned, deposit, n)
        charged = {}
    stored = ((basis or {}).get("types")) or {}  # a type no list names yet is valued as the order read it
    types = {
        **{d: {"name": t["name"], "price": int(t["price"])} for d, t in stored.items()},
        **known_types(delivery, basis),
    }
    charged_list, returned_list = entries(charged, types), entries(returned, types)
    if not charged_list and not returned_list:
        return None
    return {"charged": charged_list, "returned": returned_list, "total": total_of(charged_list, returned_list)}


def counted_responses(delivery: dict, basis: dict | None) -> list[dict]:
    """The responses that state the order as it now stands: an amendment starts a new version of the order, and
    the responses before it stay as history but state nothing (decisions §16)."""
    return (delivery.get("responses") or [])[(basis or {}).get(RESPONSES_FROM, 0) :]


def with_deposits(delivery: dict, basis: dict | None) -> dict:
    """The delivery as single reads show it: `deposits` after the interface's fields (before `integration`),
    absent when there is nothing to show."""
    shown = {k: v for k, v in delivery.items() if k not in ("deposits", "integration")}
    counted = {**shown, "responses": counted_responses(shown, basis)}
    collected = any("empties" in response for response in counted["responses"])
    deposits = delivery_deposits(counted, basis) if basis or collected else None
    if deposits is not None:
        shown["deposits"] = deposits
    if "integration" in delivery:
        shown["integration"] = delivery["integration"]
    return shown


def balances(types: dict[str, dict], held: dict[str, int]) -> dict:
    """`{"deposits": [{"id", "name", "price", "balance"}], "total"}`: every type in id order, 0 included."""
    listed = [
        {"id": d, "name": types[d]["name"], "price": types[d]["price"], "balance": int(held.get(d, 0))}
        for d in sorted(types)
    ]
    return {"deposits": listed, "total": sum(e["balance"] * e["price"] for e in listed)}
