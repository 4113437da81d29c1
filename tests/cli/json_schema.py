"""A small checker for the JSON schemas the README documents (no jsonschema dependency).

Notation (each README schema is itself JSON):
- a leaf is a type name or a `|` union of them: `"int"`, `"number"` (int or float),
  `"string"`, `"bool"`, `"null"`, `"any"`;
- `[S]` is a list whose items all match S; `[S1, S2, ...]` (two or more) a fixed-length tuple;
- `{...}` is an object: every key must be present unless it ends in `?` (optional); keys not
  listed are errors unless the schema has `"...": "any"` (open object);
  `{"*": S}` is a map with any keys whose values match S;
- `{"$one_of": [S1, S2]}` matches if one alternative does;
- `"$name"` refers to `$defs.name` of the top-level schema.
"""

from __future__ import annotations

from typing import Any

_LEAVES = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "any": lambda v: True,
}


def validate(value: Any, schema: Any) -> list[str]:
    """Every way `value` breaks `schema` (empty when it conforms)."""
    defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    top = {k: v for k, v in schema.items() if k != "$defs"} if isinstance(schema, dict) else schema
    errors: list[str] = []
    _check(value, top, "$", defs, errors)
    return errors


def _check(value: Any, schema: Any, path: str, defs: dict, errors: list[str]) -> None:
    if isinstance(schema, str) and schema.startswith("$"):
        if schema[1:] not in defs:
            errors.append(f"{path}: schema refers to unknown {schema}")
            return
        _check(value, defs[schema[1:]], path, defs, errors)
    elif isinstance(schema, str):
        kinds = schema.split("|")
        unknown = [k for k in kinds if k not in _LEAVES]
        if unknown:
            errors.append(f"{path}: schema has unknown type {unknown[0]!r}")
        elif not any(_LEAVES[k](value) for k in kinds):
            errors.append(f"{path}: expected {schema}, got {type(value).__name__} {value!r:.60}")
    elif isinstance(schema, list):
        if not isinstance(value, list):
            errors.append(f"{path}: expected a list, got {type(value).__name__}")
        elif len(schema) == 1:
            for i, item in enumerate(value):
                _check(item, schema[0], f"{path}[{i}]", defs, errors)
        elif len(value) != len(schema):
            errors.append(f"{path}: expected {len(schema)} items, got {len(value)}")
        else:
            for i, (item, sub) in enumerate(zip(value, schema)):
                _check(item, sub, f"{path}[{i}]", defs, errors)
    elif isinstance(schema, dict) and "$one_of" in schema:
        attempts = [validate_with(value, s, path, defs) for s in schema["$one_of"]]
        if all(attempts):
            best = min(attempts, key=len)
            errors.append(f"{path}: matches no alternative; closest: {best[0]}")
    elif isinstance(schema, dict):
        if not isinstance(value, dict):
            errors.append(f"{path}: expected an object, got {type(value).__name__}")
            return
        if "*" in schema:
            for key, item in value.items():
                _check(item, schema["*"], f"{path}.{key}", defs, errors)
            return
        fields = {k.rstrip("?"): (k.endswith("?"), s) for k, s in schema.items() if k != "..."}
        for key, (optional, sub) in fields.items():
            if key in value:
                _check(value[key], sub, f"{path}.{key}", defs, errors)
            elif not optional:
                errors.append(f"{path}: missing key {key!r}")
        if "..." not in schema:
            for key in value:
                if key not in fields:
                    errors.append(f"{path}: key {key!r} is not documented")
    else:
        errors.append(f"{path}: bad schema {schema!r}")


def validate_with(value: Any, schema: Any, path: str, defs: dict) -> list[str]:
    errors: list[str] = []
    _check(value, schema, path, defs, errors)
    return errors
