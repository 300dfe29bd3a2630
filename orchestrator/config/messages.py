"""Turning pydantic's validation errors into messages a user can act on: file, dotted key, expected type, and the
closest valid key for a misspelt one."""

from __future__ import annotations

import difflib
import json
import types
import typing
from typing import Any, Union

from pydantic import BaseModel, ValidationError

from orchestrator.errors import ConfigProblem

_EXPECTED: dict[str, str] = {
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "decimal_type": "a number",
    "decimal_parsing": "a number",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}

_BOUNDS: dict[str, tuple[str, str]] = {
    "greater_than": ("greater than", "gt"),
    "greater_than_equal": ("at least", "ge"),
    "less_than": ("less than", "lt"),
    "less_than_equal": ("at most", "le"),
}


def show(value: object) -> str:
    """A value as it would be written in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list | tuple):
        return "an array"
    return str(value)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _step(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model an annotation leads to, and whether the next path part is a free dict key."""
    model = _model_of(annotation)
    if model is not None:
        return model, False
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is dict and len(args) == 2:
        return _model_of(args[1]), True
    if origin in (Union, types.UnionType):
        for arg in args:
            found = _step(arg)
            if found[0] is not None:
                return found
    return None, False


def _model_at(root: type[BaseModel], parents: tuple[str, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = root
    skip_next = False
    for part in parents:
        if skip_next:
            skip_next = False
            continue
        if model is None or part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        model, skip_next = _step(annotation)
        if skip_next and model is None:
            return None
    return None if skip_next else model


def leaf_keys(root: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted key the schema knows (free-form tables such as ``prices.families`` as themselves)."""
    keys: list[str] = []
    for name, info in root.model_fields.items():
        model, free = _step(info.annotation)
        if model is not None and not free:
            keys.extend(leaf_keys(model, f"{prefix}{name}."))
        else:
            keys.append(f"{prefix}{name}")
    return keys


def suggest(root: type[BaseModel], loc: tuple[str, ...]) -> str | None:
    """The closest valid key to an unknown one: a sibling first, then any key whose last part is close."""
    *parents, name = loc
    parent = _model_at(root, tuple(parents))
    if parent is not None:
        close = difflib.get_close_matches(name, list(parent.model_fields), n=1, cutoff=0.6)
        if close:
            return ".".join([*parents, close[0]])
    everywhere = leaf_keys(root)
    by_leaf = {key.rsplit(".", 1)[-1]: key for key in everywhere}
    close = difflib.get_close_matches(name, list(by_leaf), n=1, cutoff=0.75)
    if close:
        return by_leaf[close[0]]
    dotted = ".".join(loc)
    close = difflib.get_close_matches(dotted, everywhere, n=1, cutoff=0.6)
    return close[0] if close else None


def _message(root: type[BaseModel], error: Any) -> str:
    kind = error["type"]
    loc = tuple(str(p) for p in error["loc"])
    if kind == "extra_forbidden":
        hint = suggest(root, loc)
        return f"unknown key (did you mean {hint}?)" if hint else "unknown key; docs/reference.md lists the valid keys"
    if kind == "literal_error":
        return f"expected one of {error['ctx']['expected']}, got {show(error['input'])}"
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {show(error['input'])}"
    if kind in _BOUNDS:
        op, limit_key = _BOUNDS[kind]
        limit = error["ctx"][limit_key]
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)
        return f"expected a number {op} {limit}, got {show(error['input'])}"
    if kind == "missing":
        return "missing: a price needs hit, miss and output" if "prices" in loc else "missing"
    if kind == "string_too_short":
        return f"expected a non-empty string, got {show(error['input'])}"
    if kind == "value_error":
        return str(error["ctx"]["error"])
    msg = str(error["msg"])
    return f"expected a value that is {msg.removeprefix('Input should be ')}, got {show(error['input'])}"


def validate_layer(root: type[BaseModel], source: str, data: dict[str, Any]) -> list[ConfigProblem]:
    """The problems of one source on its own, each naming the source and the dotted key."""
    try:
        root.model_validate(data)
    except ValidationError as exc:
        return [
            ConfigProblem(source, ".".join(str(p) for p in e["loc"]) or None, _message(root, e)) for e in exc.errors()
        ]
    return []
