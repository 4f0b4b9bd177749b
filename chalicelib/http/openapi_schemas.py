"""The JSON schemas of the OpenAPI document (http/openapi.py): pydantic's, made into what integrators' generators
read well (a model used both ways split into two components, responses open to added fields, request fields
without a default optional), and walks over a document's objects.
"""

import copy
import json
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

REF_PREFIX = "#/components/schemas/"


def objects_in(node: Any):
    """Every JSON object in a document, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from objects_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from objects_in(value)


def _refs(node: Any) -> set[str]:
    return {n["$ref"].removeprefix(REF_PREFIX) for n in objects_in(node) if isinstance(n.get("$ref"), str)}


def _reachable(roots: list[dict], definitions: dict) -> set[str]:
    seen: set[str] = set()
    pending = set().union(*(_refs(root) for root in roots)) if roots else set()
    while pending:
        name = pending.pop()
        if name not in seen and name in definitions:
            seen.add(name)
            pending |= _refs(definitions[name])
    return seen


def _rename_refs(node: Any, names: dict[str, str]) -> None:
    for item in objects_in(node):
        ref = item.get("$ref")
        if isinstance(ref, str) and ref.removeprefix(REF_PREFIX) in names:
            item["$ref"] = REF_PREFIX + names[ref.removeprefix(REF_PREFIX)]


def _open(node: Any) -> None:
    """Responses may gain fields (decisions: extra response fields are fine), so their schemas say so."""
    for item in objects_in(node):
        if item.get("additionalProperties") is False:
            del item["additionalProperties"]


def _absent_is_optional(node: Any) -> None:
    """Request bodies: an optional field carries no `default`, so generators type it optional (openapi-typescript
    makes every field with a default required). What absence means is the service's, said in words when not null;
    in a PATCH body absent and null still differ (null stays in the field's type)."""
    for item in objects_in(node):
        properties = item.get("properties")
        if not isinstance(properties, dict) or not all(isinstance(field, dict) for field in properties.values()):
            continue
        required = set(item.get("required", ()))
        for name, field in properties.items():
            if name in required or "default" not in field:
                continue
            default = field.pop("default")
            if default is not None:
                shown = default if isinstance(default, str) else json.dumps(default)
                field["description"] = f"{field.get('description', '')} Absent means `{shown}`.".lstrip()


def schemas(wanted: list[tuple[Any, str]]) -> tuple[dict, dict, dict]:
    """JSON schemas of the models `wanted`, each with its mode: bodies ("validation": strict, as validated,
    optional fields without a default) and responses ("serialization": open to added fields, as rendered).

    A model used both ways gets two components: its own name for the response, `<Name>Input` for the body."""
    inputs = [(key, key[1], TypeAdapter(key[0]).core_schema) for key in wanted]
    by_key, definitions = GenerateJsonSchema(ref_template=REF_PREFIX + "{model}").generate_definitions(inputs)
    bodies_ = {key[0]: schema for (key, mode), schema in by_key.items() if mode == "validation"}
    responses = {key[0]: schema for (key, mode), schema in by_key.items() if mode == "serialization"}
    read = _reachable(list(responses.values()), definitions)
    written = _reachable(list(bodies_.values()), definitions)
    inputs_of = {name: f"{name}Input" for name in read & written}
    for name, input_name in inputs_of.items():
        definitions[input_name] = copy.deepcopy(definitions[name])
        definitions[input_name]["title"] = input_name  # generators name classes by title
    for name in written:
        _rename_refs(definitions[inputs_of.get(name, name)], inputs_of)
        _absent_is_optional(definitions[inputs_of.get(name, name)])
    _rename_refs(list(bodies_.values()), inputs_of)
    _absent_is_optional(list(bodies_.values()))
    for name in read:
        _open(definitions[name])
    _open(list(responses.values()))
    return bodies_, responses, definitions
