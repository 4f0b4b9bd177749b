"""Customers and the account delivery settings: shapes and the rules of their writes (decisions §2, §7, §9).

A customer is one document: the profile (written by PUT, which keeps the settings) and the settings
(written by PATCH, which keeps the profile). Settings PATCH bodies become a list of fields to set and
fields to remove (`null` clears), so the store can apply them in one conditional update.
"""

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, Strict

from .claim_status import MAX_WINDOW_HOURS
from .common import (
    DatesWithNoDelivery,
    DeliveryDateOverrides,
    DeliveryDays,
    FieldError,
    Identifier,
    IsoDate,
    Shape,
    ShortText,
    ValidationFailed,
    one_line_name,
    parse,
)
from .scaled_pricing import PriceGroupName
from .schedule import TIME_ZONE_RULE, is_time_zone
from .values import SUBSTITUTIONS, SubstitutionPolicy, literal

# ISO 3166-1 alpha-2: the officially assigned codes, plus XK (Kosovo), user-assigned but in common use.
COUNTRY_CODES = frozenset(
    """AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY
    BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM
    FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT
    JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN
    MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT
    PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL
    TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW XK""".split()
)


def _country(value: str) -> str:
    if value not in COUNTRY_CODES:
        raise ValueError("must be an ISO 3166-1 alpha-2 country code in capitals, such as FI or DE")
    return value


def _email(value: str) -> str:
    if len(value) > 254 or not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
        raise ValueError("must be an email address")
    return value


def _customer_name(value: str) -> str:
    return one_line_name(value, 1, 128)


CountryCode = Annotated[str, Strict(), AfterValidator(_country)]
Email = Annotated[str, Strict(), AfterValidator(_email)]
CustomerName = Annotated[str, Strict(), AfterValidator(_customer_name)]


class Address(Shape):
    address1: ShortText
    address2: ShortText | None = None
    zip: Annotated[str, Strict(), Field(min_length=1, max_length=32)]
    city: ShortText
    country: CountryCode


class Contact(Shape):
    name: ShortText
    email: Email


PROFILE_FIELDS = ("name", "company", "address", "contact")
# The substitution policy (decisions §18) is written by both: a PUT without it sets the default again.
PUT_FIELDS = PROFILE_FIELDS + (SUBSTITUTIONS,)
SUBSTITUTIONS_DESCRIPTION = (
    "Whether substitutes may replace lines this customer ordered (decisions §18); ALLOWED unless set"
)
SETTINGS_FIELDS = ("price_group", "delivery_days", "delivery_date_overrides", "dates_with_no_delivery")


class CustomerProfile(Shape):
    """PUT /customers/:id: creates or replaces the profile; the settings are kept."""

    id: Identifier | None = None
    name: CustomerName
    company: ShortText | None = None
    address: Address | None = None
    contact: Contact | None = None
    substitutions: literal(SubstitutionPolicy) | None = Field(
        default=None, description=SUBSTITUTIONS_DESCRIPTION + "; a PUT without it sets ALLOWED"
    )


class CustomerSettingsPatch(Shape):
    """PATCH /customers/:id: any of the settings; null clears one (the substitution policy cannot be null)."""

    price_group: PriceGroupName | None = None
    delivery_days: DeliveryDays | None = None
    delivery_date_overrides: DeliveryDateOverrides | None = None
    dates_with_no_delivery: DatesWithNoDelivery | None = None
    substitutions: literal(SubstitutionPolicy) | None = Field(default=None, description=SUBSTITUTIONS_DESCRIPTION)


class Customer(Shape):
    """The customer as GET /customers/:id shows it; unset optional fields are absent."""

    id: Identifier
    name: str
    price_group: str | None = None
    delivery_days: DeliveryDays | None = None
    delivery_date_overrides: DeliveryDateOverrides | None = None
    dates_with_no_delivery: DatesWithNoDelivery | None = None
    company: str | None = None
    address: Address | None = None
    contact: Contact | None = None
    substitutions: literal(SubstitutionPolicy) = Field(description=SUBSTITUTIONS_DESCRIPTION)


class CustomerList(Shape):
    customers: list[Customer]
    cursor: str | None = None


class DeliveryDates(Shape):
    """GET /customer/delivery-dates: the next dates an order of the given products can be delivered on."""

    dates: list[IsoDate]


class CustomerToken(Shape):
    """A customer token as created: the secret is shown this once."""

    id: str
    token: str
    customer_id: Identifier


