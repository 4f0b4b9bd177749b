"""The product and its packaging: shape (pydantic) plus the rules that span fields (decisions §5-6)."""

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, Strict, create_model, field_validator
from pydantic.fields import FieldInfo

from . import limits
from .common import (
    PALLET,
    BundleCode,
    Cents,
    DatesWithNoDelivery,
    DeliveryDateOverrides,
    DeliveryDays,
    FieldError,
    Identifier,
    Number,
    PackagingCode,
    PositiveNumber,
    Shape,
    ShortText,
    ValidationFailed,
    absolute_http_url,
    dump,
    is_whole,
    one_line_name,
    parse,
)
from .deposit_types import DepositId
from .pricing import smallest_positive_from
from .scaled_pricing import ScaledPricing, level_size_errors, pricing_errors
from .values import DEFAULT_ORDER_BY, OrderBy, PricePer, ProductStatus, literal

MAX_CUSTOM_PROPERTIES = limits.CUSTOM_PROPERTIES


class Vessel(Shape):
    id: ShortText | None = None
    size: PositiveNumber
    unit: Literal["l", "dl", "cl", "ml", "kg", "g", "quantity"]
    type: PackagingCode | None = None
    deposit: DepositId | None = Field(
        default=None, description="The id of the deposit type one vessel carries (decisions §15)"
    )


class PalletBundle(Shape):
    id: ShortText | None = None
    type: PackagingCode
    size: PositiveNumber


class Bundle(Shape):
    id: ShortText | None = None
    id_override: ShortText | None = None
    type: BundleCode
    size: PositiveNumber
    unit: Literal["kg"] | None = None
    pallet_bundle: PalletBundle | None = None
    deposit: DepositId | None = Field(
        default=None,
        description="The id of the deposit type one bundle (a pallet: the pallet itself) carries (decisions §15)",
    )


# A bundle as a delivery item shows it: the product's bundle without its id_override (that is the item's id).
# Derived from Bundle so the two cannot drift.
ItemBundle = create_model(
    "ItemBundle",
    __base__=Shape,
    __doc__="A bundle as a delivery item shows it (the product's bundle without its id_override).",
    **{
        name: (field.annotation, field)
        for name, field in Bundle.model_fields.items()
        if name not in ("id_override", "deposit")
    },
)


def bundle_size_errors(bundle: Bundle | ItemBundle, path: str) -> list[FieldError]:
    """Pallets and bundles without a unit hold whole numbers of what they bundle."""
    if (bundle.type == PALLET or bundle.unit is None) and not is_whole(bundle.size):
        return [FieldError(f"{path}.size", "must be a whole number for pallets and bundles without unit")]
    return []


def pallet_bundle_errors(bundle: Bundle | ItemBundle, path: str, required: bool) -> list[FieldError]:
    """Only a pallet (PX) names the bundle it stacks; `required` when nothing else can choose it."""
    if bundle.type == PALLET and bundle.pallet_bundle is None and required:
        return [FieldError(f"{path}.pallet_bundle", "is required when type is PX")]
    if bundle.type != PALLET and bundle.pallet_bundle is not None:
        return [FieldError(f"{path}.pallet_bundle", "is only allowed when type is PX")]
    return []


class Image(Shape):
    url: Annotated[str, Strict(), Field(max_length=2048), AfterValidator(absolute_http_url)]
    etag: ShortText | None = None
    last_modified: ShortText | None = None


def _name(value: str) -> str:
    return one_line_name(value, 3, 64)


CustomString = Annotated[str, Strict(), Field(max_length=limits.CUSTOM_STRING_LENGTH)]
CustomValue = (
    CustomString
    | Annotated[bool, Strict()]
    | Number
    | Annotated[list[CustomString], Field(max_length=limits.CUSTOM_ARRAY_LENGTH)]
)


class Product(Shape):
    id: Identifier | None = None
    status: literal(ProductStatus)
    category: Identifier
    name: Annotated[str, Strict()]
    order_by: literal(OrderBy) | None = None
    vessel: Vessel | None = None
    bundles: Annotated[list[Bundle], Field(max_length=50)] | None = None
    price: Cents | None = None
    price_per: literal(PricePer) | None = None
    min_order_count: PositiveNumber | None = None
    delivery_days: DeliveryDays | None = None
    delivery_date_overrides: DeliveryDateOverrides | None = None
    dates_with_no_delivery: DatesWithNoDelivery | None = None
    pricing: ScaledPricing | None = None
    gtin: ShortText | None = None
    custom_properties: (
        dict[Annotated[str, Field(min_length=1, max_length=limits.CUSTOM_PROPERTY_KEY_LENGTH)], Any] | None
    ) = None
    image: Image | None = None

    _name = field_validator("name")(classmethod(lambda cls, v: _name(v)))

    @field_validator("custom_properties")
    @classmethod
    def _custom_properties(cls, value):
        if value is not None and len(value) > MAX_CUSTOM_PROPERTIES:
            raise ValueError(f"must have at most {MAX_CUSTOM_PROPERTIES} properties")
        return value


