"""The integration states of a delivery (decisions §14) as a StrEnum, and how supplier reads show the state.
Pure and free of pydantic: routes read it on a cold start; the shapes in integration.py derive their `Literal`s
(and so the OpenAPI enums) from it."""

from enum import StrEnum
from json.encoder import encode_basestring  # what json.dumps(ensure_ascii=False) does to a string

from .field_order import INTEGRATION
from .rendering import json_text


class IntegrationStatus(StrEnum):
    PENDING = "PENDING"
    IMPORTED = "IMPORTED"
    FAILED = "FAILED"


PENDING, IMPORTED, FAILED = IntegrationStatus
STATUSES = tuple(IntegrationStatus)

REQUESTED_STATE = {"status": PENDING.value}  # a new delivery: nothing set yet, so no `updated`


def state_of(stored: dict | None) -> dict:
    """The state a delivery shows. Deliveries stored before integration states existed have none: they read as
    a new delivery does, PENDING (the `migrate-integration` command stores it, counted and listed)."""
    return dict(stored) if stored is not None else dict(REQUESTED_STATE)


def supplier_view(delivery: dict, stored: dict | None) -> dict:
    """The delivery as supplier reads show it: with its integration state, after the interface's fields."""
    return {**delivery, "integration": state_of(stored)}


# Each field of the state as `"name":` once: supplier_text runs for every item of every supplier list page.
_NAMED = tuple((name, json_text(name) + ":") for name in INTEGRATION.fields)


def state_text(stored: dict | None) -> str:
    """The state as supplier reads show it, as JSON text; what the store keeps, so a list page appends it as it is.
    The state holds strings only, so each is rendered with the string rule json_text uses (json.dumps,
    ensure_ascii=False) without its recursion (tests/domain/test_integration_status.py holds the two equal)."""
    state = stored if stored is not None else REQUESTED_STATE
    return "{" + ",".join(named + encode_basestring(state[name]) for name, named in _NAMED if name in state) + "}"


_STANDING_ORDER = ',"standing_order":'  # no string holds it: a quote inside one is escaped


def supplier_text(delivery_text: str, state: str) -> str:
    """supplier_view of a delivery kept as its JSON text (a list page's item, store/rendered.py), with its state's
    text (state_text), in field order: the state goes before `standing_order`, the last field where there is one
    (decisions §17), else before the closing brace, so neither text is parsed."""
    at = delivery_text.rfind(_STANDING_ORDER)
    end = at if at != -1 else len(delivery_text) - 1
    return f'{delivery_text[:end]},"integration":{state}{delivery_text[end:]}'
