"""A small JSON Schema (draft-07 subset) validator, standard library only.

Covers the keywords schema/mpsbench-results.schema.json uses, so the tests can
validate merged files without jsonschema (CI and the GPU nodes have no pip).
Unknown keywords raise, so the subset cannot silently stop checking.
"""
import json
import re

IGNORED = {"$schema", "$id", "title", "description", "definitions"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[name])


def validate(doc, schema):
    """Returns a list of 'path: problem' strings (empty when valid)."""
    errors = []
    _check(doc, schema, schema, "$", errors)
    return errors


def _check(value, node, root, path, errors):
    if "$ref" in node:
        target = root
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        _check(value, target, root, path, errors)
    for key in node:
        if key not in IGNORED | {"$ref", "type", "required", "properties", "additionalProperties", "const", "enum",
                                 "minimum", "maximum", "exclusiveMinimum", "items", "minItems", "minLength",
                                 "pattern", "oneOf", "allOf", "not", "if", "then", "else"}:
            raise ValueError(f"schema keyword {key} at {path} is not supported by schema_check")
    if "type" in node:
        names = node["type"] if isinstance(node["type"], list) else [node["type"]]
        if not any(_is(value, n) for n in names):
            errors.append(f"{path}: {json.dumps(value)[:60]} is not of type {names}")
            return
    if "const" in node and value != node["const"]:
        errors.append(f"{path}: {value!r} != {node['const']!r}")
    if "enum" in node and value not in node["enum"]:
        errors.append(f"{path}: {value!r} not in {node['enum']}")
    if _is(value, "number"):
        if "minimum" in node and value < node["minimum"]:
            errors.append(f"{path}: {value} < {node['minimum']}")
        if "maximum" in node and value > node["maximum"]:
            errors.append(f"{path}: {value} > {node['maximum']}")
        if "exclusiveMinimum" in node and value <= node["exclusiveMinimum"]:
            errors.append(f"{path}: {value} <= {node['exclusiveMinimum']}")
    if isinstance(value, str):
        if len(value) < node.get("minLength", 0):
            errors.append(f"{path}: shorter than {node['minLength']}")
        if "pattern" in node and not re.search(node["pattern"], value):
            errors.append(f"{path}: {value!r} does not match {node['pattern']}")
    if isinstance(value, list):
        if len(value) < node.get("minItems", 0):
            errors.append(f"{path}: fewer than {node['minItems']} items")
        if "items" in node:
            for i, item in enumerate(value):
                _check(item, node["items"], root, f"{path}[{i}]", errors)
    if isinstance(value, dict):
        for name in node.get("required", []):
            if name not in value:
                errors.append(f"{path}: missing {name}")
        props = node.get("properties", {})
        for name, item in value.items():
            if name in props:
                _check(item, props[name], root, f"{path}.{name}", errors)
            elif node.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected property {name}")
            elif isinstance(node.get("additionalProperties"), dict):
                _check(item, node["additionalProperties"], root, f"{path}.{name}", errors)
    for option in node.get("allOf", []):
        _check(value, option, root, path, errors)
    if "not" in node and not validate_sub(value, node["not"], root):
        errors.append(f"{path}: {json.dumps(value)[:60]} matches what it must not")
    if "oneOf" in node:
        matches = sum(1 for option in node["oneOf"] if not validate_sub(value, option, root))
        if matches != 1:
            errors.append(f"{path}: matches {matches} of the oneOf options, not exactly one")


    if "if" in node:  # draft-07 conditional: a failed result may leave its measurements null
        branch = node.get("then") if not validate_sub(value, node["if"], root) else node.get("else")
        if branch is not None:
            _check(value, branch, root, path, errors)


def validate_sub(value, node, root):
    errors = []
    _check(value, node, root, "$", errors)
    return errors