class NewProduct(Product):
    """POST /products body, for the OpenAPI document: the id comes in the body, so it is required."""

    id: Identifier


# The PATCH body, for the OpenAPI document: any product field but id, each optional (null removes it). Derived
# from Product so the two cannot drift; PATCH itself validates the merged product as a whole.
ProductPatch = create_model(
    "ProductPatch",
    __base__=Shape,
    **{
        name: (field.annotation | None, FieldInfo.merge_field_infos(field, default=None))
        for name, field in Product.model_fields.items()
        if name != "id"
    },
)


class ProductList(Shape):
    products: list[Product]
    cursor: str | None = None


class _CustomValue(Shape):
    value: CustomValue


def _custom_property_errors(properties: dict) -> list[FieldError]:
    errors = []
    for key, value in properties.items():
        try:
            parse(_CustomValue, {"value": value})
        except ValidationFailed:
            errors.append(
                FieldError(
                    f"custom_properties.{key}",
                    f"must be a string (at most {limits.CUSTOM_STRING_LENGTH:,} characters), a number, a boolean"
                    f" or an array of at most {limits.CUSTOM_ARRAY_LENGTH} such strings",
                )
            )
    if not errors:
        errors += limits.size_errors(properties, limits.CUSTOM_PROPERTIES_BYTES, "custom_properties", "they hold")
    return errors


def _bundle_errors(product: Product) -> list[FieldError]:
    errors = []
    bundles = product.bundles or []
    for i, bundle in enumerate(bundles):
        path = f"bundles[{i}]"
        errors += bundle_size_errors(bundle, path)
        if bundle.type != PALLET:
            errors += pallet_bundle_errors(bundle, path, required=False)
            continue
        others = [b for b in bundles if b.type != PALLET]
        wanted = bundle.pallet_bundle
        if wanted is None:
            if len(others) != 1:
                errors.append(FieldError(f"{path}.pallet_bundle", "is required unless exactly one other bundle exists"))
        elif not any(
            b.type == wanted.type and b.size == wanted.size and (wanted.id is None or wanted.id == b.id) for b in others
        ):
            errors.append(FieldError(f"{path}.pallet_bundle", "must match another bundle of the product"))
    return errors


def _select_pallet_bundles(product: Product) -> None:
    """A pallet without pallet_bundle gets the product's only other bundle (interface: automatic selection)."""
    others = [b for b in product.bundles or [] if b.type != PALLET]
    for bundle in product.bundles or []:
        if bundle.type == PALLET and bundle.pallet_bundle is None and len(others) == 1:
            only = others[0]
            bundle.pallet_bundle = PalletBundle(id=only.id, type=only.type, size=only.size)


def deposit_paths(product: Product | dict) -> dict[str, str]:
    """The deposit types a product's packaging names, by the path of the field (decisions §15)."""
    data = dump(product) if isinstance(product, Product) else product
    paths = {}
    if (data.get("vessel") or {}).get("deposit"):
        paths["vessel.deposit"] = data["vessel"]["deposit"]
    for i, bundle in enumerate(data.get("bundles") or ()):
        if bundle.get("deposit"):
            paths[f"bundles[{i}].deposit"] = bundle["deposit"]
    return paths


def deposits_named(data: dict) -> set[str]:
    """The deposit types a product document's packaging names (decisions §15)."""
    return set(deposit_paths(data).values())


NO_CATEGORY = "does not name an existing category"


def check_deposits(data: dict, deposit_types: dict) -> None:
    """Every deposit type the packaging names must exist (ValidationFailed naming each field otherwise)."""
    errors = reference_errors(None, True, deposit_paths(data), deposit_types)
    if errors:
        raise ValidationFailed(errors)