def _time_zone(value: str) -> str:
    if not is_time_zone(value):
        raise ValueError(TIME_ZONE_RULE)
    return value


TimeZoneName = Annotated[str, Strict(), Field(max_length=64), AfterValidator(_time_zone)]
StrictBool = Annotated[bool, Strict()]
ClaimWindowHours = Annotated[int, Strict(), Field(ge=0, le=MAX_WINDOW_HOURS)]  # 0: claims only with the receipt


class AccountDeliverySettings(Shape):
    """GET /account/settings/deliveries: the account defaults that apply to every customer."""

    allow_delivery_comments: bool
    allow_product_comments: bool
    delivery_days: DeliveryDays | None = None
    delivery_date_overrides: DeliveryDateOverrides | None = None
    dates_with_no_delivery: DatesWithNoDelivery | None = None
    timezone: str
    claim_window_hours: int = Field(description="How long after its delivery a delivery takes claims (decisions §18)")


class AccountDeliverySettingsPatch(Shape):
    """PATCH /account/settings/deliveries: null clears the three rule fields; timezone and the flags always
    have a value, so null is refused for them."""

    timezone: TimeZoneName | None = None
    allow_delivery_comments: StrictBool | None = None
    allow_product_comments: StrictBool | None = None
    delivery_days: DeliveryDays | None = None
    delivery_date_overrides: DeliveryDateOverrides | None = None
    dates_with_no_delivery: DatesWithNoDelivery | None = None
    claim_window_hours: ClaimWindowHours | None = Field(
        default=None, description="Hours after the note's delivered_at, or the receive, during which claims are taken"
    )


ACCOUNT_VALUED_FIELDS = ("timezone", "allow_delivery_comments", "allow_product_comments", "claim_window_hours")


@dataclass(frozen=True)
class Changes:
    """Fields of a stored document to set and to remove."""

    set: dict
    remove: tuple[str, ...]


def _misplaced(body: Any, messages: dict[str, str]) -> list[FieldError]:
    """Fields that belong to the other write, named with where they do belong."""
    if not isinstance(body, dict):
        return []
    return [FieldError(field, message) for field, message in messages.items() if field in body]


_SETTING_IN_PUT = {f: "is a customer setting; change it with PATCH /customers/:id" for f in SETTINGS_FIELDS}
_PROFILE_IN_PATCH = {
    "id": "cannot be changed",
    **{f: "is part of the profile; replace the profile with PUT /customers/:id" for f in PROFILE_FIELDS},
}


def _parse_without(model: type[BaseModel], body: Any, misplaced: list[FieldError]):
    """Parse body minus the misplaced fields, reporting those together with every other wrong field."""
    if not isinstance(body, dict):
        raise ValidationFailed([FieldError("body", "must be a JSON object")])
    wrong = {error.path for error in misplaced}
    try:
        parsed = parse(model, {k: v for k, v in body.items() if k not in wrong})
    except ValidationFailed as failure:
        raise ValidationFailed(misplaced + failure.errors) from None
    if misplaced:
        raise ValidationFailed(misplaced)
    return parsed


def _changes(patch: BaseModel, not_nullable: tuple[str, ...] = ()) -> Changes:
    given = sorted(patch.model_fields_set)
    errors = [FieldError(f, "cannot be null") for f in not_nullable if f in given and getattr(patch, f) is None]
    if errors:
        raise ValidationFailed(errors)
    values = patch.model_dump(include=set(given), exclude_none=True, by_alias=True)
    return Changes(set={f: values[f] for f in given if f in values}, remove=tuple(f for f in given if f not in values))


def validate_profile(body: Any, customer_id: str) -> Changes:
    """The profile fields to store and the omitted ones to remove (PUT replaces the profile)."""
    profile = _parse_without(CustomerProfile, body, _misplaced(body, _SETTING_IN_PUT))
    if profile.id is not None and profile.id != customer_id:
        raise ValidationFailed([FieldError("id", "must equal the id in the URL")])
    stored = profile.model_dump(exclude_none=True, by_alias=True)
    stored["id"] = customer_id
    return Changes(set=stored, remove=tuple(f for f in PUT_FIELDS if f not in stored))


def validate_settings_patch(body: Any) -> Changes:
    return _changes(_parse_without(CustomerSettingsPatch, body, _misplaced(body, _PROFILE_IN_PATCH)), (SUBSTITUTIONS,))


def validate_account_settings_patch(body: Any) -> Changes:
    return _changes(_parse_without(AccountDeliverySettingsPatch, body, []), ACCOUNT_VALUED_FIELDS)