def named_references(data: Any) -> tuple[str | None, dict[str, str]]:
    """The category and the deposit types (by field path) a product body names, read from a body that may have
    failed validation: only ids, where a valid body has them."""
    if not isinstance(data, dict):
        return None, {}
    category = data.get("category") if isinstance(data.get("category"), str) else None
    vessel, bundles = data.get("vessel"), data.get("bundles")
    named = [("vessel.deposit", vessel)] + [
        (f"bundles[{i}].deposit", bundle) for i, bundle in enumerate(bundles if isinstance(bundles, list) else ())
    ]
    deposits = {
        path: part["deposit"] for path, part in named if isinstance(part, dict) and isinstance(part.get("deposit"), str)
    }
    return category, deposits


def reference_errors(
    category: str | None, category_exists: bool, deposits: dict[str, str], deposit_types: dict
) -> list[FieldError]:
    """What a product's references get wrong: a category that does not exist, deposit types the supplier lacks."""
    errors = [] if category is None or category_exists else [FieldError("category", NO_CATEGORY)]
    return errors + [
        FieldError(path, "is not a deposit type of this supplier")
        for path, deposit_id in deposits.items()
        if deposit_id not in deposit_types
    ]


def _rule_errors(product: Product) -> list[FieldError]:
    errors = []
    order_by = product.order_by or DEFAULT_ORDER_BY
    if order_by == OrderBy.KG and product.vessel is not None:
        if not (product.vessel.size == 1 and product.vessel.unit == "kg"):
            errors.append(FieldError("vessel", "must be omitted or size 1 with unit kg when order_by is kg"))
    if product.min_order_count is not None and order_by != OrderBy.KG and not is_whole(product.min_order_count):
        errors.append(FieldError("min_order_count", "must be a whole number unless order_by is kg"))
    if product.pricing is not None:
        errors += pricing_errors(product.pricing, order_by)
        smallest = smallest_positive_from({"pricing": dump(product.pricing)})
        if product.min_order_count is not None and smallest is not None and product.min_order_count != smallest:
            errors.append(FieldError("min_order_count", "must equal the smallest positive 'from' of the price points"))
    errors += _bundle_errors(product)
    if order_by == OrderBy.KG:
        errors += [FieldError(path, "is not allowed when order_by is kg") for path in deposit_paths(product)]
    errors += _custom_property_errors(product.custom_properties or {})
    return errors


# Stand-ins for required fields that failed, so the rules spanning the other fields can still be checked.
_STAND_INS = {"status": ProductStatus.ACTIVE.value, "category": "stand-in", "name": "stand-in"}


def _valid_fields(data: Any, shape_errors: list[FieldError]) -> Product | None:
    """The product made of the top-level fields that passed the shape check, or None if there is none."""
    if not isinstance(data, dict):
        return None
    wrong = {error.path.split(".")[0].split("[")[0] for error in shape_errors}
    try:
        return Product.model_validate({**_STAND_INS, **{k: v for k, v in data.items() if k not in wrong}})
    except ValueError:
        return None


def validate_product(data: Any, product_id: str | None = None) -> dict:
    """The product to store, or ValidationFailed naming every wrong field.

    product_id is the id from the URL; a body id must equal it. Without it (POST) the body must carry one.
    Shape errors and the rules spanning fields are reported together.
    """
    try:
        product, errors = parse(Product, data), []
    except ValidationFailed as failed:
        product, errors = _valid_fields(data, failed.errors), failed.errors
        if product is None:
            raise
    if not any(error.path == "id" for error in errors):
        if product_id is None and product.id is None:
            errors.append(FieldError("id", "Field required"))
        if product_id is not None and product.id is not None and product.id != product_id:
            errors.append(FieldError("id", "must equal the id in the URL"))
    errors += _rule_errors(product)
    if errors:
        raise ValidationFailed(errors)
    _select_pallet_bundles(product)
    stored = dump(product)
    stored["id"] = product_id or product.id
    errors = level_size_errors(stored, "pricing") + limits.size_errors(
        stored, limits.PRODUCT_BYTES, "body", "a product holds"
    )
    if errors:
        raise ValidationFailed(errors)
    return stored


def merge_patch(current: dict, patch: Any) -> dict:
    """PATCH merges top-level fields; null removes one. id cannot be changed."""
    if not isinstance(patch, dict):
        raise ValidationFailed([FieldError("body", "must be a JSON object")])
    if "id" in patch:
        raise ValidationFailed([FieldError("id", "cannot be changed")])
    merged = {k: v for k, v in current.items()}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def vessel_count(count, bundle: dict | None):
    """Vessels in an ordered item: count x bundle size (x pallet bundle size)."""
    if bundle is None:
        return count
    total = count * bundle["size"]
    if bundle.get("pallet_bundle"):
        total *= bundle["pallet_bundle"]["size"]
    return total
